// The store's transactions (group commit of device state, rollback of one failed write, durable writes first),
// migrations, and the repositories' own rules.

import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Store } from '../../daemon/store/db.js';
import { MetaRepo } from '../../daemon/store/meta-repo.js';
import { MIGRATIONS } from '../../daemon/store/migrations.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { tempDir } from '../helpers/daemon.js';

function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = tempDir('azc-store-');
  // Shared locking, so that a second connection can watch: it sees only what was committed.
  const store = new Store(path.join(dir, 'azc.db'), { exclusive: false });
  store.db.exec('CREATE TABLE IF NOT EXISTS probe (k TEXT PRIMARY KEY, v INTEGER)');
  const observer = new Database(path.join(dir, 'azc.db'), { readonly: true });
  const seen = (k: string) =>
    (observer.prepare('SELECT v FROM probe WHERE k = ?').get(k) as { v: number } | undefined)?.v;
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
  const a = store.commitSoon(() => store.deferWrite('a', () => put.run('a', 1)));
  const b = store.commitSoon(() => store.deferWrite('b', () => put.run('b', 2)));
  t.equal(a, b, 'one commit for both');
  t.equal(seen('a'), undefined, 'not visible to others before the commit');
  await a;
  t.equal(seen('a'), 1);
  t.equal(seen('b'), 2);
  t.equal(store.db.inTransaction, false);
  t.equal(store.synchronousLevel(), 'NORMAL', 'left at NORMAL for the next group commit');
  store.transaction(() => put.run('c', 3));
  t.equal(store.synchronousLevel(), 'FULL', 'a durable write switches back to FULL');
});

t.test('a row written several times in one turn is written once, with its latest values', async (t) => {
  const { store, seen, put } = setup(t);
  const runs: number[] = [];
  const write = (v: number) =>
    store.commitSoon(() =>
      store.deferWrite('row', () => {
        runs.push(v);
        put.run('row', v);
      }),
    );
  void write(1);
  void write(2);
  await write(3);
  t.same(runs, [3], 'only the last write of the turn ran');
  t.equal(seen('row'), 3);
  await write(4);
  t.same(runs, [3, 4], 'the next turn writes again');
});

t.test('outside a group-commit call deferWrite declines and recordUndo does nothing', async (t) => {
  const { store } = setup(t);
  let ran = false;
  t.equal(
    store.deferWrite('x', () => (ran = true)),
    false,
  );
  store.recordUndo(() => (ran = true));
  t.equal(ran, false);
});

t.test('a device-state write that throws undoes only its own changes', async (t) => {
  const { store, seen, put } = setup(t);
  const memory = new Map<string, number>();
  const change = (key: string, v: number) => {
    const before = memory.get(key);
    memory.set(key, v);
    store.recordUndo(() => (before === undefined ? memory.delete(key) : memory.set(key, before)));
    store.deferWrite(key, () => put.run(key, v));
  };
  const ok = store.commitSoon(() => {
    change('kept', 1);
    change('shared', 1);
  });
  t.throws(
    () =>
      store.commitSoon(() => {
        change('shared', 2);
        change('dropped', 1);
        throw new Error('boom');
      }),
    { message: 'boom' },
  );
  t.same(Object.fromEntries(memory), { kept: 1, shared: 1 }, "the failed call's in-memory changes are put back");
  await ok;
  t.equal(seen('kept'), 1);
  t.equal(seen('shared'), 1, "the earlier call's write of the same row is the one committed");
  t.equal(seen('dropped'), undefined);
});

t.test(
  'a group commit that fails rejects every write in it, commits none, and tells the rollback listeners',
  async (t) => {
    const { store, seen, put } = setup(t);
    let rollbacks = 0;
    store.onRollback(() => rollbacks++);
    const a = store.commitSoon(() => store.deferWrite('a', () => put.run('a', 1)));
    const b = store.commitSoon(() =>
      store.deferWrite('b', () => {
        throw new Error('disk full');
      }),
    );
    await t.rejects(a, { message: 'disk full' });
    await t.rejects(b, { message: 'disk full' });
    t.equal(seen('a'), undefined, 'nothing of the batch was committed');
    t.equal(rollbacks, 1);
    t.equal(store.db.inTransaction, false);
    store.transaction(() => put.run('d', 4));
    t.equal(store.synchronousLevel(), 'FULL', 'a durable write after the failed group commit runs at FULL');
    await store.commitSoon(() => store.deferWrite('c', () => put.run('c', 3)));
    t.equal(seen('c'), 3, 'the next turn commits again');
  },
);

t.test('a durable transaction commits a pending group commit first, then itself', async (t) => {
  const { store, seen, put } = setup(t);
  const pending = store.commitSoon(() => store.deferWrite('state', () => put.run('state', 1)));
  store.transaction(() => put.run('account', 1));
  t.equal(seen('state'), 1, 'the device state was committed first');
  t.equal(seen('account'), 1, 'the durable write is committed when transaction() returns');
  await pending;
});

t.test('group commits run at synchronous=NORMAL and transactions at FULL, as SQLite itself reports', async (t) => {
  const { store, put } = setup(t);
  t.equal(store.synchronousLevel(), 'FULL', 'a new store is at FULL');
  const levels: string[] = [];
  const durable = () => store.transaction(() => levels.push(`transaction ${store.synchronousLevel()}`));
  const grouped = () =>
    store.commitSoon(() =>
      store.deferWrite('g', () => {
        levels.push(`group ${store.synchronousLevel()}`);
        put.run('g', 1);
      }),
    );
  // Each kind twice in a row and alternating: a switch that did nothing would show here.
  for (const step of [grouped, grouped, durable, durable, grouped, durable, grouped, grouped, durable]) {
    const done = step();
    if (done instanceof Promise) await done;
  }
  t.same(levels, [
    'group NORMAL',
    'group NORMAL',
    'transaction FULL',
    'transaction FULL',
    'group NORMAL',
    'transaction FULL',
    'group NORMAL',
    'group NORMAL',
    'transaction FULL',
  ]);
  await grouped();
  t.equal(store.synchronousLevel(), 'NORMAL', 'the level stays where the last commit left it');
});

t.test('closing commits what is pending', async (t) => {
  const dir = tempDir('azc-store-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new Store(path.join(dir, 'azc.db'));
  store.db.exec('CREATE TABLE probe (k TEXT PRIMARY KEY, v INTEGER)');
  const insert = store.db.prepare('INSERT INTO probe VALUES (?, ?)');
  void store.commitSoon(() => store.deferWrite('late', () => insert.run('late', 7)));
  store.close();
  const reopened = new Database(path.join(dir, 'azc.db'));
  t.equal((reopened.prepare('SELECT v FROM probe WHERE k = ?').get('late') as { v: number }).v, 7);
  reopened.close();
});

t.test('a database of schema version 1 is migrated: its users are not asked to replace their passwords', async (t) => {
  const dir = tempDir('azc-store-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azc.db');
  const old = new Database(file);
  old.exec(MIGRATIONS[0]!);
  old.pragma('user_version = 1');
  old
    .prepare(
      `INSERT INTO users (id, username, role, password_hash, created_at) VALUES ('u1', 'admin', 'Admin', 'scrypt$x', '2026-01-01T00:00:00Z')`,
    )
    .run();
  old.close();
  const store = new Store(file);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion, MIGRATIONS.length);
  const users = new UsersRepo(store.db);
  t.equal(users.byId('u1')?.password_change_required, 0);
  users.trustAddress('u1', '192.0.2.1', 1, 8);
  t.same(users.trustedAddresses('u1'), ['192.0.2.1'], 'the trusted-address table exists');
});

t.test('trusted addresses are kept per user, newest first, and go with the user', async (t) => {
  const { store } = setup(t);
  const users = new UsersRepo(store.db);
  for (const id of ['a', 'b']) {
    users.insert({
      id,
      username: `user-${id}`,
      role: 'Viewer',
      password_hash: 'scrypt$x',
      is_enabled: 1,
      created_at: '2026-01-01T00:00:00Z',
      key_digest: null,
      key_nonce: null,
      key_box: null,
      password_change_required: 0,
    });
  }
  for (let i = 1; i <= 4; i++) users.trustAddress('a', `192.0.2.${i}`, i, 3);
  users.trustAddress('a', '192.0.2.2', 10, 3);
  users.trustAddress('b', '198.51.100.1', 1, 3);
  t.same(
    users.trustedAddresses('a'),
    ['192.0.2.2', '192.0.2.4', '192.0.2.3'],
    'three kept, a repeat moves to the front',
  );
  t.ok(users.isTrustedAddress('a', '192.0.2.4'));
  t.notOk(users.isTrustedAddress('a', '192.0.2.1'), 'the oldest was dropped');
  t.notOk(users.isTrustedAddress('a', '198.51.100.1'), "another user's address is not this user's");
  users.remove('a');
  t.same(users.trustedAddresses('a'), [], 'deleting the user deletes its addresses');
  t.same(users.trustedAddresses('b'), ['198.51.100.1']);
});

t.test(
  "the daemon's store holds the database alone: a second connection (a second azcd) cannot read or write it",
  async (t) => {
    const dir = tempDir('azc-store-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'azc.db');
    const store = new Store(file);
    t.teardown(() => store.close());
    t.equal(store.db.pragma('locking_mode', { simple: true }), 'exclusive');
    const other = new Database(file, { timeout: 0 });
    t.teardown(() => other.close());
    t.throws(() => other.prepare('SELECT COUNT(*) FROM users').get(), /database is locked/, 'reading is refused');
    t.throws(() => other.exec('CREATE TABLE intruder (x)'), /database is locked/, 'writing is refused');
    t.notOk(existsSync(`${file}-shm`), 'the WAL index is in memory: no -shm file');
    store.close();
    t.equal(
      (other.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n,
      0,
      'once it is closed, others may open it',
    );
  },
);

t.test('the device UDN is kept across a restart', async (t) => {
  const dir = tempDir('azc-store-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azc.db');
  const first = new Store(file);
  t.equal(new MetaRepo(first.db).udn(), undefined, 'a new database has none yet');
  new MetaRepo(first.db).setUdn('uuid:5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01');
  first.close();
  const second = new Store(file);
  t.teardown(() => second.close());
  t.equal(new MetaRepo(second.db).udn(), 'uuid:5f0c1a52-8d4e-4c55-9a3b-2f6a1e7c9d01');
});

t.test('a deleted channel is remembered per kind, driver and channel until one is created there again', async (t) => {
  const { store } = setup(t);
  const meta = new MetaRepo(store.db);
  meta.markDeleted('zone', 'simulated', 2);
  t.equal(meta.isDeleted('zone', 'simulated', 2), true);
  t.equal(meta.isDeleted('input', 'simulated', 2), false, 'another kind');
  t.equal(meta.isDeleted('zone', 'monoprice', 2), false, 'another driver');
  t.equal(meta.isDeleted('zone', 'simulated', 3), false, 'another channel');
  meta.clearDeleted('zone', 'simulated', 2);
  t.equal(meta.isDeleted('zone', 'simulated', 2), false);
});

t.test('deleted-channel rows written by earlier versions keep their meaning', async (t) => {
  const { store } = setup(t);
  // Earlier versions wrote 'deleted' on delete and '' when the channel got a zone or input again.
  const put = store.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  put.run('deleted:zone:simulated:4', 'deleted');
  put.run('deleted:input:simulated:5', '');
  const meta = new MetaRepo(store.db);
  t.equal(meta.isDeleted('zone', 'simulated', 4), true);
  t.equal(meta.isDeleted('input', 'simulated', 5), false);
});
