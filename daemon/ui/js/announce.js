// Announcements: a sound played on some zones through a stream player, then everything put back. The dialog that
// sends one, and the line that follows it (queued, playing, done) from the answer and the announcement.* events.
import { h, text, uid, count } from './dom.js';
import { post } from './api.js';
import { state, changed, sorted } from './store.js';
import { openDialog, field } from './dialogs.js';

const STATUS_TEXT = { queued: 'waits its turn', playing: 'is playing', done: 'played; everything is back', failed: 'failed', cancelled: 'was cancelled' };
const DEFAULT_PERCENT = 40;

/** Only zones that can answer are offered: the daemon would skip the others anyway. */
function zoneChecks() {
  const zones = sorted.zones().filter((z) => z.available);
  return h(
    'fieldset',
    { class: 'check-group' },
    h('legend', { text: 'Zones' }),
    zones.length
      ? zones.map((z) => {
          const id = uid('announce-zone');
          return h('div', { class: 'check' }, h('input', { id, type: 'checkbox', name: 'zoneIds', value: z.id }), h('label', { for: id, text: z.name }));
        })
      : h('p', { class: 'muted small', text: 'No zone can answer now.' }),
  );
}

/** Opens the dialog; the announcement it queued becomes the one the status line follows. */
export function announceDialog(status) {
  return openDialog({
    title: 'Announce',
    description: 'Plays a sound on the chosen zones, then puts their power, source, volume and mute back, and what the player played.',
    content: [
      field({ name: 'uri', label: 'Sound (URI)', required: true, maxlength: '2048', autocomplete: 'off', spellcheck: 'false', placeholder: 'file:chimes/door.flac', hint: 'A file in the music folder (file:…) or an http(s) address.' }),
      zoneChecks(),
      field({ name: 'volume', label: 'Volume (%)', type: 'number', min: '0', max: '100', step: '1', value: String(DEFAULT_PERCENT), required: true }),
    ],
    submitLabel: 'Announce',
    wide: true,
    onSubmit: async (form) => {
      const zoneIds = [...form.querySelectorAll('input[name="zoneIds"]:checked')].map((el) => el.value);
      if (!zoneIds.length) throw new Error('Choose at least one zone.');
      const announcement = await post('/api/announcements', { uri: form.elements.uri.value.trim(), zoneIds, volume: Number(form.elements.volume.value) / 100 });
      // An event about it may have come first: keep whichever is further along.
      if (!state.announcements.has(announcement.id)) state.announcements.set(announcement.id, announcement);
      status.follow(announcement.id);
      changed('announcements');
      return announcement;
    },
  });
}

const zoneName = (id) => state.zones.get(id)?.name ?? 'a zone';
const reasons = (list) => list.map((z) => `${zoneName(z.zoneId)} (${z.reason})`).join(', ');

/** The line under the view's head about the last announcement sent from this page (hidden before the first). */
export function announcementStatus() {
  const line = h('p', { class: 'announce-status', role: 'status', hidden: true });
  let followed = null;
  line.follow = (id) => (followed = id);
  line.update = () => {
    const a = state.announcements.get(followed);
    line.hidden = !a;
    if (!a) return;
    line.dataset.status = a.status;
    const parts = [`Announcement on ${count(a.zoneIds.length, 'zone')} ${STATUS_TEXT[a.status]}${a.detail ? `: ${a.detail}` : ''}.`];
    if (a.skipped.length) parts.push(`Not played on ${reasons(a.skipped)}.`);
    if (a.kept.length) parts.push(`Left as changed: ${reasons(a.kept)}.`);
    text(line, parts.join(' '));
  };
  return line;
}
