// @ts-check
// A stream player's Casting dialog (admins): its receivers (AirPlay, UPnP/DLNA, Squeezelite: the kinds and their names
// as the receivers API lists them) switched on or off, Squeezelite's music server, and how each one runs in words,
// following player.receiverChanged.

import { put } from './api.js';
import { field, openDialog } from './dialogs.js';
import { attr, h, text, uid } from './dom.js';
import { changed, loadReceivers, setReceiver, state, subscribe } from './store.js';

/**
 * How a receiver runs, in words; one switched on that has not come up yet is starting (or says why it stopped). A
 * running AirPlay receiver says which AirPlay it runs.
 */
export function receiverText(r) {
  if (!r.available) return `Not installed — apt-get install --no-install-recommends ${r.package}`;
  if (!r.enabled) return 'Off';
  const why = r.detail ? `: ${r.detail}` : '';
  if (r.phase === 'restarting') return `Restarting${why}`;
  if (r.phase === 'stopped') return r.detail ? `Stopped${why}` : 'Starting…';
  const words = { playing: 'Casting', paused: 'Paused' }[r.cast] ?? 'Ready';
  return r.variant ? `${words} (${r.variant})` : words;
}

/** One receiver (`kind`, named `name`): its switch, its state, and for Squeezelite the music server. */
function receiverRow(player, kind, name, say) {
  const id = uid('receiver');
  const input = h('input', { id, type: 'checkbox', role: 'switch', disabled: true, 'aria-describedby': `${id}-state` });
  const words = h('p', { class: 'tone-reason', id: `${id}-state`, text: 'Loading…' });
  const server =
    kind === 'squeezelite'
      ? field({
          name: 'server',
          label: 'Music server',
          hint: 'Lyrion Music Server or Music Assistant, as host or host:port (lms.lan, 192.168.1.20:9000). Empty: found on the network.',
          maxlength: '259',
          autocomplete: 'off',
          spellcheck: 'false',
        })
      : null;
  const serverInput = server?.querySelector('input');
  const save = server && h('button', { class: 'btn btn-secondary', type: 'button', text: 'Use this server' });
  /** @type {Receiver} */
  let shown = null;
  let busy = false;
  let wanted = false;
  /**
   * Switches it on (with the server typed, for Squeezelite) or off: the switch shows what was asked until the answer,
   * then what the daemon says; a refusal is said and the switch goes back.
   */
  const send = async (enabled) => {
    say(null);
    busy = true;
    wanted = enabled;
    row.update(shown);
    const body = { enabled };
    if (serverInput && enabled) body.server = serverInput.value.trim() || null;
    try {
      setReceiver(player.id, await put(`/api/players/${player.id}/receivers/${kind}`, body));
      changed('receivers');
    } catch (err) {
      say(err);
      // What the refusal was about (a program gone since the dialog opened) shows in the row too.
      await loadReceivers(player.id).catch(() => {
        // The refusal is said already; the rows keep what they show until the next event.
      });
    }
    busy = false;
    row.update(state.receivers.get(player.id)?.find((r) => r.kind === kind) ?? shown);
  };
  input.addEventListener('change', () => send(input.checked));
  save?.addEventListener('click', () => send(true));
  // Enter in the field uses the server (it would otherwise submit, and close, the dialog).
  serverInput?.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    if (shown?.enabled) void send(true);
  });
  const row = h(
    'div',
    { class: 'tone-row receiver', 'data-kind': kind },
    h('label', { for: id, text: name }),
    input,
    words,
    server,
    save,
  );
  row.kind = kind;
  row.update = (r) => {
    if (!r) return;
    // The server field follows the daemon only when its value there changed: what is being typed stays.
    if (serverInput && r.server !== shown?.server) serverInput.value = r.server ?? '';
    shown = r;
    input.checked = busy ? wanted : r.enabled;
    // Switching on needs the program; switching off never does.
    input.disabled = busy || (!r.available && !r.enabled);
    attr(row, 'aria-busy', busy ? 'true' : null);
    text(words, receiverText(r));
    if (save) {
      save.hidden = !r.enabled;
      save.disabled = busy;
    }
  };
  return row;
}

/** The Casting dialog of a stream player: its receivers, switched at once, kept current while it is open. */
export function castingDialog(player) {
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const say = (err) => {
    error.hidden = !err;
    text(error, err ? (err.message ?? String(err)) : '');
  };
  const panel = h('div', { class: 'sound-panel' }, error);
  /** A row per receiver, made from the first list the daemon gave, in its order. */
  let rows = [];
  const render = () => {
    const list = state.receivers.get(player.id) ?? [];
    if (rows.length === 0 && list.length > 0) {
      rows = list.map((r) => receiverRow(player, r.kind, r.name, say));
      error.before(...rows);
    }
    for (const row of rows) row.update(list.find((r) => r.kind === row.kind));
  };
  const stop = subscribe((topics) => topics.has('receivers') && render());
  loadReceivers(player.id).catch(say);
  return openDialog({
    title: `Casting on ${player.name}`,
    description: `Phones, computers and music servers play into ${player.name} through these receivers, found on the network under its name.`,
    content: [panel],
    submitLabel: 'Done',
    cancelLabel: null,
  }).finally(() => {
    stop();
    state.receivers.delete(player.id);
  });
}
