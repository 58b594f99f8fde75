// @ts-check
// A playlist's track list: HTML5 drag and drop plus keyboard move up/down buttons, and removal.

import { del, post } from './api.js';
import { announce, attr, duration, h, iconButton, reconcile, text } from './dom.js';
import { icon } from './icons.js';
import { can } from './store.js';

/**
 * The permutation the API wants: newOrder[i] is the current index of the track that moves to position i.
 * Moving `from` to `to` (final positions) shifts the tracks in between by one.
 */
export function moveOrder(length, from, to) {
  const order = Array.from({ length }, (_, i) => i);
  const [moved] = order.splice(from, 1);
  order.splice(to, 0, moved);
  return order;
}

export function trackList({ getPlaylist, mutate }) {
  const writable = can.change();
  const list = h('ol', { class: 'tracks', 'aria-label': 'Tracks' });
  const empty = h('p', {
    class: 'muted empty-inline',
    text: writable ? 'No tracks yet. Add the first one below.' : 'No tracks yet.',
  });
  const wrap = h('div', { class: 'tracks-wrap' }, list, empty);
  let dragFrom = null;

  function move(from, to, focusAction) {
    const playlist = getPlaylist();
    if (from === to || to < 0 || to >= playlist.tracks.length) return;
    const order = moveOrder(playlist.tracks.length, from, to);
    const track = playlist.tracks[from];
    mutate(
      playlist,
      (p) => (p.tracks = order.map((i) => p.tracks[i])),
      () => post(`/api/playlists/${playlist.id}/reorder`, { newOrder: order }),
    );
    wrap.update(playlist);
    announce(`Moved ${track.title} to position ${to + 1} of ${order.length}`);
    if (focusAction) {
      const row = list.querySelector(`[data-key="${track.id}"]`);
      const button =
        row?.querySelector(`[data-action="${focusAction}"]:not(:disabled)`) ??
        row?.querySelector('[data-action^="move"]:not(:disabled)');
      button?.focus();
    }
  }

  function remove(track) {
    const playlist = getPlaylist();
    mutate(
      playlist,
      (p) => (p.tracks = p.tracks.filter((t) => t.id !== track.id)),
      () => del(`/api/playlists/${playlist.id}/tracks`, { trackIds: [track.id] }),
    );
    announce(`Removed ${track.title}`);
  }

  function trackRow(_track) {
    const pos = h('span', { class: 'track-pos' });
    const title = h('span', { class: 'track-title' });
    const uri = h('span', { class: 'track-uri' });
    const length = h('span', { class: 'track-dur' });
    const up = writable
      ? iconButton({
          icon: icon('up'),
          label: '',
          className: 'btn btn-icon btn-quiet',
          action: 'move-up',
          onClick: () => move(row.index, row.index - 1, 'move-up'),
        })
      : null;
    const down = writable
      ? iconButton({
          icon: icon('down'),
          label: '',
          className: 'btn btn-icon btn-quiet',
          action: 'move-down',
          onClick: () => move(row.index, row.index + 1, 'move-down'),
        })
      : null;
    const drop = writable
      ? iconButton({
          icon: icon('x'),
          label: '',
          className: 'btn btn-icon btn-quiet btn-remove',
          action: 'remove-track',
          onClick: () => remove(row.track),
        })
      : null;
    const row = h(
      'li',
      { class: writable ? 'track' : 'track track-readonly', draggable: writable ? 'true' : undefined },
      writable ? h('span', { class: 'grip', 'aria-hidden': 'true' }, icon('grip')) : null,
      pos,
      h('span', { class: 'track-text' }, title, uri),
      length,
      writable ? h('span', { class: 'track-actions' }, up, down, drop) : null,
    );
    row.update = ({ track: t, index, count }) => {
      row.track = t;
      row.index = index;
      text(pos, index + 1);
      text(title, t.title);
      text(uri, t.uri);
      text(length, duration(t.durationMs));
      if (!writable) return;
      up.disabled = index === 0;
      down.disabled = index === count - 1;
      attr(up, 'aria-label', `Move ${t.title} up`);
      attr(down, 'aria-label', `Move ${t.title} down`);
      attr(drop, 'aria-label', `Remove ${t.title}`);
      attr(up, 'title', 'Move up');
      attr(down, 'title', 'Move down');
      attr(drop, 'title', 'Remove from playlist');
    };
    return row;
  }

  const clearMarks = () => {
    for (const el of list.querySelectorAll('.drop-before, .drop-after, .dragging'))
      el.classList.remove('drop-before', 'drop-after', 'dragging');
  };
  /** Where a drop over `row` lands: before it in its top half, after it in its bottom half. */
  const dropTarget = (event, row) => {
    const box = row.getBoundingClientRect();
    const before = event.clientY < box.top + box.height / 2;
    const slot = before ? row.index : row.index + 1;
    // The dragged track leaves its old place first, so slots after it shift up by one.
    return { before, to: dragFrom < slot ? slot - 1 : slot };
  };

  if (writable) {
    list.addEventListener('dragstart', (event) => {
      const row = event.target.closest?.('li.track');
      if (!row) return;
      dragFrom = row.index;
      event.dataTransfer.effectAllowed = 'move';
      event.dataTransfer.setData('text/plain', row.track.title);
      row.classList.add('dragging');
    });
    list.addEventListener('dragover', (event) => {
      const row = event.target.closest?.('li.track');
      if (dragFrom === null || !row) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      const { before } = dropTarget(event, row);
      for (const el of list.querySelectorAll('.drop-before, .drop-after'))
        if (el !== row) el.classList.remove('drop-before', 'drop-after');
      row.classList.toggle('drop-before', before);
      row.classList.toggle('drop-after', !before);
    });
    list.addEventListener('drop', (event) => {
      const row = event.target.closest?.('li.track');
      if (dragFrom === null || !row) return;
      event.preventDefault();
      const from = dragFrom;
      const { to } = dropTarget(event, row);
      dragFrom = null;
      clearMarks();
      move(from, to);
    });
    list.addEventListener('dragend', () => {
      dragFrom = null;
      clearMarks();
    });
  }

  wrap.update = (playlist) => {
    const items = playlist.tracks.map((track, index) => ({ track, index, count: playlist.tracks.length }));
    reconcile(
      list,
      items,
      (item) => item.track.id,
      (item) => trackRow(item.track),
    );
    empty.hidden = items.length > 0;
  };
  return wrap;
}
