// @ts-check
// The music library beside a playlist: folders to walk through a page at a time, tracks with their tags to add.

import { apiResponse, nextLink, post } from './api.js';
import { announce, attr, duration, h, iconButton, text } from './dom.js';
import { icon } from './icons.js';

const PAGE = 50;

/** `getPlaylist` gives the open playlist; `mutate` queues the add like every other edit of it (see playlists.js). */
export function libraryPanel(getPlaylist, mutate) {
  const crumbs = h('nav', { class: 'lib-crumbs', 'aria-label': 'Library folder' });
  const up = iconButton({
    icon: icon('up'),
    label: 'Up one folder',
    className: 'btn btn-icon btn-quiet lib-up',
    action: 'library-up',
    onClick: () => open(parentOf(folder)),
  });
  const path = h('div', { class: 'lib-path' }, up, crumbs);
  const list = h('ul', { class: 'lib-list', 'aria-label': 'Library entries' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const more = h('button', {
    type: 'button',
    class: 'btn btn-ghost',
    'data-action': 'library-more',
    text: 'Show more',
    hidden: true,
  });
  const box = h(
    'details',
    { class: 'library-box' },
    h('summary', { text: 'Add from the music library' }),
    path,
    error,
    list,
    more,
  );
  const panel = h('section', { class: 'inline-form library', 'aria-label': 'Music library' }, box);
  let folder = null;
  let next = null;
  /** Answers to an older folder's request are dropped: only the folder shown now fills the list. */
  let shown = 0;

  async function load(url, append) {
    const ticket = ++shown;
    more.disabled = true;
    try {
      const { data, headers } = await apiResponse('GET', url);
      if (ticket !== shown) return;
      error.hidden = true;
      if (!append) list.replaceChildren();
      list.append(...data.map(entryRow));
      next = nextLink(headers);
      more.hidden = !next;
      if (!data.length && !append) list.append(h('li', { class: 'muted small', text: 'This folder is empty.' }));
    } catch (err) {
      if (ticket !== shown || err.status === 401) return;
      // 409/503: no stream player can read the library yet; the problem says why (and 404: a folder gone since).
      text(error, err.message);
      error.hidden = false;
    } finally {
      more.disabled = false;
    }
  }

  function open(path) {
    folder = path;
    const parts = path ? path.split('/') : [];
    // Each folder above is a button back to it; the last crumb is the folder shown, marked as the current one.
    const crumb = (label, target) =>
      h('button', { type: 'button', class: 'lib-crumb', text: label, on: { click: () => open(target) } });
    const sep = () => h('span', { class: 'lib-sep', 'aria-hidden': 'true', text: '/' });
    crumbs.replaceChildren(
      crumb('Music', ''),
      ...parts.flatMap((part, i) => [sep(), crumb(part, parts.slice(0, i + 1).join('/'))]),
    );
    attr(crumbs.lastElementChild, 'aria-current', 'location');
    up.disabled = !path;
    attr(up, 'title', path ? `Up to ${parentOf(path) || 'Music'}` : 'This is the top of the music library');
    void load(`/api/library?folder=${encodeURIComponent(path)}&limit=${PAGE}&offset=0`, false);
  }

  function entryRow(entry) {
    if (entry.kind === 'folder') {
      return h(
        'li',
        { class: 'lib-entry' },
        h(
          'button',
          { type: 'button', class: 'lib-folder', on: { click: () => open(entry.uri) } },
          icon('folder'),
          h('span', { text: entry.name }),
        ),
      );
    }
    const title = entry.title ?? entry.name;
    const by = [entry.artist, entry.album].filter(Boolean).join(' · ');
    const add = iconButton({
      icon: icon('plus'),
      label: `Add ${title} to the playlist`,
      className: 'btn btn-icon btn-quiet',
      action: 'library-add',
      onClick: () => addTrack(entry, title),
    });
    return h(
      'li',
      { class: 'lib-entry lib-track' },
      icon('music'),
      h(
        'span',
        { class: 'track-text' },
        h('span', { class: 'track-title', text: title }),
        h('span', { class: 'track-uri', text: by || entry.uri }),
      ),
      h('span', { class: 'track-dur', text: duration(entry.durationMs) }),
      add,
    );
  }

  /** "a/b/c" → "a/b"; a top-level folder's parent is the library's top (""). */
  function parentOf(path) {
    return path ? path.split('/').slice(0, -1).join('/') : '';
  }

  async function addTrack(entry, title) {
    const playlist = getPlaylist();
    const track = { title, uri: entry.uri, ...(entry.durationMs === null ? {} : { durationMs: entry.durationMs }) };
    if (await mutate(playlist, null, () => post(`/api/playlists/${playlist.id}/tracks`, { tracks: [track] })))
      announce(`Added ${title} to ${playlist.name}`);
  }

  box.addEventListener('toggle', () => box.open && folder === null && open(''));
  more.addEventListener('click', () => next && load(next, true));
  panel.update = () => {
    // The panel loads its folders when opened: nothing from the state to show.
  };
  return panel;
}
