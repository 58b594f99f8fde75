// Fills a test daemon's database with many playlists of many tracks in a few SQL statements (the API would take
// minutes): the configurations the limits allow, for tests that show large work is sliced.
import type Database from 'better-sqlite3';

/** The id of track `track` of playlist `playlist`: deterministic, so a test can name one. */
export const bigTrackId = (playlist: number, track: number) =>
  `${playlist.toString(16).padStart(8, '0')}-0000-4000-8000-${track.toString(16).padStart(12, '0')}`;
export const bigPlaylistId = (playlist: number) =>
  `${playlist.toString(16).padStart(8, '0')}-0000-4000-9000-000000000000`;

/**
 * Adds `playlists` playlists of `tracks` tracks each (titles and URIs of a realistic length, durations known),
 * with their counts kept in their rows as the service keeps them, in one transaction (`transaction`: the store's,
 * for a running daemon's database).
 */
export function fillPlaylists(
  db: Database.Database,
  playlists: number,
  tracks: number,
  transaction: (fn: () => void) => void = (fn) => db.transaction(fn)(),
): void {
  transaction(() => {
    const playlist = db.prepare(
      `INSERT INTO playlists (id, name, is_favorite, created_at, track_count, duration_ms) VALUES (?, ?, 0, ?, ?, ?)`,
    );
    const fill = db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @count)
       INSERT INTO tracks (id, playlist_id, position, title, uri, duration_ms)
       SELECT printf('%08x-0000-4000-8000-%012x', @p, i), @id, i, printf('Track %d of playlist %d, a title of some length', i, @p),
              printf('file:///srv/music/library/artist-%d/album-%d/%05d-a-file-name-of-some-length.flac', @p, i / 12, i), 200000 + i
       FROM n`,
    );
    for (let p = 0; p < playlists; p++) {
      const id = bigPlaylistId(p);
      playlist.run(
        id,
        `Playlist ${p}`,
        new Date(Date.UTC(2026, 0, 1, 0, 0, p)).toISOString(),
        tracks,
        tracks * 200000 + (tracks * (tracks - 1)) / 2,
      );
      if (tracks > 0) fill.run({ p, count: tracks, id });
    }
  });
}
