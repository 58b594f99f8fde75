// Where a restore keeps the tracks of the backup it reads until the whole document has been checked: a private
// database file beside the store's, removed off the event loop when the restore ends.
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateFile } from '../paths.js';
import type { Store } from './db.js';

/** The staging files' names: `restore-staging-<uuid>.sqlite3` in the state folder. */
const PREFIX = 'restore-staging-';

/** A track as staged: `playlist` is the index of its playlist in the document (its id may come after its tracks). */
export interface StagedTrack {
  id: string;
  playlist: number;
  position: number;
  title: string;
  uri: string;
  duration_ms: number | null;
}

export class RestoreStaging {
  private readonly s;
  private readonly file: string;
  private open = true;

  constructor(private readonly store: Store) {
    const db = store.db;
    // A file of its own rather than SQLite's anonymous temporary one: the kernel frees a removed file's blocks in the
    // call that drops its last name or descriptor, ~20 ms of CPU per 170 MB staged, and only a file with a name can
    // be removed on libuv's thread pool after SQLite closed it (close). Private (0600 in the 0700 state folder),
    // unique, so a new restore never meets the one of an earlier restore still being removed.
    const dir = path.dirname(store.file);
    // What a daemon stopped during a restore left.
    for (const name of readdirSync(dir)) if (name.startsWith(PREFIX)) removeOffLoop(path.join(dir, name));
    this.file = path.join(dir, `${PREFIX}${randomUUID()}.sqlite3`);
    ensurePrivateFile(this.file, { create: true });
    db.prepare('ATTACH DATABASE ? AS restore_staging').run(this.file);
    // Staged rows need no durability: a crash ends the restore anyway.
    db.pragma('restore_staging.synchronous = OFF');
    db.pragma('restore_staging.journal_mode = OFF');
    db.exec(`
      CREATE TABLE restore_staging.tracks (
        id TEXT PRIMARY KEY, playlist INTEGER NOT NULL, position INTEGER NOT NULL, title TEXT NOT NULL, uri TEXT NOT NULL, duration_ms INTEGER
      );
      CREATE TABLE restore_staging.playlists (idx INTEGER PRIMARY KEY, id TEXT NOT NULL);
    `);
    this.s = {
      add: db.prepare(
        `INSERT OR IGNORE INTO restore_staging.tracks (id, playlist, position, title, uri, duration_ms)
         VALUES (@id, @playlist, @position, @title, @uri, @duration_ms)`,
      ),
      playlist: db.prepare('INSERT INTO restore_staging.playlists (idx, id) VALUES (?, ?)'),
      // Staged rows are numbered 1..n in order (an ignored duplicate takes no rowid), so a slice is a rowid range.
      copy: db.prepare(
        `INSERT INTO main.tracks (id, playlist_id, position, title, uri, duration_ms)
         SELECT t.id, p.id, t.position, t.title, t.uri, t.duration_ms
         FROM restore_staging.tracks t JOIN restore_staging.playlists p ON p.idx = t.playlist
         WHERE t.rowid > ? AND t.rowid <= ?`,
      ),
    };
  }

  /** Stages tracks in one transaction; returns those whose id was staged before (each id is used once). */
  add(tracks: readonly StagedTrack[]): StagedTrack[] {
    const repeated: StagedTrack[] = [];
    this.store.transaction(() => {
      for (const track of tracks) if (this.s.add.run(track).changes === 0) repeated.push(track);
    });
    return repeated;
  }

  /** Inside the restore's long transaction: the ids of the document's playlists, by index. */
  setPlaylists(ids: readonly string[]): void {
    ids.forEach((id, idx) => this.s.playlist.run(idx, id));
  }

  /** Inside the restore's long transaction: copies staged tracks `from` < number <= `to` into the tracks table. */
  copy(from: number, to: number): void {
    this.s.copy.run(from, to);
  }

  /** Drops everything staged (outside any transaction: after the restore committed or rolled back). */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.store.db.prepare('DETACH DATABASE restore_staging').run();
    removeOffLoop(this.file);
  }
}

/** Removes a staging file on libuv's thread pool; one that cannot be removed now goes with the next restore. */
function removeOffLoop(file: string): void {
  void rm(file, { force: true }).catch(() => {
    // Left for the next restore to remove.
  });
}
