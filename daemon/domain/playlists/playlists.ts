// Playlists: tracks, reordering by permutation, favorites, caps from config.limits, the summary list and M3U export.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Store } from '../../store/db.js';
import type { PlaylistRow, PlaylistSummaryRow, PlaylistsRepo, TrackRow } from '../../store/playlists-repo.js';
import type { Caller, EventBus, PlaylistChangeReason } from '../shared/index.js';
import { conflict, invalid, notFound, requireWriter } from '../shared/index.js';
import { checkExportPath, ExportDirectory } from './export-path.js';
import { unplayableTracks } from './track-warnings.js';

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

/** The answer to adding tracks: the playlist, and why stream players cannot play some of the tracks just added. */
export interface PlaylistWithWarnings extends PlaylistView {
  warnings: string[];
}

/** A playlist in the list: its size instead of its tracks, so the list stays small however long they get. */
export interface PlaylistSummary {
  id: string;
  name: string;
  isFavorite: boolean;
  trackCount: number;
  /** The sum of the known track durations. */
  durationMs: number;
  createdAt: string;
}

export type PlaylistLimits = Pick<
  Config['limits'],
  'playlists' | 'tracksPerPlaylist' | 'exportFiles' | 'exportBytes' | 'playlistPageDefault' | 'playlistPageMax'
>;

export class PlaylistsService {
  private readonly exports: ExportDirectory;

  constructor(
    private readonly store: Store,
    private readonly repo: PlaylistsRepo,
    private readonly bus: EventBus,
    exportDir: string,
    readonly limits: PlaylistLimits,
    /** playback.streamHosts: where a stream may come from besides the usual ports (for the warnings). */
    private readonly streamHosts: readonly string[] = [],
  ) {
    this.exports = new ExportDirectory(exportDir, limits);
  }

  /** One page of the list in creation order, and the total for paging (both read in the same turn). */
  page(limit: number, offset: number): { items: PlaylistSummary[]; total: number } {
    return { items: this.repo.summaries(limit, offset).map(summary), total: this.repo.count() };
  }

  get(id: string): PlaylistView {
    const row = this.row(id);
    return view(row, this.repo.tracks(id));
  }

  create(caller: Caller, input: { name: string; tracks?: TrackInput[] }): PlaylistWithWarnings {
    requireWriter(caller);
    const id = randomUUID();
    this.store.transaction(() => {
      const count = this.repo.count();
      if (count >= this.limits.playlists) {
        throw conflict(
          `the appliance holds at most ${this.limits.playlists} playlists and has ${count}; delete one before creating another`,
        );
      }
      this.checkTrackRoom(0, input.tracks?.length ?? 0);
      this.repo.insert({ id, name: input.name, is_favorite: 0, created_at: new Date().toISOString() });
      this.insertTracks(id, 0, input.tracks ?? []);
    });
    this.changed(id, 'created');
    return { ...this.get(id), warnings: unplayableTracks(input.tracks ?? [], this.streamHosts) };
  }

  remove(caller: Caller, id: string): void {
    requireWriter(caller);
    this.store.transaction(() => {
      this.row(id);
      this.repo.remove(id);
    });
    this.changed(id, 'deleted');
  }

  appendTracks(caller: Caller, id: string, tracks: TrackInput[]): PlaylistWithWarnings {
    requireWriter(caller);
    this.store.transaction(() => {
      this.row(id);
      const existing = this.repo.trackCount(id);
      this.checkTrackRoom(existing, tracks.length);
      this.insertTracks(id, existing, tracks);
    });
    this.changed(id, 'tracksAdded');
    return { ...this.get(id), warnings: unplayableTracks(tracks, this.streamHosts) };
  }

  /** Removes tracks by id; any id not in the playlist fails the whole request. */
  removeTracks(caller: Caller, id: string, trackIds: string[]): void {
    requireWriter(caller);
    this.store.transaction(() => {
      this.row(id);
      const tracks = this.repo.tracks(id);
      const present = new Set(tracks.map((t) => t.id));
      const wanted = new Set(trackIds);
      const missing = [...wanted].filter((t) => !present.has(t));
      if (missing.length) {
        throw invalid(`unknown track ids in this playlist: ${missing.join(', ')}`, {
          trackIds: [`unknown track ids: ${missing.join(', ')}`],
        });
      }
      for (const trackId of wanted) this.repo.deleteTrack(trackId);
      const removed = tracks.filter((t) => wanted.has(t.id));
      this.repo.adjustSummary(id, -removed.length, -removed.reduce((sum, t) => sum + (t.duration_ms ?? 0), 0));
      this.repo.setOrder(tracks.filter((t) => !wanted.has(t.id)).map((t) => t.id));
    });
    this.changed(id, 'tracksRemoved');
  }

  /** `newOrder[i]` is the current index of the track that moves to position i. */
  reorder(caller: Caller, id: string, newOrder: number[]): void {
    requireWriter(caller);
    this.store.transaction(() => {
      this.row(id);
      const tracks = this.repo.tracks(id);
      checkPermutation(newOrder, tracks.length);
      this.repo.setOrder(newOrder.map((index) => tracks[index]!.id));
    });
    this.changed(id, 'reordered');
  }

  setFavorite(caller: Caller, id: string, isFavorite: boolean): void {
    requireWriter(caller);
    const row = this.row(id);
    this.store.transaction(() => this.repo.setFavorite(id, isFavorite));
    if ((row.is_favorite === 1) !== isFavorite) this.changed(id, 'favorite');
  }

  /**
   * Writes the playlist as extended M3U inside the export directory. Exports wait their turn, so the playlist is
   * read when the write starts, and just before the file is put in place `revalidate` gives the caller as it is
   * now (its front door re-resolves it, failing if the caller is gone) and the policy is applied again.
   */
  async export(caller: Caller, id: string, filePath: string, revalidate: () => Caller): Promise<string> {
    requireWriter(caller);
    const segments = checkExportPath(filePath);
    this.row(id);
    await this.exports.write(segments, {
      render: () => toM3u(this.get(id)),
      authorize: () => requireWriter(revalidate()),
    });
    const relative = segments.join('/');
    this.bus.publish({ type: 'playlist.exported', payload: { playlistId: id, filePath: relative } });
    return relative;
  }

  private insertTracks(playlistId: string, start: number, tracks: TrackInput[]): void {
    this.repo.adjustSummary(
      playlistId,
      tracks.length,
      tracks.reduce((sum, t) => sum + (t.durationMs ?? 0), 0),
    );
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

  private checkTrackRoom(existing: number, adding: number): void {
    const cap = this.limits.tracksPerPlaylist;
    if (existing + adding > cap) {
      throw conflict(
        `a playlist holds at most ${cap} tracks; this one has ${existing} and ${adding} more do not fit (at most ${Math.max(0, cap - existing)} do)`,
      );
    }
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
    throw invalid(`"newOrder" ${why}`, { newOrder: [why] });
  };
  if (order.length !== length) fail(`must list all ${length} track positions, got ${order.length}`);
  const seen = new Set<number>();
  for (const index of order) {
    if (!Number.isInteger(index) || index < 0 || index >= length)
      fail(`must hold integers from 0 to ${length - 1}, got ${index}`);
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

function summary(row: PlaylistSummaryRow): PlaylistSummary {
  return {
    id: row.id,
    name: row.name,
    isFavorite: row.is_favorite === 1,
    trackCount: row.track_count,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
  };
}

function view(row: PlaylistRow, tracks: TrackRow[]): PlaylistView {
  return {
    id: row.id,
    name: row.name,
    isFavorite: row.is_favorite === 1,
    tracks: tracks.map((t) => ({ id: t.id, title: t.title, uri: t.uri, durationMs: t.duration_ms })),
    createdAt: row.created_at,
  };
}
