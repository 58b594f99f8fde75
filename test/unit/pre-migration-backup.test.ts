// Before a schema migration of an existing database the store keeps a private copy of it as it was, the last five.

import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { Store } from '../../daemon/store/db.js';
import { MIGRATIONS } from '../../daemon/store/migrations.js';
import { tempDir } from '../helpers/daemon.js';

const ZONE_ID = '22222221-2222-4222-8222-222222222222';

/** A schema-2 database (the last one before amplifier lists) holding one zone, as an older azcd left it. */
function schemaTwoDatabase(file: string): void {
  const db = new Database(file);
  db.exec(MIGRATIONS[0]!);
  db.exec(MIGRATIONS[1]!);
  db.pragma('user_version = 2');
  db.prepare(
    `INSERT INTO zones (id, name, volume, muted, power, source, player_id, output_driver, output_channel, created_at)
     VALUES (?, 'Kitchen', 0.3, 0, 0, 1, NULL, 'simulated', 1, '2026-01-01T00:00:00.000Z')`,
  ).run(ZONE_ID);
  db.close();
}

function stateDir(t: Test): string {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const copiesIn = (dir: string) =>
  existsSync(path.join(dir, 'backups')) ? readdirSync(path.join(dir, 'backups')).sort() : [];

function withUmask022(t: Test): void {
  const previous = process.umask(0o022);
  t.teardown(() => void process.umask(previous));
}

t.test('migrating an older database first copies it, private, into the backups directory', async (t) => {
  withUmask022(t);
  const dir = stateDir(t);
  const file = path.join(dir, 'azc.db');
  schemaTwoDatabase(file);
  const store = new Store(file);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion, MIGRATIONS.length, 'the database was migrated');
  const copies = copiesIn(dir);
  t.equal(copies.length, 1);
  t.match(
    copies[0],
    /^pre-migration-v2-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.sqlite3$/,
    'named after the version it came from',
  );
  t.equal(statSync(path.join(dir, 'backups')).mode & 0o777, 0o700, 'the directory is 0700');
  t.equal(statSync(path.join(dir, 'backups', copies[0]!)).mode & 0o777, 0o600, 'the copy is 0600');
  const copy = new Database(path.join(dir, 'backups', copies[0]!), { readonly: true });
  t.teardown(() => copy.close());
  t.equal(copy.pragma('user_version', { simple: true }), 2, 'the copy is the database as it was');
  t.same(copy.prepare('SELECT id, name, output_driver FROM zones').all(), [
    { id: ZONE_ID, name: 'Kitchen', output_driver: 'simulated' },
  ]);
});

t.test('a new database or one already up to date is not copied', async (t) => {
  const dir = stateDir(t);
  const file = path.join(dir, 'azc.db');
  new Store(file).close();
  t.same(copiesIn(dir), [], 'nothing to keep from an empty database');
  new Store(file).close();
  t.same(copiesIn(dir), [], 'no migration, no copy');
});

t.test('only the last five copies before a migration are kept', async (t) => {
  const dir = stateDir(t);
  const file = path.join(dir, 'azc.db');
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    schemaTwoDatabase(file);
    const before = new Set(copiesIn(dir));
    new Store(file).close();
    made.push(...copiesIn(dir).filter((name) => !before.has(name)));
  }
  t.equal(made.length, 7, 'each migration made its copy');
  t.same(copiesIn(dir), made.slice(2).sort(), 'the five newest are left');
});
