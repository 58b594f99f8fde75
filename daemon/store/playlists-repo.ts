// Playlists and their ordered tracks.
import type { Db } from './db.js';

export interface PlaylistRow {
  id: string;
  name: string;
  is_favorite: number;
  created_at: string;
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
    this.s = {
      insert: db.prepare('INSERT INTO playlists (id, name, is_favorite, created_at) VALUES (@id, @name, @is_favorite, @created_at)'),
      byId: db.prepare('SELECT * FROM playlists WHERE id = ?'),
      list: db.prepare('SELECT * FROM playlists ORDER BY created_at, name'),
      remove: db.prepare('DELETE FROM playlists WHERE id = ?'),
      setFavorite: db.prepare('UPDATE playlists SET is_favorite = ? WHERE id = ?'),
      tracks: db.prepare('SELECT * FROM tracks WHERE playlist_id = ? ORDER BY position'),
      allTracks: db.prepare('SELECT * FROM tracks ORDER BY playlist_id, position'),
      insertTrack: db.prepare(
        `INSERT INTO tracks (id, playlist_id, position, title, uri, duration_ms)
         VALUES (@id, @playlist_id, @position, @title, @uri, @duration_ms)`,
      ),
      deleteTrack: db.prepare('DELETE FROM tracks WHERE id = ?'),
      setPosition: db.prepare('UPDATE tracks SET position = ? WHERE id = ?'),
    };
  }

  insert(row: PlaylistRow): void {
    this.s.insert.run(row);
  }
  byId(id: string): PlaylistRow | undefined {
    return this.s.byId.get(id) as PlaylistRow | undefined;
  }
  list(): PlaylistRow[] {
    return this.s.list.all() as PlaylistRow[];
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
  /** Every track of every playlist, grouped by playlist id (one query for a list view). */
  tracksByPlaylist(): Map<string, TrackRow[]> {
    const grouped = new Map<string, TrackRow[]>();
    for (const row of this.s.allTracks.all() as TrackRow[]) {
      let list = grouped.get(row.playlist_id);
      if (!list) grouped.set(row.playlist_id, (list = []));
      list.push(row);
    }
    return grouped;
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
