// Playlists and their ordered tracks.
import type { Db } from './db.js';
import { preparedOnUse } from './statements.js';

export interface PlaylistRow {
  id: string;
  name: string;
  is_favorite: number;
  created_at: string;
}

/**
 * A playlist with its track count and the sum of its known durations, kept in its row by every write of its tracks
 * (in the same transaction), so the list never reads tracks.
 */
export interface PlaylistSummaryRow extends PlaylistRow {
  track_count: number;
  duration_ms: number;
}

export interface TrackRow {
  id: string;
  playlist_id: string;
  position: number;
  title: string;
  uri: string;
  duration_ms: number | null;
}

export class PlaylistsRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = preparedOnUse({
      insert: () =>
        db.prepare(
          'INSERT INTO playlists (id, name, is_favorite, created_at) VALUES (@id, @name, @is_favorite, @created_at)',
        ),
      byId: () => db.prepare('SELECT * FROM playlists WHERE id = ?'),
      count: () => db.prepare('SELECT COUNT(*) FROM playlists').pluck(),
      // One row per playlist, through the playlists_order index; id breaks ties so pages never overlap or skip.
      summaries: () =>
        db.prepare(
          `SELECT id, name, is_favorite, created_at, track_count, duration_ms FROM playlists ORDER BY created_at, name, id LIMIT ? OFFSET ?`,
        ),
      adjustSummary: () =>
        db.prepare('UPDATE playlists SET track_count = track_count + ?, duration_ms = duration_ms + ? WHERE id = ?'),
      remove: () => db.prepare('DELETE FROM playlists WHERE id = ?'),
      setFavorite: () => db.prepare('UPDATE playlists SET is_favorite = ? WHERE id = ?'),
      tracks: () => db.prepare('SELECT * FROM tracks WHERE playlist_id = ? ORDER BY position'),
      trackCount: () => db.prepare('SELECT track_count FROM playlists WHERE id = ?').pluck(),
      insertTrack: () =>
        db.prepare(
          `INSERT INTO tracks (id, playlist_id, position, title, uri, duration_ms)
         VALUES (@id, @playlist_id, @position, @title, @uri, @duration_ms)`,
        ),
      deleteTrack: () => db.prepare('DELETE FROM tracks WHERE id = ?'),
      setPosition: () => db.prepare('UPDATE tracks SET position = ? WHERE id = ?'),
    });
  }

  insert(row: PlaylistRow): void {
    this.s.insert.run(row);
  }
  byId(id: string): PlaylistRow | undefined {
    return this.s.byId.get(id) as PlaylistRow | undefined;
  }
  count(): number {
    return this.s.count.get() as number;
  }
  summaries(limit: number, offset: number): PlaylistSummaryRow[] {
    return this.s.summaries.all(limit, offset) as PlaylistSummaryRow[];
  }
  remove(id: string): void {
    this.s.remove.run(id);
  }
  setFavorite(id: string, isFavorite: boolean): void {
    this.s.setFavorite.run(isFavorite ? 1 : 0, id);
  }
  tracks(playlistId: string): TrackRow[] {
    return this.s.tracks.all(playlistId) as TrackRow[];
  }
  trackCount(playlistId: string): number {
    return (this.s.trackCount.get(playlistId) as number | undefined) ?? 0;
  }
  /** Adds to a playlist's track count and duration sum: every insert and delete of its tracks calls it. */
  adjustSummary(playlistId: string, tracks: number, durationMs: number): void {
    this.s.adjustSummary.run(tracks, durationMs, playlistId);
  }
  insertTrack(row: TrackRow): void {
    this.s.insertTrack.run(row);
  }
  deleteTrack(id: string): void {
    this.s.deleteTrack.run(id);
  }
  /** Rewrites positions 0..n-1 in the given order. */
  setOrder(trackIds: string[]): void {
    trackIds.forEach((id, position) => this.s.setPosition.run(position, id));
  }
}
