// Opens the SQLite store (WAL, foreign keys), runs migrations, and offers transactions.

import { rmSync } from 'node:fs';
import { type FileHandle, open, truncate } from 'node:fs/promises';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { ensurePrivateDir, ensurePrivateFile, StateDirError } from '../paths.js';
import { copySyncer, newCopyFile, pruneCopies, pruneCopiesOffLoop, sealCopy } from './db-copies.js';
import { lockHolders } from './lock-holders.js';
import { MIGRATION_STEPS, MIGRATIONS } from './migrations.js';
import { openSqlite } from './sqlite.js';

export type Db = Database.Database;

/** A write attempted while a long transaction (a restore) holds the database. */
/** The page cache of a long transaction: what its commit writes at once, at most. */
const LONG_CACHE_KIB = 2048;

export class StoreBusyError extends Error {
  constructor() {
    super('the database is being replaced by a restore; try again in a few seconds');
  }
}

export class Store {
  readonly db: Db;
  /**
   * Switch the connection's synchronous level. Every write is either in the group commit (NORMAL) or in
   * transaction() (FULL), so the level is switched only when the kind of write changes, not around every commit:
   * a PRAGMA statement is compiled again each time it runs, which made the two switches a third of a group commit.
   */
  private readonly relaxed: Database.Statement;
  private readonly strict: Database.Statement;
  private level: 'FULL' | 'NORMAL' = 'FULL';
  private readonly probe: Database.Statement;
  /** One wrapper for all transactions: better-sqlite3 builds BEGIN/COMMIT statements per wrapper. */
  private readonly runInTransaction: (fn: () => unknown) => unknown;
  private readonly rollbackListeners: Array<() => void> = [];
  /** The open group commit of device-state writes, if any (see commitSoon). */
  private batch: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } | undefined;
  /** The row writes of the open group commit, the latest per row, run when it commits (see deferWrite). */
  private pending = new Map<string, () => void>();
  /** Undo steps of the commitSoon call running now; undefined outside one. */
  private undo: Array<() => void> | undefined;
  private readonly sql: Record<'begin' | 'beginImmediate' | 'commit' | 'rollback', Database.Statement>;
  /** A write transaction that spans event-loop turns is open (beginLong): every other write waits or is refused. */
  private long = false;
  /** The page cache size the connection had before a long transaction made it small. */
  private cacheSize = 0;
  /** The database file, opened to sync it during a long transaction (settleLong). */
  private longFile: FileHandle | undefined;

  /**
   * `exclusive` (the daemon's way, and the default): this connection holds SQLite's locks for as long as it is
   * open. Tests that watch commits land from a second connection turn it off.
   */
  constructor(
    readonly file: string,
    options: { exclusive?: boolean } = {},
  ) {
    // Private before SQLite opens anything: the files hold usernames, roles and password hashes.
    // (A folder that cannot hold them was refused before, with its fix: prepareStateDir in paths.ts.)
    ensurePrivateDir(path.dirname(file));
    ensurePrivateFile(file, { create: true });
    for (const suffix of ['-wal', '-shm', '-journal']) ensurePrivateFile(file + suffix);
    this.db = openSqlite(file);
    const exclusive = options.exclusive ?? true;
    // The daemon is the database's only user. Holding SQLite's locks for the connection's life spares the four
    // or five fcntl() lock calls of every transaction, keeps the WAL index in memory instead of the -shm file
    // (this must come before WAL is entered), and is the state folder's lock: a second azcd on it fails to take
    // the lock and stops at once (no busy wait) naming the process that holds it. The kernel drops the lock when
    // that process ends, however it ends, so no stale lock survives a crash or kill -9.
    if (exclusive) {
      this.db.pragma('busy_timeout = 0');
      this.db.pragma('locking_mode = EXCLUSIVE');
    }
    try {
      this.db.pragma('journal_mode = WAL');
      if (exclusive) this.db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (err) {
      this.db.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw stateInUse(file);
      throw err;
    }
    // FULL: a committed transaction survives a power cut, not only a crash of the process.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    this.migrate();
    this.relaxed = this.db.prepare('PRAGMA synchronous = NORMAL');
    this.strict = this.db.prepare('PRAGMA synchronous = FULL');
    this.checkLevels();
    this.probe = this.db.prepare('SELECT 1 AS ok');
    this.runInTransaction = this.db.transaction((fn: () => unknown) => fn());
    this.sql = {
      begin: this.db.prepare('BEGIN'),
      beginImmediate: this.db.prepare('BEGIN IMMEDIATE'),
      commit: this.db.prepare('COMMIT'),
      rollback: this.db.prepare('ROLLBACK'),
    };
  }

  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /**
   * Runs fn in one transaction, committed (synchronous=FULL) before this returns. Every write outside the group
   * commit goes through here, a single statement too: the connection may be at NORMAL since the last group commit.
   */
  transaction<T>(fn: () => T): T {
    // On the one connection, it would become part of the long transaction and go or stay with it.
    if (this.long) throw new StoreBusyError();
    // Durable writes never hide inside a pending group commit: that one is committed first.
    this.flushBatch();
    this.setLevel('FULL');
    return this.run(fn);
  }

  /** The synchronous level SQLite reports for the connection now (tests; a statement per call). */
  synchronousLevel(): 'FULL' | 'NORMAL' | 'OTHER' {
    const level = this.db.pragma('synchronous', { simple: true });
    return level === 2 ? 'FULL' : level === 1 ? 'NORMAL' : 'OTHER';
  }

  private setLevel(level: 'FULL' | 'NORMAL'): void {
    if (this.level === level) return;
    this.switchTo(level);
  }

  private switchTo(level: 'FULL' | 'NORMAL'): void {
    (level === 'FULL' ? this.strict : this.relaxed).run();
    this.level = level;
  }

  /**
   * SQLite applies a PRAGMA when it compiles it, and compiles it again on every run after the first: preparing
   * the two switches left the connection at FULL, and a first run can do nothing. Both are run once here, then
   * each is checked to take effect, so a switch that does nothing is a failed start, never a silent NORMAL.
   */
  private checkLevels(): void {
    this.switchTo('NORMAL');
    this.switchTo('FULL');
    for (const level of ['NORMAL', 'FULL'] as const) {
      this.switchTo(level);
      const now = this.synchronousLevel();
      if (now !== level)
        throw new Error(`SQLite did not switch ${this.file} to synchronous=${level} (it reports ${now})`);
    }
  }

  /**
   * Group commit for high-rate device state (volume, mute, power). Every call in the same event-loop turn joins
   * one transaction, committed with synchronous=NORMAL when the turn ends; the promise resolves once it is
   * committed, so a write is acknowledged only after it survives a crash of the process (a power cut may still
   * lose the last turn). Inside `fn`, repositories change their in-memory rows at once and hand the statement to
   * deferWrite: a row changed by several calls in one turn is written once, with its latest values. A call that
   * throws undoes only its own changes (recordUndo), in memory and among the pending writes.
   */
  commitSoon(fn: () => void): Promise<void> {
    if (!this.batch) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {
        // A batch nobody awaits must not become an unhandled rejection; its writers see the error.
      });
      this.batch = { promise, resolve, reject };
      setImmediate(() => this.flushBatch());
    }
    const outer = this.undo;
    const undo: Array<() => void> = [];
    this.undo = undo;
    try {
      fn();
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    } finally {
      this.undo = outer;
    }
    outer?.push(...undo);
    return this.batch.promise;
  }

  /**
   * Inside a commitSoon call: keeps `write` (one row's statement) to run when the group commit commits, in place
   * of an earlier write under the same `key`, and returns true. Outside one it returns false: the caller writes
   * now, in whatever transaction it is in.
   */
  deferWrite(key: string, write: () => void): boolean {
    const undo = this.undo;
    if (!undo) return false;
    const previous = this.pending.get(key);
    this.pending.set(key, write);
    undo.push(() => (previous ? this.pending.set(key, previous) : this.pending.delete(key)));
    return true;
  }

  /** Inside a commitSoon call: `step` puts back an in-memory change if the call throws. Outside one: nothing. */
  recordUndo(step: () => void): void {
    this.undo?.push(step);
  }

  /**
   * Opens a write transaction that spans event-loop turns, for work too large for one (a restore writes the rows
   * in slices and yields between them). Until commitLong or rollbackLong, transaction() throws StoreBusyError and
   * the group commit keeps its writes pending: callers see to it that nothing else writes meanwhile (the HTTP layer
   * answers 503), and reads see the transaction's state.
   */
  beginLong(): void {
    if (this.long) throw new StoreBusyError();
    this.flushBatch();
    this.setLevel('FULL');
    // Through the WAL, the transaction's pages would be copied into the database in one checkpoint after it, a
    // stall as long as the data is large (a second per million tracks here). With a rollback journal they go to the
    // database file as the cache spills, a little in each slice, and the commit writes what the (small) cache
    // holds. The journal mode goes back to WAL once the transaction ended.
    this.db.pragma('journal_mode = DELETE');
    this.db.pragma(`cache_size = -${LONG_CACHE_KIB}`);
    try {
      this.sql.beginImmediate.run();
    } catch (err) {
      this.endLong();
      throw err;
    }
    this.long = true;
  }

  /** Commits the long transaction. Device-state writes held meanwhile are dropped: the caller reloads everything. */
  async commitLong(): Promise<void> {
    this.sql.commit.run();
    await this.emptyJournal();
    this.endLong();
    const batch = this.batch;
    this.batch = undefined;
    this.pending = new Map();
    batch?.resolve();
  }

  /** Rolls the long transaction back; the device-state writes held meanwhile are committed then. */
  async rollbackLong(): Promise<void> {
    if (this.db.inTransaction) this.sql.rollback.run();
    await this.emptyJournal();
    this.endLong();
    this.rolledBack();
    this.flushBatch();
  }

  /**
   * After the long transaction ended: empties its rollback journal on libuv's thread pool. Holding the database
   * alone, SQLite keeps the journal (its header zeroed, so it is no longer a journal to replay) and deletes it when
   * the mode goes back to WAL; a journal as large as the restore's data took the kernel ~20 ms of CPU per 170 MB to
   * free, on the event loop. Nothing else uses the journal meanwhile: the store is still held (no write runs), and
   * a crash now finds a journal with a zeroed header, or none, and the transaction's outcome in the database file.
   */
  private async emptyJournal(): Promise<void> {
    await truncate(`${this.file}-journal`, 0).catch(() => {
      // No journal (nothing was written), or it cannot be emptied here: the switch back to WAL deletes it anyway.
    });
  }

  /**
   * During a long transaction: has the OS write what the transaction put in the database file so far, on libuv's
   * thread pool. The commit syncs the file on the event loop; synced along the way, it finds little left to write.
   */
  async settleLong(): Promise<void> {
    this.longFile ??= await open(this.file, 'r');
    await this.longFile.datasync();
  }

  private endLong(): void {
    this.long = false;
    void this.longFile?.close().catch(() => {
      // A read-only handle: closing it loses nothing, and a handle that will not close is freed with the process.
    });
    this.longFile = undefined;
    this.db.pragma(`cache_size = ${this.cacheSize}`);
    this.db.pragma('journal_mode = WAL');
  }

  /** Commits the pending group commit now (before a durable write, a read of whole tables, and on close). */
  flushBatch(): void {
    const batch = this.batch;
    if (!batch || this.long) return;
    this.batch = undefined;
    const writes = this.pending;
    this.pending = new Map();
    try {
      this.setLevel('NORMAL');
      this.sql.begin.run();
      for (const write of writes.values()) write();
      this.sql.commit.run();
      batch.resolve();
    } catch (err) {
      if (this.db.inTransaction) this.sql.rollback.run();
      this.rolledBack();
      batch.reject(err);
    }
  }

  /** Called after a transaction rolled back, so in-memory mirrors can reload what they changed. */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }

  private run<T>(fn: () => T): T {
    try {
      return this.runInTransaction(fn) as T;
    } catch (err) {
      this.rolledBack();
      throw err;
    }
  }

  private rolledBack(): void {
    for (const listener of this.rollbackListeners) listener();
  }

  /** A cheap liveness probe for the watchdog and health checks. */
  healthy(): boolean {
    try {
      return this.probe.get() !== undefined;
    } catch {
      return false;
    }
  }

  /**
   * Copies the database with SQLite's online backup into `<stateDir>/backups/pre-restore-<time>.sqlite3` (0600,
   * the last few kept) while it stays in use; returns the copy's path. Group-committed writes are committed first.
   */
  async backupBeforeRestore(): Promise<string> {
    this.flushBatch();
    const file = newCopyFile(this.file, 'pre-restore');
    const syncer = copySyncer(file);
    try {
      await this.db.backup(file, { progress: syncer.progress });
      await syncer.done();
      sealCopy(file);
    } catch (err) {
      await syncer.done();
      rmSync(file, { force: true });
      throw err;
    }
    await pruneCopiesOffLoop(this.file, 'pre-restore');
    return file;
  }

  close(): void {
    if (!this.db.open) return;
    if (this.long) {
      // Stopping: the journal is deleted on the event loop, with nothing left to wait for it.
      if (this.db.inTransaction) this.sql.rollback.run();
      this.endLong();
      this.rolledBack();
    }
    this.flushBatch();
    this.db.close();
  }

  /**
   * Keeps the database as it was before a schema migration in `<stateDir>/backups/pre-migration-v<from>-<time>.sqlite3`:
   * VACUUM INTO writes a consistent copy (WAL content included) before anything changes, synchronously.
   */
  private copyBeforeMigration(from: number): void {
    const file = newCopyFile(this.file, 'pre-migration', `v${from}`);
    try {
      this.db.prepare('VACUUM INTO ?').run(file);
    } catch (err) {
      // No migration without its copy: the database stays as it is, and the error says why.
      rmSync(file, { force: true });
      throw new Error(
        `cannot copy ${this.file} to ${file} before the schema migration from version ${from}: ${(err as Error).message}`,
      );
    }
    sealCopy(file);
    pruneCopies(this.file, 'pre-migration');
  }

  private migrate(): void {
    const current = this.schemaVersion;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `database ${this.file} has schema version ${current}, newer than this azcd (${MIGRATIONS.length})`,
      );
    }
    if (current === MIGRATIONS.length) return;
    if (current > 0) this.copyBeforeMigration(current);
    // Off while tables are rebuilt (SQLite's documented way): dropping a parent table would otherwise run its
    // ON DELETE actions on the rows that refer to it. Each migration checks the references before it commits.
    this.db.pragma('foreign_keys = OFF');
    try {
      for (let version = current; version < MIGRATIONS.length; version++) {
        this.db.transaction(() => {
          this.db.exec(MIGRATIONS[version]!);
          MIGRATION_STEPS[version + 1]?.(this.db);
          const broken = this.db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0)
            throw new Error(`schema migration ${version + 1} left ${broken.length} broken references in ${this.file}`);
          this.db.pragma(`user_version = ${version + 1}`);
        })();
      }
    } finally {
      this.db.pragma('foreign_keys = ON');
    }
  }
}

/** The one-line start-up error of a state folder another process holds: which one, and what to do. */
function stateInUse(file: string): StateDirError {
  const dir = path.dirname(file);
  const holders = lockHolders(file).map((h) => `pid ${h.pid}${h.command ? ` (${h.command})` : ''}`);
  const who = holders.length ? `another process, ${holders.join(', ')},` : 'another process';
  return new StateDirError(
    `the state folder ${dir} is in use: ${who} holds ${path.basename(file)}; stop it first (if it is the service: ` +
      'sudo systemctl stop azcd), or give this azcd another folder with --state-dir',
  );
}
