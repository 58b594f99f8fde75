// Copies of the database kept in <stateDir>/backups/ before a schema migration or a restore: private files, the
// last few of each kind, so a change that went wrong can be undone by hand (stop azcd, copy one back as azc.db).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../paths.js';
import { openSqlite } from './sqlite.js';

/** Copies kept per kind; older ones are removed once a new one is complete. */
export const KEPT_COPIES = 5;

export type CopyKind = 'pre-migration' | 'pre-restore';

/** `<stateDir>/backups` for the database file `<stateDir>/azc.db`. */
export function copiesDir(databaseFile: string): string {
  return path.join(path.dirname(databaseFile), 'backups');
}

/**
 * Creates the private directory and a new empty 0600 file for a copy, named so that names sort by time:
 * `<kind>[-<detail>]-<UTC timestamp>.sqlite3`. Empty, because SQLite copies only into a new or empty file.
 */
export function newCopyFile(databaseFile: string, kind: CopyKind, detail?: string, now = new Date()): string {
  const dir = copiesDir(databaseFile);
  ensurePrivateDir(dir);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const base = `${kind}${detail ? `-${detail}` : ''}-${stamp}`;
  let file = path.join(dir, `${base}.sqlite3`);
  for (let n = 2; existsSync(file); n++) file = path.join(dir, `${base}-${n}.sqlite3`);
  ensurePrivateFile(file, { create: true });
  return file;
}

/** Removes all but the newest KEPT_COPIES copies of a kind (the timestamp in the name orders them). */
export function pruneCopies(databaseFile: string, kind: CopyKind, keep = KEPT_COPIES): void {
  for (const file of surplusCopies(databaseFile, kind, keep)) rmSync(file, { force: true });
}

/**
 * pruneCopies on libuv's thread pool, for a daemon that is serving: each copy is as large as the database, and the
 * kernel frees a removed file's blocks in the call that removes it (~20 ms of CPU per 170 MB here).
 */
export async function pruneCopiesOffLoop(databaseFile: string, kind: CopyKind, keep = KEPT_COPIES): Promise<void> {
  for (const file of surplusCopies(databaseFile, kind, keep)) await rm(file, { force: true });
}

/** The files of the copies of a kind beyond the newest `keep`, with what SQLite may have left beside them. */
function surplusCopies(databaseFile: string, kind: CopyKind, keep: number): string[] {
  const dir = copiesDir(databaseFile);
  const pattern = new RegExp(`^${kind}-.*\\d{4}-\\d{2}-\\d{2}T[0-9-]+Z(-\\d+)?\\.sqlite3$`);
  const copies = readdirSync(dir)
    .filter((name) => pattern.test(name))
    .sort((a, b) => stampOf(a).localeCompare(stampOf(b)) || serialOf(a) - serialOf(b));
  return copies
    .slice(0, Math.max(0, copies.length - keep))
    .flatMap((name) => ['', '-wal', '-shm', '-journal'].map((suffix) => path.join(dir, name + suffix)));
}

/** Pages better-sqlite3's backup copies per step (its own default), and copied between two syncs of the copy. */
const STEP_PAGES = 100;
const SYNC_PAGES = 5000;

/**
 * A progress handler for better-sqlite3's backup() that has the OS write the copy to disk as it grows, on libuv's
 * thread pool. SQLite syncs the copy when the backup's last step commits, on the event loop: the kernel then wrote
 * out everything not yet written, 42-45 ms of its CPU (and far longer waiting for the disk) for a copy of a database
 * filled to half the limits. `done` waits for the sync under way and closes the file.
 */
export function copySyncer(file: string): {
  progress: (p: { totalPages: number; remainingPages: number }) => number;
  done: () => Promise<void>;
} {
  let handle: Promise<FileHandle> | undefined;
  let syncing: Promise<void> | undefined;
  let syncedAt = 0;
  return {
    progress({ totalPages, remainingPages }) {
      const copied = totalPages - remainingPages;
      if (!syncing && copied - syncedAt >= SYNC_PAGES) {
        syncedAt = copied;
        handle ??= open(file, 'r');
        // A sync that fails changes nothing: SQLite's own sync at the end still decides whether the copy is made.
        syncing = handle
          .then((h) => h.datasync())
          .then(
            () => (syncing = undefined),
            () => (syncing = undefined),
          );
      }
      return STEP_PAGES;
    },
    async done() {
      await syncing;
      await handle
        ?.then((h) => h.close())
        .catch(() => {
          // The copy is complete and synced: a handle that will not open or close again changes nothing in it.
        });
    },
  };
}

/**
 * Makes a finished copy one self-contained file: SQLite copies the source's WAL mode into it, and a copy in WAL mode
 * grows -wal and -shm files beside it whenever someone opens it to look.
 */
export function sealCopy(file: string): void {
  const copy = openSqlite(file);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  ensurePrivateFile(file);
}

/** The -<n> a copy made in the same millisecond as another carries (newCopyFile); 1 for the first. */
function serialOf(name: string): number {
  return Number(/Z-(\d+)\.sqlite3$/.exec(name)?.[1] ?? 1);
}

/** The timestamp part of a copy's name, so copies from different schema versions still sort by time. */
function stampOf(name: string): string {
  return /\d{4}-\d{2}-\d{2}T[0-9-]+Z/.exec(name)?.[0] ?? name;
}
