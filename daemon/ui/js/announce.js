// @ts-check
// Announcements: a sound played on some zones through a stream player, then everything put back. The dialog that
// sends one, with a picker of the music folder's files, and the line that follows it (queued, playing, done) from the
// answer and the announcement.* events.

import { apiResponse, post } from './api.js';
import { checkedValues, field, openDialog } from './dialogs.js';
import { attr, count, h, text, uid } from './dom.js';
import { icon } from './icons.js';
import { problemText } from './problem-text.js';
import { changed, sorted, state } from './store.js';

const STATUS_TEXT = {
  queued: 'waits its turn',
  playing: 'is playing',
  done: 'played; everything is back',
  failed: 'failed',
  cancelled: 'was cancelled',
};
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
          return h(
            'div',
            { class: 'check' },
            h('input', { id, type: 'checkbox', name: 'zoneIds', value: z.id }),
            h('label', { for: id, text: z.name }),
          );
        })
      : h('p', { class: 'muted small', text: 'No zone can answer now.' }),
  );
}

/** The most entries a folder lists in the picker (the API's largest page); the sound field takes any other name. */
const PICKER_LIMIT = 200;

/**
 * The music folder (GET /api/library): a folder opens, a file fills `input`. Opened by its summary, or by the dialog
 * when the appliance refused the sound typed.
 */
function soundPicker(input) {
  const where = h('p', { class: 'lib-crumbs small' });
  const up = h('button', { type: 'button', class: 'btn btn-ghost btn-small', text: 'Up one folder', hidden: true });
  const list = h('ul', { class: 'lib-list', 'aria-label': 'Sounds in the music folder' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const box = h(
    'details',
    { class: 'library-box sound-picker' },
    h('summary', { text: 'Choose from the music library' }),
    where,
    up,
    error,
    list,
  );
  let folder = null;

  const button = (name, label, onClick) =>
    h(
      'li',
      { class: 'lib-entry' },
      h(
        'button',
        { type: 'button', class: 'lib-folder', on: { click: onClick } },
        icon(name),
        h('span', { text: label }),
      ),
    );
  const pick = (uri) => {
    input.value = uri;
    attr(input, 'aria-invalid', null);
    box.open = false;
    input.focus();
  };

  /** Only the folder asked for last fills the list (an older answer is dropped). */
  async function open(path) {
    folder = path;
    text(where, ['Music', ...(path ? path.split('/') : [])].join(' / '));
    up.hidden = !path;
    try {
      const { data, headers } = await apiResponse(
        'GET',
        `/api/library?folder=${encodeURIComponent(path)}&limit=${PICKER_LIMIT}&offset=0`,
      );
      if (folder !== path) return;
      error.hidden = true;
      list.replaceChildren(
        ...data.map((e) =>
          e.kind === 'folder'
            ? button('folder', e.name, () => open(e.uri))
            : button('music', e.name, () => pick(e.uri)),
        ),
      );
      const rest = Number(headers.get('x-total-count')) - data.length;
      if (!data.length || rest > 0)
        list.append(
          h('li', {
            class: 'muted small',
            text: data.length
              ? `${count(rest, 'more entry', 'more entries')}: type the name above.`
              : 'This folder is empty.',
          }),
        );
    } catch (err) {
      if (folder !== path || err.status === 401) return;
      text(error, err.message);
      error.hidden = false;
    }
  }

  box.addEventListener('toggle', () => box.open && folder === null && open(''));
  up.addEventListener('click', () => open(folder.split('/').slice(0, -1).join('/')));
  box.show = () => (box.open = true);
  return box;
}

/** A refusal that is about the sound: the field says so and the picker opens (the other choices stay as they were). */
const aboutSound = (err) =>
  err?.status === 400 && (Boolean(err.problem?.errors?.uri) || /^"uri"/.test(err.problem?.detail ?? ''));

/** Opens the dialog; the announcement it queued becomes the one the status line follows. */
export function announceDialog(status) {
  const uri = field({
    name: 'uri',
    label: 'Sound (URI)',
    required: true,
    maxlength: '2048',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'file:chimes/door.flac',
    hint: 'A file in the music folder (file:…, or choose it below) or an http(s) address.',
  });
  const input = uri.querySelector('input');
  const picker = soundPicker(input);
  return openDialog({
    title: 'Announce',
    description:
      'Plays a sound on the chosen zones, then puts their power, source, volume and mute back, and what the player played.',
    content: [
      uri,
      picker,
      zoneChecks(),
      field({
        name: 'volume',
        label: 'Volume (%)',
        type: 'number',
        min: '0',
        max: '100',
        step: '1',
        value: String(DEFAULT_PERCENT),
        required: true,
      }),
    ],
    submitLabel: 'Announce',
    wide: true,
    onSubmit: async (form) => {
      const zoneIds = checkedValues(form, 'zoneIds');
      if (!zoneIds.length) throw new Error('Choose at least one zone.');
      let announcement;
      try {
        announcement = await post('/api/announcements', {
          uri: form.elements.uri.value.trim(),
          zoneIds,
          volume: Number(form.elements.volume.value) / 100,
        });
      } catch (err) {
        if (!aboutSound(err)) throw err;
        attr(input, 'aria-invalid', 'true');
        picker.show();
        throw new Error(problemText(err.problem, { uri: 'The sound' }) ?? err.message);
      }
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
    const parts = [
      `Announcement on ${count(a.zoneIds.length, 'zone')} ${STATUS_TEXT[a.status]}${a.detail ? `: ${a.detail}` : ''}.`,
    ];
    if (a.skipped.length) parts.push(`Not played on ${reasons(a.skipped)}.`);
    if (a.kept.length) parts.push(`Left as changed: ${reasons(a.kept)}.`);
    text(line, parts.join(' '));
  };
  return line;
}
