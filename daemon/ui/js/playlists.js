// @ts-check
// The Playlists view: list and favorites, tracks reordered by drag and drop or buttons, add, remove, export.
// The list holds summaries; a playlist's tracks are fetched when it is opened.

import { del, post, put } from './api.js';
import { confirmDialog, field, openDialog } from './dialogs.js';
import { announce, attempt, attr, count, duration, h, iconButton, reconcile, text, toast } from './dom.js';
import { icon } from './icons.js';
import { libraryPanel } from './library.js';
import { exportPanel } from './playlist-export.js';
import { can, changed, ensureTracks, invalidatePlaylist, loadPlaylist, sorted, state } from './store.js';
import { trackList } from './tracks.js';

export function playlistsView(section) {
  const create = can.change()
    ? iconButton({
        icon: icon('plus'),
        visibleLabel: 'New playlist',
        className: 'btn btn-primary',
        action: 'new-playlist',
        onClick: createPlaylist,
      })
    : null;
  const head = h(
    'div',
    { class: 'view-head' },
    h(
      'div',
      {},
      h('h1', { class: 'view-title', id: 'h-playlists', text: 'Playlists' }),
      h('p', {
        class: 'view-sub',
        text: can.change()
          ? 'Favorites first. Drag tracks, or use the arrows, to change their order.'
          : 'Favorites first.',
      }),
    ),
    create ? h('div', { class: 'view-actions' }, create) : null,
  );
  const list = h('ul', { class: 'playlist-list', 'aria-label': 'Playlists' });
  const emptyList = h('p', { class: 'muted empty-inline', text: 'No playlists yet.' });
  const detail = playlistDetail();
  const layout = h(
    'div',
    { class: 'split' },
    h('nav', { class: 'card list-card', 'aria-label': 'Playlist list' }, list, emptyList),
    detail,
  );
  section.append(head, h('p', { class: 'loading', text: 'Loading playlists…' }), layout);

  return {
    render() {
      section.querySelector('.loading').hidden = state.loaded.playlists;
      layout.hidden = !state.loaded.playlists;
      if (!state.loaded.playlists) return;
      const playlists = sorted.playlists();
      if (!state.playlists.has(state.openPlaylistId)) state.openPlaylistId = playlists[0]?.id ?? null;
      if (state.openPlaylistId) ensureTracks(state.openPlaylistId);
      reconcile(list, playlists, (p) => p.id, playlistItem);
      emptyList.hidden = playlists.length > 0;
      detail.update(state.playlists.get(state.openPlaylistId) ?? null);
    },
  };
}

function select(id) {
  state.openPlaylistId = id;
  changed('playlists');
  if (matchMedia('(max-width: 760px)').matches) {
    requestAnimationFrame(() =>
      document.querySelector('.playlist-detail')?.scrollIntoView({ behavior: 'smooth', block: 'start' }),
    );
  }
}

function favoriteToggle(getPlaylist, withText) {
  if (!can.change()) {
    const mark = h('span', { class: 'fav-mark' }, icon('star'));
    mark.update = (p) => {
      mark.hidden = !p.isFavorite;
      attr(mark, 'title', 'Favorite');
    };
    return mark;
  }
  const button = iconButton({
    icon: icon('star'),
    label: '',
    visibleLabel: withText ? 'Favorite' : undefined,
    className: withText ? 'btn btn-secondary btn-fav' : 'btn btn-icon btn-fav',
    action: 'favorite',
    onClick: () => setFavorite(getPlaylist()),
  });
  button.update = (p) => {
    attr(button, 'aria-pressed', String(p.isFavorite));
    if (!withText) attr(button, 'aria-label', `Favorite ${p.name}`);
    attr(button, 'title', p.isFavorite ? `Remove ${p.name} from favorites` : `Mark ${p.name} as favorite`);
  };
  return button;
}

function playlistItem(_playlist) {
  const name = h('span', { class: 'pl-name' });
  const meta = h('span', { class: 'pl-meta' });
  const open = h(
    'button',
    { type: 'button', class: 'pl-open', on: { click: () => select(item.playlist.id) } },
    icon('playlist', 'icon pl-icon'),
    h('span', { class: 'pl-text' }, name, meta),
  );
  const fav = favoriteToggle(() => state.playlists.get(item.playlist.id) ?? item.playlist, false);
  const item = h('li', { class: 'pl-item' }, open, fav);
  item.update = (p) => {
    item.playlist = p;
    text(name, p.name);
    text(meta, summary(p));
    attr(open, 'aria-current', p.id === state.openPlaylistId ? 'true' : null);
    item.classList.toggle('is-selected', p.id === state.openPlaylistId);
    fav.update(p);
  };
  return item;
}

/** Loaded tracks are the freshest (local edits show at once); a list summary carries the totals instead. */
const trackCount = (p) => (p.tracks ? p.tracks.length : (p.trackCount ?? 0));

function summary(p) {
  const total = p.tracks ? p.tracks.reduce((sum, t) => sum + (t.durationMs ?? 0), 0) : (p.durationMs ?? 0);
  const tracks = count(trackCount(p), 'track');
  return total ? `${tracks} · ${duration(total)}` : tracks;
}

function playlistDetail() {
  // Always act on the model's object: a refetch may have replaced it since the last render.
  const current = () => state.playlists.get(panel.playlist?.id) ?? panel.playlist;
  const title = h('h2', { class: 'card-title', id: 'h-playlist-detail' });
  const meta = h('p', { class: 'card-meta' });
  const fav = favoriteToggle(current, true);
  const remove = can.change()
    ? iconButton({
        icon: icon('trash'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'delete-playlist',
        onClick: () => deletePlaylist(current()),
      })
    : null;
  const play = can.change()
    ? iconButton({
        icon: icon('play'),
        visibleLabel: 'Play',
        className: 'btn btn-primary',
        action: 'play-playlist',
        onClick: () => playOn(current()),
      })
    : null;
  const tracks = trackList({ getPlaylist: current, mutate });
  const forms = can.change()
    ? [addTrackForm(current), libraryPanel(current, mutate), exportPanel(current, true)]
    : [exportPanel(current, false)];
  const loading = h('p', { class: 'loading', text: 'Loading tracks…' });
  const body = h('div', { class: 'detail-body' }, loading, tracks, ...forms);
  const none = h('p', { class: 'muted empty-inline', text: 'Choose a playlist, or create one.' });
  const panel = h(
    'section',
    { class: 'card playlist-detail', 'aria-labelledby': 'h-playlist-detail' },
    h('header', { class: 'card-head' }, h('div', { class: 'card-head-text' }, title, meta), play, fav, remove),
    body,
    none,
  );
  panel.update = (p) => {
    panel.playlist = p;
    panel.querySelector('.card-head').hidden = !p;
    body.hidden = !p;
    none.hidden = Boolean(p);
    if (!p) return;
    text(title, p.name);
    text(meta, summary(p));
    fav.update(p);
    if (remove) attr(remove, 'aria-label', `Delete playlist ${p.name}`);
    if (play) {
      // Only stream players have a transport; the button waits until there is one and the playlist has tracks.
      play.hidden = sorted.streamPlayers().length === 0;
      play.disabled = trackCount(p) === 0;
      attr(play, 'aria-label', `Play ${p.name}`);
    }
    loading.hidden = Boolean(p.tracks);
    tracks.hidden = !p.tracks;
    for (const form of forms) form.hidden = !p.tracks;
    if (!p.tracks) return;
    tracks.update(p);
    for (const form of forms) form.update(p);
  };
  return panel;
}

const queues = new Map();

/**
 * Applies a local edit at once and queues its request so a playlist's requests reach the server in order
 * (each newOrder is computed against the order the previous one produced). Refetches wait until the queue
 * is empty, then one GET brings the truth back.
 */
export function mutate(playlist, localChange, request) {
  const id = playlist.id;
  state.locked.add(id);
  invalidatePlaylist(id);
  localChange?.(playlist);
  changed('playlists');
  const previous = queues.get(id) ?? Promise.resolve();
  const next = previous.then(() => attempt(request));
  queues.set(id, next);
  next.then(() => {
    if (queues.get(id) !== next) return;
    queues.delete(id);
    state.locked.delete(id);
    loadPlaylist(id).catch(() => {
      // A background reload: the page keeps what it shows, and the next change loads it again.
    });
  });
  return next;
}

function setFavorite(p) {
  const isFavorite = !p.isFavorite;
  mutate(
    p,
    (pl) => (pl.isFavorite = isFavorite),
    () => put(`/api/playlists/${p.id}/favorite`, { isFavorite }),
  );
}

function createPlaylist() {
  void openDialog({
    title: 'New playlist',
    content: [field({ name: 'name', label: 'Name', required: true, maxlength: '100', autocomplete: 'off' })],
    submitLabel: 'Create playlist',
    onSubmit: async (form) => {
      const playlist = await post('/api/playlists', { name: form.elements.name.value.trim() });
      state.playlists.set(playlist.id, playlist);
      select(playlist.id);
      return playlist;
    },
  });
}

/** Asks which stream player plays it (those that can answer) and from which track (the first by default). */
function playOn(p) {
  const players = sorted.streamPlayers().filter((player) => player.available);
  if (!players.length) return toast('No stream player can play now.', 'error');
  const tracks = p.tracks ?? [];
  const from = tracks.map((track, i) => ({ value: track.id, label: `${i + 1}. ${track.title}` }));
  void openDialog({
    title: `Play ${p.name}`,
    content: [
      field({
        name: 'playerId',
        label: 'On the player',
        options: players.map((player) => ({ value: player.id, label: player.name })),
        value: players[0].id,
      }),
      from.length > 1 ? field({ name: 'trackId', label: 'From the track', options: from, value: from[0].value }) : null,
    ],
    submitLabel: 'Play',
    onSubmit: async (form) => {
      const player = state.players.get(form.elements.playerId.value);
      const trackId = form.elements.trackId?.value;
      // From the first track the playlist's own start is asked for, so a reorder meanwhile still starts at the top.
      const start = trackId && trackId !== tracks[0]?.id ? { playlistId: p.id, trackId } : { playlistId: p.id };
      await post(`/api/players/${player.id}/play`, start);
      const track = trackId && tracks.find((t) => t.id === trackId);
      toast(
        track && track !== tracks[0]
          ? `${p.name} plays on ${player.name} from ${track.title}.`
          : `${p.name} plays on ${player.name}.`,
        'success',
      );
    },
  });
}

function deletePlaylist(p) {
  void confirmDialog({
    title: `Delete ${p.name}?`,
    message: `This removes the playlist and its ${count(trackCount(p), 'track')}. Exported files are kept.`,
    confirmLabel: 'Delete playlist',
    danger: true,
    onConfirm: () => del(`/api/playlists/${p.id}`),
  });
}

/** "3:35", "1:02:03" or "215" (seconds) → milliseconds; empty → undefined; anything else → NaN. */
function parseDuration(value) {
  const s = value.trim();
  if (!s) return undefined;
  if (!/^\d+(:\d{1,2}){0,2}$/.test(s)) return NaN;
  return s.split(':').reduce((seconds, part) => seconds * 60 + Number(part), 0) * 1000;
}

function addTrackForm(getPlaylist) {
  const title = field({ name: 'title', label: 'Title', required: true, maxlength: '500', autocomplete: 'off' });
  const uri = field({
    name: 'uri',
    label: 'Location (URI)',
    required: true,
    maxlength: '2048',
    placeholder: 'file:albums/… or https://…',
    autocomplete: 'off',
  });
  const length = field({
    name: 'duration',
    label: 'Length',
    placeholder: 'm:ss',
    inputmode: 'numeric',
    autocomplete: 'off',
  });
  const submit = iconButton({
    icon: icon('plus'),
    visibleLabel: 'Add track',
    className: 'btn btn-secondary',
    action: 'add-track',
    type: 'submit',
  });
  const form = h(
    'form',
    { class: 'inline-form add-track', 'aria-label': 'Add a track' },
    h('h3', { class: 'subhead', text: 'Add a track' }),
    h('div', { class: 'form-row' }, title, uri, length, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const els = form.elements;
    const durationMs = parseDuration(els.duration.value);
    if (!els.title.value.trim() || !els.uri.value.trim())
      return toast('A track needs a title and a location.', 'error');
    if (Number.isNaN(durationMs))
      return toast('Write the length as m:ss (for example 3:35), or leave it empty.', 'error');
    const track = {
      title: els.title.value.trim(),
      uri: els.uri.value.trim(),
      ...(durationMs === undefined ? {} : { durationMs }),
    };
    let warnings = [];
    const ok = await mutate(getPlaylist(), null, async () => {
      ({ warnings = [] } = await post(`/api/playlists/${getPlaylist().id}/tracks`, { tracks: [track] }));
    });
    if (ok) {
      form.reset();
      els.title.focus();
      announce(`Added ${track.title}`);
      // Kept all the same (an M3U export may be for another player), but a stream player would refuse it at Play.
      for (const warning of warnings) toast(`Added, but ${warning}.`, 'error');
    }
  });
  form.update = () => {
    // The form keeps what is typed in it: nothing from the state to show.
  };
  return form;
}
