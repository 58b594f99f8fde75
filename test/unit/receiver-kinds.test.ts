// The receiver kinds' registry (drivers/receivers/kinds.ts) is the one list of kinds: the API's, events' and backups'
// schemas, the playback source, the runtime's list, MQTT's names and the receivers' `name` derive from it, and the
// store's table takes any kind (migration 10 copied the table without its list, keeping the rows).

import { rmSync } from 'node:fs';
import path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import Database from 'better-sqlite3';
import t from 'tap';
import { receiverRoutes } from '../../daemon/api/receivers.js';
import { BackupSchema } from '../../daemon/domain/backup/backup-format.js';
import type { ReceiverSwitches } from '../../daemon/domain/playback/index.js';
import { RECEIVER_DISPLAY_NAMES, RECEIVER_KINDS } from '../../daemon/domain/playback/index.js';
import { PlaybackSchema, ReceiverSchema } from '../../daemon/domain/shared/index.js';
import { RECEIVER_NAMES } from '../../daemon/mqtt/payloads.js';
import { Store } from '../../daemon/store/db.js';
import { MIGRATION_STEPS, MIGRATIONS } from '../../daemon/store/migrations.js';
import { ReceiversRepo } from '../../daemon/store/receivers-repo.js';
import { RECEIVER_KIND_LIST, RECEIVER_KIND_MODULES } from '../../drivers/index.js';
import { tempDir } from '../helpers/daemon.js';

const REGISTRY = RECEIVER_KIND_LIST.map((module) => module.kind);

/** The names a schema of literals (a union of them) takes, in its order. */
const literals = (schema: TSchema): unknown[] => (schema.anyOf as TSchema[]).map((s) => s.const);

t.test('each kind in the registry is one module with its name, display name, program and package', async (t) => {
  t.same(REGISTRY, ['airplay', 'upnp', 'squeezelite'], 'the kinds, in the order the API lists them');
  t.equal(new Set(REGISTRY).size, REGISTRY.length, 'each named once');
  for (const module of RECEIVER_KIND_LIST) {
    t.match(module.kind, /^[a-z][a-z0-9]{0,39}$/, `${module.kind}: a name for URLs, topics and the store`);
    t.ok(
      module.displayName.length > 0 && module.program.length > 0 && module.debianPackage.length > 0,
      `${module.kind}: a display name, a program and a package`,
    );
    t.equal(RECEIVER_KIND_MODULES[module.kind], module, `${module.kind}: found by its name`);
  }
  t.same(
    RECEIVER_KIND_LIST.filter((module) => module.takesServer).map((module) => module.kind),
    ['squeezelite'],
    'squeezelite alone takes a music server',
  );
});

t.test("every list of kinds is the registry's", async (t) => {
  t.same(RECEIVER_KINDS, REGISTRY, "the runtime's and the switches' list");
  t.same(literals(ReceiverSchema.properties.kind), REGISTRY, "a receiver's kind in the API and its events");
  const put = receiverRoutes({} as ReceiverSwitches).find((r) => r.method === 'PUT')!;
  t.same(literals((put.params as TSchema).properties.kind), REGISTRY, 'the kind a PUT names in its path');
  const backed = BackupSchema.properties.players.items.properties.receivers as TSchema;
  t.same(literals(backed.items.properties.kind), REGISTRY, "a backup's receiver");
  t.equal(backed.maxItems, REGISTRY.length, 'a backup holds each kind once at most');
  t.same(literals(PlaybackSchema.properties.source), ['mpd', ...REGISTRY, 'announcement'], 'the playback source');
  const names = Object.fromEntries(RECEIVER_KIND_LIST.map((module) => [module.kind, module.displayName]));
  t.same(RECEIVER_DISPLAY_NAMES, names, "the receivers' `name`");
  t.same(RECEIVER_NAMES, names, "MQTT's switches and now-playing line");
});

t.test('migration 10 keeps every switch and lets the table take a kind it does not list', async (t) => {
  const dir = tempDir('azc-store-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azc.db');
  const old = new Database(file);
  for (let version = 0; version < 9; version++) {
    old.exec(MIGRATIONS[version]!);
    MIGRATION_STEPS[version + 1]?.(old);
  }
  old.pragma('user_version = 9');
  old
    .prepare(
      `INSERT INTO players (id, name, volume, input_amplifier, input_driver, input_channel, created_at, output_kind)
       VALUES ('p1', 'Kitchen', 0.5, 'simulated', 'simulated', 1, '2026-01-01T00:00:00Z', 'null')`,
    )
    .run();
  const insert = old.prepare('INSERT INTO player_receivers (player_id, kind, server) VALUES (?, ?, ?)');
  insert.run('p1', 'squeezelite', 'lms.lan');
  insert.run('p1', 'upnp', null);
  t.throws(() => insert.run('p1', 'spotify', null), /CHECK constraint/, 'version 9 lists the kinds');
  old.close();

  const store = new Store(file);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion, MIGRATIONS.length);
  const repo = new ReceiversRepo(store.db);
  const sorted = () => repo.ofPlayer('p1').sort((a, b) => a.kind.localeCompare(b.kind));
  t.same(
    sorted(),
    [
      { player_id: 'p1', kind: 'squeezelite', server: 'lms.lan' },
      { player_id: 'p1', kind: 'upnp', server: null },
    ],
    'the switches and their server are kept',
  );
  repo.switchOn({ player_id: 'p1', kind: 'spotify', server: null });
  t.same(
    sorted().map((r) => r.kind),
    ['spotify', 'squeezelite', 'upnp'],
    'a kind the table does not list is stored (the service checks it)',
  );
  store.db.prepare("DELETE FROM players WHERE id = 'p1'").run();
  t.same(repo.ofPlayer('p1'), [], 'the rows still go with their player');
});
