// @ts-check
// The client-side model: what the signed-in user may see, kept current by the event stream.
import { apiResponse, get, nextLink } from './api.js';
import { toast } from './dom.js';

/** @type {DashboardState} */
export const state = {
  me: null,
  players: new Map(),
  zones: new Map(),
  playlists: new Map(),
  inputs: new Map(),
  scenes: new Map(),
  /** What each stream player plays (GET /api/players/{id}/playback), kept current by the player.* events. */
  playback: new Map(),
  /** The receivers of each stream player whose Casting dialog is open, kept current by player.receiverChanged. */
  receivers: new Map(),
  /** Each receiver kind's name as people read it (`AirPlay`), as the receivers API gave it: kept once learnt. */
  castNames: new Map(),
  /** Announcements this page saw (its own answers and the announcement.* events), by id. */
  announcements: new Map(),
  /** An apply (or undo) happened since this page loaded, so the undo slot holds something. */
  undoReady: false,
  users: null,
  hardware: new Map(),
  /** Playlists with local edits in flight: refetches wait until they are done (see playlists.js). */
  locked: new Set(),
  /** The playlist shown in the Playlists view: the only one whose tracks are kept current. */
  openPlaylistId: null,
  loaded: { audio: false, playlists: false, inputs: false, users: false, scenes: false },
};

export const can = {
  change: () => state.me !== null && state.me.role !== 'Viewer',
  admin: () => state.me?.role === 'Admin',
};

const listeners = new Set();
const pendingTopics = new Set();
let frame = 0;

/** Views subscribe; they get the set of topics changed since the last animation frame. */
export function subscribe(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function changed(topic) {
  pendingTopics.add(topic);
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const topics = new Set(pendingTopics);
    pendingTopics.clear();
    for (const listener of listeners) listener(topics);
  });
}

export function reset() {
  state.me = null;
  state.users = null;
  for (const key of [
    'players',
    'zones',
    'playlists',
    'inputs',
    'scenes',
    'playback',
    'receivers',
    'announcements',
    'hardware',
    'locked',
  ])
    state[key].clear();
  state.undoReady = false;
  state.openPlaylistId = null;
  for (const key of Object.keys(state.loaded)) state.loaded[key] = false;
}

const byName = (a, b) => a.name.localeCompare(b.name, undefined, { numeric: true });
/** What works comes first; zones, players and inputs that cannot answer (greyed) after it. */
const usableFirst = (a, b) => Number(!a.available) - Number(!b.available);

export const sorted = {
  players: () => [...state.players.values()].sort((a, b) => usableFirst(a, b) || byName(a, b)),
  /** Players the appliance plays itself (an audio output): the ones with a transport. */
  streamPlayers: () => sorted.players().filter((p) => p.output),
  zones: () =>
    [...state.zones.values()].sort((a, b) => usableFirst(a, b) || a.output.channel - b.output.channel || byName(a, b)),
  playlists: () =>
    [...state.playlists.values()].sort((a, b) => Number(b.isFavorite) - Number(a.isFavorite) || byName(a, b)),
  inputs: () =>
    [...state.inputs.values()].sort((a, b) => usableFirst(a, b) || a.input.channel - b.input.channel || byName(a, b)),
  scenes: () => [...state.scenes.values()].sort(byName),
};

function fill(map, items) {
  map.clear();
  for (const item of items) map.set(item.id, item);
}

export async function loadAudio() {
  const [players, zones] = await Promise.all([get('/api/players'), get('/api/zones')]);
  fill(state.players, players);
  fill(state.zones, zones);
  state.loaded.audio = true;
  changed('audio');
  await Promise.all(players.filter((p) => p.output).map((p) => loadPlayback(p.id)));
}

/** One stream player's playback; a player that cannot answer keeps what the events said last. */
export async function loadPlayback(playerId) {
  try {
    state.playback.set(playerId, await get(`/api/players/${playerId}/playback`));
    changed('playback');
  } catch {
    // Its card says the player is unavailable or its engine is down (from the player and engine events).
  }
}

/** A stream player's receivers (GET /api/players/{id}/receivers), held while its Casting dialog shows them. */
export async function loadReceivers(playerId) {
  const { items } = await get(`/api/players/${playerId}/receivers`);
  learnCastNames(items);
  state.receivers.set(playerId, items);
  changed('receivers');
}

/** Keeps the names of the receivers an answer or an event of the receivers API gave. */
function learnCastNames(receivers) {
  for (const r of receivers) state.castNames.set(r.kind, r.name);
}

/** The kinds whose names were asked for (once each: a failed answer leaves the kind standing in for its name). */
const castNamesAsked = new Set();

/**
 * How people read receiver kind `kind` (`AirPlay`), as the receivers API names it: the daemon's registry of kinds,
 * not a list here. Until a list of `playerId`'s receivers was read (asked once, here), the kind itself.
 */
export function castName(playerId, kind) {
  const name = state.castNames.get(kind);
  if (name !== undefined) return name;
  if (!castNamesAsked.has(kind)) {
    castNamesAsked.add(kind);
    get(`/api/players/${playerId}/receivers`).then(
      ({ items }) => {
        learnCastNames(items);
        changed('playback');
      },
      () => {
        // The card says the kind instead; the next name learnt (the Casting dialog, an event) shows.
      },
    );
  }
  return kind;
}

/** One receiver as an answer or an event gives it, into the list held for its player (none held: nothing to do). */
export function setReceiver(playerId, receiver) {
  learnCastNames([receiver]);
  const list = state.receivers.get(playerId);
  if (!list) return null;
  state.receivers.set(
    playerId,
    list.map((r) => (r.kind === receiver.kind ? receiver : r)),
  );
  return 'receivers';
}

/** The list asks for the largest page the API gives; the bound stops a server that never ends the list. */
const PLAYLIST_PAGE = 200;
const MAX_PLAYLIST_PAGES = 25;

/**
 * Loads every playlist. The API answers a summary page (no `tracks`, `trackCount` and `durationMs` instead)
 * with X-Total-Count and a Link rel="next"; an older API answers the full array at once, which works too.
 * Tracks already loaded for the open or an edited playlist are kept until its own GET replaces them.
 */
export async function loadPlaylists() {
  const items = [];
  let url = `/api/playlists?limit=${PLAYLIST_PAGE}&offset=0`;
  for (let page = 0; url && page < MAX_PLAYLIST_PAGES; page++) {
    const { data, headers } = await apiResponse('GET', url);
    items.push(...data);
    const total = Number(headers.get('x-total-count'));
    url =
      nextLink(headers) ??
      (data.length && items.length < total ? `/api/playlists?limit=${PLAYLIST_PAGE}&offset=${items.length}` : null);
  }
  const keep = (id) => id === state.openPlaylistId || state.locked.has(id);
  const previous = new Map(state.playlists);
  state.playlists.clear();
  for (const item of items) {
    const old = previous.get(item.id);
    state.playlists.set(item.id, !item.tracks && old?.tracks && keep(item.id) ? { ...item, tracks: old.tracks } : item);
  }
  state.loaded.playlists = true;
  changed('playlists');
  const open = state.playlists.get(state.openPlaylistId);
  if (open && !items.find((p) => p.id === open.id)?.tracks)
    loadPlaylist(open.id).catch(() => {
      // A background reload: the page keeps what it shows, and the next change loads it again.
    });
}

const loadingTracks = new Set();

/** Makes sure the tracks of one playlist are loaded (a summary from the list has none). */
export function ensureTracks(id) {
  const playlist = state.playlists.get(id);
  if (!playlist || playlist.tracks || state.locked.has(id) || loadingTracks.has(id)) return;
  loadingTracks.add(id);
  loadPlaylist(id)
    .catch(() => {
      // A background load: the next change, or opening the playlist again, tries again.
    })
    .finally(() => loadingTracks.delete(id));
}
export async function loadInputs() {
  fill(state.inputs, await get('/api/input-devices'));
  state.loaded.inputs = true;
  changed('inputs');
}

export async function loadScenes() {
  fill(state.scenes, await get('/api/scenes'));
  state.loaded.scenes = true;
  changed('scenes');
}

export async function loadUsers() {
  if (!can.admin()) return;
  state.users = await get('/api/users');
  state.loaded.users = true;
  changed('users');
}

export async function loadMe() {
  state.me = await get('/api/users/me');
  changed('me');
  return state.me;
}

const playlistEpochs = new Map();

/** Makes any GET of this playlist already in flight stale (a local edit is newer than its answer). */
export function invalidatePlaylist(id) {
  playlistEpochs.set(id, (playlistEpochs.get(id) ?? 0) + 1);
}

export async function loadPlaylist(id) {
  if (state.locked.has(id)) return;
  invalidatePlaylist(id);
  const epoch = playlistEpochs.get(id);
  const current = () => epoch === playlistEpochs.get(id) && !state.locked.has(id);
  try {
    const playlist = await get(`/api/playlists/${id}`);
    if (!current()) return;
    state.playlists.set(id, playlist);
  } catch (err) {
    if (err.status !== 404) throw err;
    if (!current()) return;
    state.playlists.delete(id);
  }
  changed('playlists');
}

export function loadAll() {
  const jobs = [loadAudio(), loadPlaylists(), loadInputs(), loadScenes()];
  if (can.admin()) jobs.push(loadUsers());
  // An open Casting dialog reads its receivers again too (events may have been missed).
  for (const id of state.receivers.keys())
    jobs.push(
      loadReceivers(id).catch(() => {
        // The dialog keeps what it shows; the rest of the page must still load.
      }),
    );
  return Promise.all(jobs);
}

/** Keeps zone.playerId consistent with a player's zoneIds (the event carries only the player side). */
function setPlayerZones(playerId, zoneIds) {
  const player = state.players.get(playerId);
  if (player) player.zoneIds = zoneIds;
  for (const zone of state.zones.values()) {
    if (zoneIds.includes(zone.id)) zone.playerId = playerId;
    else if (zone.playerId === playerId) zone.playerId = null;
  }
}

/** Announcements remembered by the page (the daemon keeps its last 50 too). */
const KEPT_ANNOUNCEMENTS = 50;

const refetchTimers = new Map();

/** Coalesces bursts (e.g. a reorder followed by a favorite) into one GET per resource. */
function refetchSoon(key, job) {
  clearTimeout(refetchTimers.get(key));
  refetchTimers.set(
    key,
    setTimeout(() => {
      refetchTimers.delete(key);
      job().catch(() => {
        // A background reload: the page keeps what it shows, and the next change loads it again.
      });
    }, 120),
  );
}

/** Applies one event from the stream to the model; false means "refetch everything" (stream.reset). @param {StreamEvent} event */
export function applyEvent(event) {
  if (event.type === 'stream.reset') return false;
  const topic = apply(event);
  if (topic) changed(topic);
  return true;
}

/**
 * A type this page does not know (sent by a newer daemon) changes nothing. Its parameter is `never`: the type check
 * fails on the call in `apply` when a type of the event schema has no case there.
 * @param {never} _type
 */
const unknownEvent = (_type) => null;

/**
 * Updates the model for one event and names the topic that changed (or nothing). Every type of the event schema
 * has its case (see unknownEvent).
 * @param {DomainEvent} event
 */
function apply({ type, payload: p }) {
  switch (type) {
    case 'player.volumeChanged': {
      const player = state.players.get(p.playerId);
      if (player) player.volume = p.volume;
      return 'audio';
    }
    case 'player.zonesChanged':
      setPlayerZones(p.playerId, p.zoneIds);
      return 'audio';
    case 'player.created':
    case 'player.updated': {
      // Attachments come from player.zonesChanged, which the server filters per caller; these payloads are not.
      const existing = state.players.get(p.player.id);
      const zoneIds = existing?.zoneIds ?? p.player.zoneIds.filter((id) => state.zones.has(id));
      if (existing) Object.assign(existing, p.player, { zoneIds });
      else state.players.set(p.player.id, { ...p.player, zoneIds });
      setPlayerZones(p.player.id, zoneIds);
      return 'audio';
    }
    case 'player.deleted':
      state.players.delete(p.playerId);
      state.playback.delete(p.playerId);
      setPlayerZones(p.playerId, []);
      return 'audio';
    case 'zone.volumeChanged':
    case 'zone.mutedChanged':
    case 'zone.powerChanged': {
      const zone = state.zones.get(p.zoneId);
      if (zone) {
        if ('volume' in p) zone.volume = p.volume;
        if ('muted' in p) zone.muted = p.muted;
        if ('power' in p) zone.power = p.power;
      }
      return 'audio';
    }
    case 'zone.created':
    case 'zone.updated': {
      const existing = state.zones.get(p.zone.id);
      const playerId = existing ? existing.playerId : state.players.has(p.zone.playerId) ? p.zone.playerId : null;
      if (existing) Object.assign(existing, p.zone, { playerId });
      else state.zones.set(p.zone.id, { ...p.zone, playerId });
      return 'audio';
    }
    case 'zone.toneChanged': {
      const zone = state.zones.get(p.zoneId);
      if (zone) zone.tone = p.tone;
      return 'audio';
    }
    case 'zone.statusChanged': {
      const zone = state.zones.get(p.zoneId);
      if (zone) zone.amplifierStatus = p.amplifierStatus;
      return 'audio';
    }
    case 'zone.sleepChanged': {
      const zone = state.zones.get(p.zoneId);
      if (zone) zone.sleepUntil = p.sleepUntil;
      return 'audio';
    }
    case 'zone.availabilityChanged': {
      const zone = state.zones.get(p.zoneId);
      if (zone) Object.assign(zone, { available: p.available, unavailableReason: p.reason });
      return 'audio';
    }
    case 'scene.created':
    case 'scene.updated':
      state.scenes.set(p.scene.id, p.scene);
      return 'scenes';
    case 'scene.deleted':
      state.scenes.delete(p.sceneId);
      return 'scenes';
    case 'scene.applied':
      state.undoReady = true;
      return 'scenes';
    case 'zone.deleted':
      state.zones.delete(p.zoneId);
      for (const player of state.players.values()) player.zoneIds = player.zoneIds.filter((id) => id !== p.zoneId);
      return 'audio';
    case 'playlist.changed':
      if (p.reason !== 'deleted') {
        refetchSoon(`playlist:${p.playlistId}`, () => loadPlaylist(p.playlistId));
        return null;
      }
      state.playlists.delete(p.playlistId);
      return 'playlists';
    case 'inputDevice.favoriteChanged': {
      const input = state.inputs.get(p.inputDeviceId);
      if (input) input.isFavorite = p.isFavorite;
      return 'inputs';
    }
    case 'inputDevice.created':
    case 'inputDevice.updated':
      state.inputs.set(p.inputDevice.id, p.inputDevice);
      return 'inputs';
    case 'inputDevice.deleted':
      state.inputs.delete(p.inputDeviceId);
      return 'inputs';
    case 'player.playbackChanged':
      state.playback.set(p.playerId, p.playback);
      return 'playback';
    case 'player.position':
    case 'player.engineChanged': {
      const playback = state.playback.get(p.playerId);
      // A stream player this page has not read yet (just created, or its MPD was down at load): read it now.
      if (!playback) return void loadPlayback(p.playerId);
      if ('engine' in p) playback.engine = p.engine;
      else Object.assign(playback, { positionMs: p.positionMs, durationMs: p.durationMs, positionAt: p.positionAt });
      return 'playback';
    }
    case 'player.trackSkipped':
      // The queue goes on by itself; the message says which track did not play and why.
      toast(`${state.players.get(p.playerId)?.name ?? 'A player'} skipped ${p.uri}: ${p.detail}`);
      return null;
    case 'announcement.queued':
    case 'announcement.started':
    case 'announcement.ended':
      state.announcements.set(p.announcement.id, p.announcement);
      // A page left open for days keeps the newest few; the status line follows only the last one it sent.
      if (state.announcements.size > KEPT_ANNOUNCEMENTS)
        state.announcements.delete(state.announcements.keys().next().value);
      return 'announcements';
    case 'hardware.status':
      state.hardware.set(p.driver, p.online);
      return 'hardware';
    case 'user.changed':
      if (state.me && p.userId === state.me.id) refetchSoon('me', loadMe);
      if (can.admin()) refetchSoon('users', loadUsers);
      return null;
    // The export's own answer says where the file went; the library is read when its panel opens.
    case 'playlist.exported':
    case 'library.scanChanged':
      return null;
    case 'player.receiverChanged':
      return setReceiver(p.playerId, p.receiver);
    default:
      return unknownEvent(type);
  }
}
