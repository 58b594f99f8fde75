// Opens the SQLite store (WAL, foreign keys), runs migrations, and offers transactions.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

export class Store {
  readonly db: Db;
  private readonly relaxed: Database.Statement;
  private readonly strict: Database.Statement;
  private readonly probe: Database.Statement;
  /** One wrapper for all transactions: better-sqlite3 builds BEGIN/COMMIT statements per wrapper. */
  private readonly runInTransaction: (fn: () => unknown) => unknown;
  private readonly rollbackListeners: Array<() => void> = [];

  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed transaction survives a power cut, not only a crash of the process.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.relaxed = this.db.prepare('PRAGMA synchronous = NORMAL');
    this.strict = this.db.prepare('PRAGMA synchronous = FULL');
    this.probe = this.db.prepare('SELECT 1 AS ok');
    this.runInTransaction = this.db.transaction((fn: () => unknown) => fn());
  }

  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /**
   * Runs fn in one transaction. `durable: false` is for high-rate device state (volume, mute, power):
   * it survives a crash of the process but a power cut may lose the last fraction of a second.
   */
  transaction<T>(fn: () => T, durable = true): T {
    // A nested call joins the outer transaction (better-sqlite3 makes it a savepoint).
    if (durable || this.db.inTransaction) return this.run(fn);
    this.relaxed.run();
    try {
      return this.run(fn);
    } finally {
      this.strict.run();
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
      for (const listener of this.rollbackListeners) listener();
      throw err;
    }
  }

  /** A cheap liveness probe for the watchdog and health checks. */
  healthy(): boolean {
    try {
      return this.probe.get() !== undefined;
    } catch {
      return false;
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private migrate(): void {
    const current = this.schemaVersion;
    if (current > MIGRATIONS.length) {
      throw new Error(`database ${this.file} has schema version ${current}, newer than this azcd (${MIGRATIONS.length})`);
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[version]!);
        this.db.pragma(`user_version = ${version + 1}`);
      })();
    }
  }
}
