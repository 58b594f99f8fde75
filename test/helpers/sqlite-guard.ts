// Makes a test fail when a write outside a transaction runs while the connection is at synchronous=NORMAL.
//
// The store leaves the connection at NORMAL after a group commit and goes back to FULL only in transaction()
// (daemon/store/db.ts), so a repository write made outside both would be committed without FULL's sync: a
// power cut could lose it. Every test process that runs the store in-process (the in-process daemon, the audio and
// accounts rigs, the store's own tests) loads this, so such a write fails the test that reaches it instead of
// passing unnoticed.
import Database from 'better-sqlite3';

// ATTACH and DETACH change the connection (a restore's private staging database), not what is stored.
const CONTROL = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA|ATTACH|DETACH)\b/i;

type Run = ((this: Database.Statement, ...params: unknown[]) => Database.RunResult) & { guarded?: true };

const probe = new Database(':memory:');
const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as { run: Run };
probe.close();
// Once per process, though a grouped test bundle may evaluate this module once per test file.
if (!statement.run.guarded) {
  const run = statement.run;
  const guarded: Run = function (this: Database.Statement, ...params: unknown[]) {
    const db = this.database;
    if (!this.reader && !db.inTransaction && !CONTROL.test(this.source) && db.name !== ':memory:') {
      const level = db.pragma('synchronous', { simple: true });
      if (level !== 2) {
        throw new Error(
          `a write outside store.transaction() ran at synchronous=${level === 1 ? 'NORMAL' : level}: ${this.source.trim().slice(0, 80)}`,
        );
      }
    }
    return run.apply(this, params);
  };
  guarded.guarded = true;
  statement.run = guarded;
}
