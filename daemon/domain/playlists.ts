// Playlists: tracks, reordering by permutation, favorites and extended-M3U export.
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/db.js';
import type { PlaylistsRepo, PlaylistRow, TrackRow } from '../store/playlists-repo.js';
import type { EventBus, PlaylistChangeReason } from './events.js';
import { badRequest, notFound } from '../http/problem.js';
import { checkExportPath, resolveExportTarget, writeAtomically } from './export-path.js';

export interface TrackInput {
  title: string;
  uri: string;
  durationMs?: number;
}

export interface TrackView {
  id: string;
  title: string;
  uri: string;
  durationMs: number | null;
}

export interface PlaylistView {
  id: string;
  name: string;
  isFavorite: boolean;
  tracks: TrackView[];
  createdAt: string;
}

/** Upper bound on tracks per playlist, so one playlist cannot grow without limit. */
export const MAX_TRACKS = 10_000;

export class PlaylistsService {
  constructor(
    private readonly store: Store,
    private readonly repo: PlaylistsRepo,
    private readonly bus: EventBus,
    private readonly exportDir: string,
  ) {}

  list(): PlaylistView[] {
    const tracks = this.repo.tracksByPlaylist();
    return this.repo.list().map((row) => view(row, tracks.get(row.id) ?? []));
  }

  get(id: string): PlaylistView {
    const row = this.row(id);
    return view(row, this.repo.tracks(id));
  }

  create(input: { name: string; tracks?: TrackInput[] }): PlaylistView {
    const id = randomUUID();
    this.store.transaction(() => {
      this.repo.insert({ id, name: input.name, is_favorite: 0, created_at: new Date().toISOString() });
      this.insertTracks(id, 0, input.tracks ?? []);
    });
    this.changed(id, 'created');
    return this.get(id);
  }

  remove(id: string): void {
    this.store.transaction(() => {
      this.row(id);
      this.repo.remove(id);
    });
    this.changed(id, 'deleted');
  }

  appendTracks(id: string, tracks: TrackInput[]): PlaylistView {
    this.store.transaction(() => {
      this.row(id);
      const existing = this.repo.tracks(id).length;
      if (existing + tracks.length > MAX_TRACKS) {
        throw badRequest(`a playlist holds at most ${MAX_TRACKS} tracks; this one has ${existing}`, {
          tracks: [`at most ${MAX_TRACKS - existing} more tracks fit`],
        });
      }
      this.insertTracks(id, existing, tracks);
    });
    this.changed(id, 'tracksAdded');
    return this.get(id);
  }

  /** Removes tracks by id; any id not in the playlist fails the whole request. */
  removeTracks(id: string, trackIds: string[]): void {
    this.store.transaction(() => {
      this.row(id);
      const tracks = this.repo.tracks(id);
      const present = new Set(tracks.map((t) => t.id));
      const wanted = new Set(trackIds.map((t) => t.toLowerCase()));
      const missing = [...wanted].filter((t) => !present.has(t));
      if (missing.length) {
        throw badRequest(`unknown track ids in this playlist: ${missing.join(', ')}`, {
          trackIds: [`unknown track ids: ${missing.join(', ')}`],
        });
      }
      for (const trackId of wanted) this.repo.deleteTrack(trackId);
      this.repo.setOrder(tracks.filter((t) => !wanted.has(t.id)).map((t) => t.id));
    });
    this.changed(id, 'tracksRemoved');
  }

  /** `newOrder[i]` is the current index of the track that moves to position i. */
  reorder(id: string, newOrder: number[]): void {
    this.store.transaction(() => {
      this.row(id);
      const tracks = this.repo.tracks(id);
      checkPermutation(newOrder, tracks.length);
      this.repo.setOrder(newOrder.map((index) => tracks[index]!.id));
    });
    this.changed(id, 'reordered');
  }

  setFavorite(id: string, isFavorite: boolean): void {
    const row = this.row(id);
    this.repo.setFavorite(id, isFavorite);
    if ((row.is_favorite === 1) !== isFavorite) this.changed(id, 'favorite');
  }

  async export(id: string, filePath: string): Promise<string> {
    const segments = checkExportPath(filePath);
    const playlist = this.get(id);
    const target = await resolveExportTarget(this.exportDir, segments);
    await writeAtomically(target, toM3u(playlist));
    const relative = segments.join('/');
    this.bus.publish({ type: 'playlist.exported', payload: { playlistId: id, filePath: relative } });
    return relative;
  }

  private insertTracks(playlistId: string, start: number, tracks: TrackInput[]): void {
    tracks.forEach((track, offset) => {
      const row: TrackRow = {
        id: randomUUID(),
        playlist_id: playlistId,
        position: start + offset,
        title: track.title,
        uri: track.uri,
        duration_ms: track.durationMs ?? null,
      };
      this.repo.insertTrack(row);
    });
  }

  private row(id: string): PlaylistRow {
    const row = this.repo.byId(id);
    if (!row) throw notFound(`no playlist with id ${id}`);
    return row;
  }

  private changed(playlistId: string, reason: PlaylistChangeReason): void {
    this.bus.publish({ type: 'playlist.changed', payload: { playlistId, reason } });
  }
}

/** Throws a 400 unless `order` is a permutation of 0..length-1. */
export function checkPermutation(order: number[], length: number): void {
  const fail = (why: string): never => {
    throw badRequest(`"newOrder" ${why}`, { newOrder: [why] });
  };
  if (order.length !== length) fail(`must list all ${length} track positions, got ${order.length}`);
  const seen = new Set<number>();
  for (const index of order) {
    if (!Number.isInteger(index) || index < 0 || index >= length) fail(`must hold integers from 0 to ${length - 1}, got ${index}`);
    if (seen.has(index)) fail(`must name each position once; ${index} repeats`);
    seen.add(index);
  }
}

export function toM3u(playlist: PlaylistView): string {
  const lines = ['#EXTM3U', `#PLAYLIST:${oneLine(playlist.name)}`];
  for (const track of playlist.tracks) {
    const seconds = track.durationMs === null ? -1 : Math.round(track.durationMs / 1000);
    lines.push(`#EXTINF:${seconds},${oneLine(track.title)}`, oneLine(track.uri));
  }
  return `${lines.join('\n')}\n`;
}

const oneLine = (text: string): string => text.replace(/[\r\n]+/g, ' ');

function view(row: PlaylistRow, tracks: TrackRow[]): PlaylistView {
  return {
    id: row.id,
    name: row.name,
    isFavorite: row.is_favorite === 1,
    tracks: tracks.map((t) => ({ id: t.id, title: t.title, uri: t.uri, durationMs: t.duration_ms })),
    createdAt: row.created_at,
  };
}
