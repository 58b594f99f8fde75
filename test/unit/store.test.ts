// The store's transactions: group commit of device state, rollback of one failed write, durable writes first.
import t from 'tap';
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Store } from '../../daemon/store/db.js';
import { tempDir } from '../helpers/daemon.js';

function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = tempDir('azc-store-');
  const store = new Store(path.join(dir, 'azc.db'));
  store.db.exec('CREATE TABLE IF NOT EXISTS probe (k TEXT PRIMARY KEY, v INTEGER)');
  // A second connection sees only what was committed.
  const observer = new Database(path.join(dir, 'azc.db'), { readonly: true });
  const seen = (k: string) => (observer.prepare('SELECT v FROM probe WHERE k = ?').get(k) as { v: number } | undefined)?.v;
  const put = store.db.prepare('INSERT OR REPLACE INTO probe (k, v) VALUES (?, ?)');
  t.teardown(() => {
    observer.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, seen, put };
}

t.test('migrations run once and set user_version', async (t) => {
  const { store } = setup(t);
  t.ok(store.schemaVersion >= 1);
  t.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(store.db.pragma('foreign_keys', { simple: true }), 1);
});

t.test('device-state writes of one turn share a commit that lands before the promise resolves', async (t) => {
  const { store, seen, put } = setup(t);
  const a = store.commitSoon(() => put.run('a', 1));
  const b = store.commitSoon(() => put.run('b', 2));
  t.equal(a, b, 'one commit for both');
  t.equal(seen('a'), undefined, 'not visible to others before the commit');
  await a;
  t.equal(seen('a'), 1);
  t.equal(seen('b'), 2);
  t.equal(store.db.inTransaction, false);
  t.equal(store.db.pragma('synchronous', { simple: true }), 2, 'back to FULL after the group commit');
});

t.test('a device-state write that throws rolls back only its own changes', async (t) => {
  const { store, seen, put } = setup(t);
  const ok = store.commitSoon(() => put.run('kept', 1));
  t.throws(() =>
    store.commitSoon(() => {
      put.run('dropped', 1);
      throw new Error('boom');
    }),
  );
  await ok;
  t.equal(seen('kept'), 1);
  t.equal(seen('dropped'), undefined);
});

t.test('a durable transaction commits a pending group commit first, then itself', async (t) => {
  const { store, seen, put } = setup(t);
  const pending = store.commitSoon(() => put.run('state', 1));
  store.transaction(() => put.run('account', 1));
  t.equal(seen('state'), 1, 'the device state was committed first');
  t.equal(seen('account'), 1, 'the durable write is committed when transaction() returns');
  await pending;
});

t.test('closing commits what is pending', async (t) => {
  const dir = tempDir('azc-store-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(path.join(dir, 'azc.db'));
  store.db.exec('CREATE TABLE probe (k TEXT PRIMARY KEY, v INTEGER)');
  void store.commitSoon(() => store.db.prepare('INSERT INTO probe VALUES (?, ?)').run('late', 7));
  store.close();
  const reopened = new Database(path.join(dir, 'azc.db'));
  t.equal((reopened.prepare('SELECT v FROM probe WHERE k = ?').get('late') as { v: number }).v, 7);
  reopened.close();
});
