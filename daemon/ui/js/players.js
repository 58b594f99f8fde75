// @ts-check
// The Players view: every player with its zones — group and zone volume, routing, mute and power, live.

import { announceDialog, announcementStatus } from './announce.js';
import { del, get, post, put } from './api.js';
import { castingDialog } from './casting.js';
import { confirmDialog, field, openDialog } from './dialogs.js';
import { announce, attempt, attr, h, iconButton, reconcile, showReason, text, toast } from './dom.js';
import { icon } from './icons.js';
import { nowPlaying, playbackState, stateText } from './now-playing.js';
import { scenesSection } from './scenes.js';
import { statusBadges } from './sound.js';
import { can, sorted, state } from './store.js';
import { volumeControl } from './volume.js';
import { allOff, editZone, sleepButton, sleepText, soundButton, tickWhileSleeping } from './zone-settings.js';

const reportError = (err) => attempt(() => Promise.reject(err));

export function playersView(section) {
  // Only Admins create players and zones; Viewers change nothing, so they get no buttons at all.
  const status = announcementStatus();
  const off = can.change()
    ? iconButton({
        icon: icon('power'),
        visibleLabel: 'All off',
        className: 'btn btn-secondary',
        action: 'all-off',
        onClick: () => allOff(off),
      })
    : null;
  const tools = can.change()
    ? h(
        'div',
        { class: 'view-actions' },
        off,
        iconButton({
          icon: icon('megaphone'),
          visibleLabel: 'Announce',
          className: 'btn btn-secondary',
          action: 'announce',
          onClick: () => announceDialog(status),
        }),
        can.admin()
          ? iconButton({
              icon: icon('plus'),
              visibleLabel: 'New zone',
              className: 'btn btn-secondary',
              action: 'new-zone',
              onClick: createZone,
            })
          : null,
        can.admin()
          ? iconButton({
              icon: icon('plus'),
              visibleLabel: 'New player',
              className: 'btn btn-primary',
              action: 'new-player',
              onClick: createPlayer,
            })
          : null,
      )
    : null;
  const head = h(
    'div',
    { class: 'view-head' },
    h(
      'div',
      {},
      h('h1', { class: 'view-title', id: 'h-players', text: 'Players' }),
      h('p', { class: 'view-sub', text: 'Sources on the amplifier and the rooms they play in.' }),
    ),
    tools,
  );
  const grid = h('div', { class: 'card-grid' });
  const empty = h('div', { class: 'empty-state', hidden: true });
  const freeList = h('ul', { class: 'card-grid free-grid', 'aria-labelledby': 'h-free-zones' });
  const free = h(
    'section',
    { class: 'free-zones', hidden: true },
    h('h2', { class: 'section-title', id: 'h-free-zones', text: 'Zones without a player' }),
    freeList,
  );
  const scenes = scenesSection();
  section.append(head, status, h('p', { class: 'loading', text: 'Loading players…' }), scenes, grid, empty, free);
  const view = {
    render() {
      tick();
      status.update();
      section.querySelector('.loading').hidden = state.loaded.audio;
      scenes.hidden = !state.loaded.scenes || !state.loaded.audio;
      if (!state.loaded.audio) return;
      if (state.loaded.scenes) scenes.update();
      const players = sorted.players();
      reconcile(grid, players, (p) => p.id, playerCard);
      const unattached = sorted.zones().filter((z) => !z.playerId || !state.players.has(z.playerId));
      reconcile(
        freeList,
        unattached,
        (z) => z.id,
        (z) => zoneRow(z, null, 'zone-row card zone-card'),
      );
      free.hidden = unattached.length === 0;
      empty.hidden = players.length > 0;
      if (players.length === 0) renderEmpty(empty);
    },
  };
  const tick = tickWhileSleeping(
    () => state.zones.values(),
    () => view.render(),
  );
  return view;
}

function renderEmpty(el) {
  const admin = can.admin();
  el.replaceChildren(
    icon('speaker', 'icon empty-icon'),
    h('h2', { text: admin ? 'No players yet' : 'Nothing assigned to you yet' }),
    h('p', {
      text: admin
        ? 'A player is a source wired to an amplifier input, such as a streamer. Create one, then add the zones it should play in.'
        : 'Ask an administrator to assign you players and zones.',
    }),
  );
}

function playerCard(player) {
  const title = h('h2', { class: 'card-title' });
  const meta = h('p', { class: 'card-meta' });
  const reason = h('p', { class: 'unavailable-reason', hidden: true });
  const badge = h('span', { class: 'badge' });
  const rename = can.admin()
    ? iconButton({
        icon: icon('pencil'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'rename-player',
        onClick: () => renameThing('player', card.player),
      })
    : null;
  // Its receivers are an admin's setting, as its name is; the card's now-playing line says when one casts.
  const casting =
    can.admin() && player.output
      ? iconButton({
          icon: icon('cast'),
          label: '',
          className: 'btn btn-icon btn-quiet',
          action: 'casting',
          onClick: () => castingDialog(card.player),
        })
      : null;
  const remove = can.admin()
    ? iconButton({
        icon: icon('trash'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'delete-player',
        onClick: () => deletePlayer(card.player),
      })
    : null;
  const volume = volumeControl({
    label: '',
    readOnly: !can.change(),
    send: (v) => put(`/api/players/${card.player.id}/volume`, { volume: v }),
    nudge: (delta) => put(`/api/players/${card.player.id}/volume`, { delta }),
    onError: reportError,
  });
  // The group volume is the average of the zones; their own volumes are listed beside it.
  const parts = h('p', { class: 'group-parts' });
  const zones = h('ul', { class: 'zone-list' });
  const noZones = h('p', {
    class: 'muted small no-zones',
    text: 'No rooms attached: add a zone below to start playing.',
  });
  const group = h('div', { class: 'group-volume' }, h('span', { class: 'label', text: 'Group volume' }), volume, parts);
  const attach = can.change() ? attachPicker(() => card.player) : null;
  // A stream player (one the appliance plays itself) shows what it plays; its output never changes.
  const np = player.output ? nowPlaying(() => card.player) : null;
  // Play on an empty queue has nothing to start (the daemon answers "stopped" and nothing happens): say what to do.
  np?.addEventListener('click', (event) => {
    if (!event.target.closest('[data-action="resume"]')) return;
    const playback = state.playback.get(card.player.id);
    if (playback && playback.state === 'stopped' && playback.queueLength === 0) {
      toast(
        `Nothing to play on ${card.player.name}: its queue is empty. Open Playlists and play a playlist on it first.`,
      );
    }
  });
  const card = h(
    'article',
    { class: 'card player-card' },
    h(
      'header',
      { class: 'card-head' },
      h('div', { class: 'card-head-text' }, title, meta),
      badge,
      casting,
      rename,
      remove,
    ),
    reason,
    np,
    group,
    h('h3', { class: 'subhead', text: 'Zones' }),
    zones,
    noZones,
    attach,
  );
  card.update = (p) => {
    card.player = p;
    text(title, p.name);
    text(meta, `Input ${p.input.channel}${p.output ? ' · stream player' : ''}`);
    const attached = p.zoneIds.map((id) => state.zones.get(id)).filter(Boolean);
    const stream = np ? playbackState(p.id) : null;
    const live = attached.filter((z) => z.power && !z.muted);
    // Zones on and unmuted at 0% let nothing through: "Playing" would promise sound that is not there.
    const silent = live.length > 0 && live.every((z) => z.volume === 0);
    const playing = p.available && (stream ? stream === 'playing' : live.length > 0 && !silent);
    text(
      badge,
      p.available ? (stream ? stateText(stream) : playing ? 'Playing' : silent ? 'Silent' : 'Idle') : 'Unavailable',
    );
    attr(
      badge,
      'title',
      p.available && !stream && silent ? `Its zones are on at volume 0%: raise the volume to hear ${p.name}` : null,
    );
    np?.update(p);
    badge.className = ['badge', playing ? 'badge-live' : '', p.available ? '' : 'badge-unavailable']
      .filter(Boolean)
      .join(' ');
    card.classList.toggle('is-unavailable', !p.available);
    showReason(reason, p);
    if (remove) {
      attr(remove, 'aria-label', `Delete player ${p.name}`);
      attr(remove, 'title', `Delete player ${p.name}`);
      attr(rename, 'aria-label', `Rename player ${p.name}`);
      attr(rename, 'title', `Rename player ${p.name}`);
    }
    if (casting) {
      attr(casting, 'aria-label', `Casting on ${p.name}`);
      attr(casting, 'title', `Casting on ${p.name}: the receivers phones and music servers play into`);
    }
    volume.setLabel(`${p.name} group volume`);
    // The zones listed are the ones this user may see, and so is the average beside them (as the API counts it).
    volume.setValue(attached.length ? attached.reduce((sum, z) => sum + z.volume, 0) / attached.length : p.volume);
    // The daemon refuses (409) a group change that no zone could take: the slider says so before anyone tries.
    volume.setDisabled(!p.available || (attached.length > 0 && attached.every((z) => !z.available)));
    text(
      parts,
      attached.length ? `Average of ${attached.map((z) => `${z.name} ${Math.round(z.volume * 100)}%`).join(', ')}` : '',
    );
    reconcile(
      zones,
      attached,
      (z) => z.id,
      (z) => zoneRow(z, p.id),
    );
    // Without a zone there is nothing for a group volume to move: the slider goes, the line below says why.
    group.hidden = attached.length === 0;
    noZones.hidden = attached.length > 0;
    if (attach) attach.hidden = !p.available;
    if (p.available) attach?.update();
  };
  return card;
}

function zoneRow(_zone, ownerId, className = 'zone-row') {
  const name = h('span', { class: 'zone-name' });
  const sub = h('span', { class: 'zone-sub' });
  const reason = h('span', { class: 'unavailable-reason', hidden: true });
  const writable = can.change();
  const power = writable
    ? iconButton({
        icon: icon('power'),
        label: '',
        className: 'btn btn-toggle btn-power',
        action: 'power',
        onClick: () => toggle('power'),
      })
    : null;
  const mute = writable
    ? iconButton({
        icon: icon('mute'),
        label: '',
        className: 'btn btn-toggle btn-mute',
        action: 'mute',
        onClick: () => toggle('muted'),
      })
    : null;
  const detach =
    writable && ownerId
      ? iconButton({
          icon: icon('unlink'),
          label: '',
          className: 'btn btn-icon btn-quiet',
          action: 'detach',
          onClick: () => detachZone(ownerId, row.zone),
        })
      : null;
  const rename = can.admin()
    ? iconButton({
        icon: icon('pencil'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'edit-zone',
        onClick: () => editZone(row.zone),
      })
    : null;
  const sleep = writable ? sleepButton() : null;
  const sound = soundButton();
  const flags = statusBadges();
  // Free zones can be deleted; so can a zone that cannot answer (its unit or amplifier gone for good), wherever it is.
  const remove = can.admin()
    ? iconButton({
        icon: icon('trash'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'delete-zone',
        onClick: () => deleteZone(row.zone),
      })
    : null;
  const chips = writable ? null : h('span', { class: 'chips' });
  const volume = volumeControl({
    label: '',
    readOnly: !writable,
    send: (v) => put(`/api/zones/${row.zone.id}/volume`, { volume: v }),
    onError: reportError,
  });
  const row = h(
    'li',
    { class: className },
    h(
      'div',
      { class: 'zone-top' },
      h('div', { class: 'zone-label' }, name, sub, flags, reason),
      h('div', { class: 'zone-actions' }, chips, power, mute, sleep, sound, rename, detach, remove),
    ),
    volume,
  );

  /** Optimistic: the button flips at once and flips back if the API refuses. */
  async function toggle(prop) {
    const zone = state.zones.get(row.zone.id) ?? row.zone;
    const next = !zone[prop];
    zone[prop] = next;
    row.update(zone);
    const path = prop === 'muted' ? `/api/zones/${zone.id}/mute` : `/api/zones/${zone.id}/power`;
    const ok = await attempt(() => put(path, prop === 'muted' ? { muted: next } : { power: next }));
    if (!ok && state.zones.get(zone.id) === zone) {
      zone[prop] = !next;
      row.update(zone);
    }
  }

  row.update = (z) => {
    row.zone = z;
    text(name, z.name);
    const limit = (z.maxVolume ?? 1) < 1 ? ` · limit ${Math.round(z.maxVolume * 100)}%` : '';
    const sleeping = sleepText(z);
    const silent = z.power && !z.muted && z.volume === 0 ? ' · silent at 0%' : '';
    text(
      sub,
      `Output ${z.output.channel}${z.power ? '' : ' · off'}${z.muted ? ' · muted' : ''}${silent}${limit}${sleeping ? ` · ${sleeping}` : ''}`,
    );
    sleep?.update(z);
    sound.update(z);
    flags.update(z);
    row.classList.toggle('is-off', !z.power);
    row.classList.toggle('is-muted', z.muted);
    row.classList.toggle('is-unavailable', !z.available);
    showReason(reason, z);
    // Every control that would reach the amplifier waits until the zone can answer again (the daemon says 409).
    for (const control of [power, mute, detach]) if (control) control.disabled = !z.available;
    volume.setDisabled(!z.available);
    if (power) {
      attr(power, 'aria-pressed', String(z.power));
      attr(power, 'aria-label', `Power ${z.name}`);
      attr(power, 'title', z.power ? `Switch ${z.name} off` : `Switch ${z.name} on`);
    }
    if (mute) {
      // The icon shows the current state: a speaker while sound plays, a crossed speaker once muted.
      if (mute.dataset.state !== String(z.muted)) {
        mute.dataset.state = String(z.muted);
        mute.replaceChildren(icon(z.muted ? 'mute' : 'volume'));
      }
      attr(mute, 'aria-pressed', String(z.muted));
      attr(mute, 'aria-label', `Mute ${z.name}`);
      attr(mute, 'title', z.muted ? `Unmute ${z.name}` : `Mute ${z.name}`);
    }
    if (detach) {
      const player = state.players.get(ownerId);
      const label = `Remove ${z.name} from ${player?.name ?? 'this player'}`;
      attr(detach, 'aria-label', label);
      attr(detach, 'title', label);
    }
    if (remove) {
      remove.hidden = Boolean(ownerId) && z.available;
      attr(remove, 'aria-label', `Delete zone ${z.name}`);
      attr(remove, 'title', `Delete zone ${z.name}`);
    }
    if (rename) {
      attr(rename, 'aria-label', `Edit zone ${z.name}`);
      attr(rename, 'title', `Edit zone ${z.name}: name and volume limits`);
    }
    if (chips) {
      const onOff = h('span', { class: `chip ${z.power ? 'chip-on' : ''}`, text: z.power ? 'On' : 'Off' });
      chips.replaceChildren(onOff, ...(z.muted ? [h('span', { class: 'chip chip-warn', text: 'Muted' })] : []));
    }
    volume.setLabel(`${z.name} volume`);
    volume.setLimit(z.maxVolume ?? 1);
    volume.setValue(z.volume);
  };
  return row;
}

/** A zone picker per player: zones attached elsewhere move here (the API's attach semantics). */
function attachPicker(currentPlayer) {
  const select = h('select', { class: 'select', 'data-action': 'attach-select' });
  const label = h('label', { class: 'sr-only' });
  const button = iconButton({
    icon: icon('plus'),
    visibleLabel: 'Add zone',
    className: 'btn btn-secondary',
    action: 'attach',
    type: 'submit',
  });
  const form = h('form', { class: 'attach' }, label, select, button);
  let signature = '';
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const player = currentPlayer();
    const zoneId = select.value;
    if (!zoneId) return;
    button.disabled = true;
    const zone = state.zones.get(zoneId);
    if (await attempt(() => post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zoneId] }))) {
      announce(`${zone?.name ?? 'Zone'} now plays ${player.name}`);
    }
    button.disabled = false;
  });
  form.update = () => {
    const player = currentPlayer();
    const id = `attach-${player.id}`;
    select.id = id;
    label.htmlFor = id;
    text(label, `Zone to add to ${player.name}`);
    button.setAttribute('aria-label', `Add the chosen zone to ${player.name}`);
    const options = sorted.zones().filter((z) => z.available && !player.zoneIds.includes(z.id));
    const next = options.map((z) => `${z.id}:${z.name}:${z.playerId}`).join('|');
    form.hidden = options.length === 0;
    if (next === signature) return;
    signature = next;
    const keep = select.value;
    // Group by where the zone plays now: free zones first, then one group per player it would move from.
    const groups = new Map();
    for (const z of options) {
      const owner = z.playerId && state.players.get(z.playerId);
      const group = owner ? `Move from ${owner.name}` : 'Not playing';
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(h('option', { value: z.id, text: z.name }));
    }
    const ordered = [...groups].sort(([a], [b]) =>
      a === 'Not playing' ? -1 : b === 'Not playing' ? 1 : a.localeCompare(b),
    );
    select.replaceChildren(...ordered.map(([group, items]) => h('optgroup', { label: group }, items)));
    if (options.some((z) => z.id === keep)) select.value = keep;
  };
  return form;
}

async function detachZone(playerId, zone) {
  const player = state.players.get(playerId);
  if (await attempt(() => post(`/api/players/${playerId}/detach-zones`, { zoneIds: [zone.id] }))) {
    announce(`${zone.name} removed from ${player?.name ?? 'the player'}`);
  }
}

async function deletePlayer(player) {
  await confirmDialog({
    title: `Delete ${player.name}?`,
    message: player.available
      ? 'Its zones are detached and muted. Users assigned to this player lose access to it.'
      : `The player cannot be used (${player.unavailableReason}). Delete it if that amplifier is gone for good: its zones are detached and users assigned to it lose it.`,
    confirmLabel: 'Delete player',
    danger: true,
    onConfirm: () => del(`/api/players/${player.id}`),
  });
}

async function deleteZone(zone) {
  await confirmDialog({
    title: `Delete ${zone.name}?`,
    message: zone.available
      ? 'The zone is removed from the dashboard and from every assignment. It is not recreated at the next start.'
      : `The zone cannot answer (${zone.unavailableReason}). Delete it if it is gone for good: it is removed from every assignment and scene, and not recreated at the next start.`,
    confirmLabel: 'Delete zone',
    danger: true,
    onConfirm: () => del(`/api/zones/${zone.id}`),
  });
}

/** Admins rename players (PUT /api/players/{id}); the update event refreshes every page. Zones: editZone. */
function renameThing(kind, thing) {
  void openDialog({
    title: `Rename ${thing.name}`,
    content: [
      field({
        name: 'name',
        label: `New name of the ${kind}`,
        value: thing.name,
        required: true,
        maxlength: '100',
        autocomplete: 'off',
      }),
    ],
    submitLabel: 'Rename',
    onSubmit: (form) => put(`/api/${kind}s/${thing.id}`, { name: form.elements.name.value.trim() }),
  });
}

function createPlayer() {
  const used = new Set([...state.players.values()].map((p) => p.input.channel));
  const inputs = sorted.inputs().filter((i) => !used.has(i.input.channel));
  const options = inputs.map((i) => ({ value: String(i.input.channel), label: inputLabel(i) }));
  const target = field({
    name: 'target',
    label: 'ALSA device or FIFO path',
    maxlength: '1024',
    autocomplete: 'off',
    hint: TARGET_HINTS.alsa,
  });
  const plays = field({ name: 'plays', label: 'What plays into it', options: PLAYS, value: '' });
  // Only a stream player has an output: for a device wired to the input the field is not asked for at all.
  const showTarget = () => {
    const kind = plays.querySelector('select').value;
    const input = target.querySelector('input');
    target.hidden = kind !== 'alsa' && kind !== 'fifo';
    input.disabled = target.hidden;
    target.querySelector('.hint').textContent = TARGET_HINTS[kind] ?? '';
  };
  plays.querySelector('select').addEventListener('change', showTarget);
  showTarget();
  return openDialog({
    title: 'New player',
    description:
      'A player is a source wired to one amplifier input: a device (a streamer, a DAC), or an audio output of this appliance that it plays itself (a stream player, played by MPD).',
    content: [
      field({ name: 'name', label: 'Name', required: true, maxlength: '100', autocomplete: 'off' }),
      options.length
        ? field({ name: 'channel', label: 'Amplifier input', options, value: options[0].value })
        : field({
            name: 'channel',
            label: 'Amplifier input (number)',
            type: 'number',
            min: '1',
            max: '99',
            required: true,
          }),
      plays,
      target,
    ],
    submitLabel: 'Create player',
    onSubmit: async (form) => {
      const player = await post('/api/players', playerBody(form.elements));
      toast(
        `Player ${player.name} created on input ${player.input.channel}. Add a zone to it to start playing.`,
        'success',
      );
      return player;
    },
  });
}

const TARGET_HINTS = {
  alsa: 'The device as aplay -L names it; leave empty for the default sound card.',
  fifo: 'The absolute path of the FIFO, for example /run/snapfifo.',
};

/** "Input 3 · TV"; an input still called by its default name is "Input 3" once, not "Input 3 · Input 3". */
export function inputLabel(input) {
  const number = `Input ${input.input.channel}`;
  return input.name.trim().toLowerCase() === number.toLowerCase() ? number : `${number} · ${input.name}`;
}

/** What plays into a new player's input: a device wired to it, or one of this appliance's audio outputs. */
const PLAYS = [
  { value: '', label: 'A device wired to the input' },
  { value: 'alsa', label: 'This appliance, through a sound card (ALSA)' },
  { value: 'fifo', label: 'This appliance, into a FIFO (for another program)' },
  { value: 'null', label: 'This appliance, into no output (a test)' },
];

/** POST /api/players from the dialog: an output only for a stream player; the server checks the rest. */
function playerBody(elements) {
  const body = { name: elements.name.value.trim(), input: { channel: Number(elements.channel.value) } };
  const kind = elements.plays.value;
  const target = elements.target.disabled ? '' : elements.target.value.trim();
  if (kind === 'alsa') body.output = target ? { kind, device: target } : { kind };
  else if (kind === 'fifo') body.output = { kind, path: target };
  else if (kind === 'null') body.output = { kind };
  return body;
}

/** A new zone takes an output that has none: the dialog offers those (GET /api/zones/free-outputs), or says there is none. */
async function createZone() {
  /** @type {any[]} */
  let free;
  if (!(await attempt(async () => (free = await get('/api/zones/free-outputs'))))) return null;
  if (free.length === 0) {
    return openDialog({
      title: 'New zone',
      description:
        'Every amplifier output already has a zone. Delete a zone you no longer use (it must not play a player) to free its output.',
      submitLabel: 'Close',
      cancelLabel: null,
    });
  }
  const several = new Set(free.map((o) => o.amplifier)).size > 1;
  const options = free.map((o, i) => ({
    value: String(i),
    label: several ? `${o.amplifier}: output ${o.channel}` : `Output ${o.channel}`,
  }));
  return openDialog({
    title: 'New zone',
    description: 'A zone is one amplifier output (the speakers of one room). The outputs listed have no zone yet.',
    content: [
      field({ name: 'name', label: 'Name', required: true, maxlength: '100', autocomplete: 'off' }),
      field({ name: 'channel', label: 'Amplifier output', options, value: options[0].value }),
    ],
    submitLabel: 'Create zone',
    onSubmit: async (form) => {
      const output = free[Number(form.elements.channel.value)];
      const zone = await post('/api/zones', {
        name: form.elements.name.value.trim(),
        output: { ...(several ? { amplifier: output.amplifier } : {}), channel: output.channel },
      });
      toast(`Zone ${zone.name} created on output ${zone.output.channel}.`, 'success');
      return zone;
    },
  });
}
