// Device state written through the group commit: a zone changed many times in one turn costs one UPDATE when the
// turn commits (counted by a trigger in the real SQLite file), reads see every change at once, and a commit that
// fails puts the in-memory zones back to what the database holds.

import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { admin, audioRig } from '../helpers/audio-rig.js';

function countUpdates(store: { db: Database.Database }): () => number {
  store.db.exec(`CREATE TEMP TABLE zone_updates (n INTEGER);
                 INSERT INTO zone_updates VALUES (0);
                 CREATE TEMP TRIGGER count_zone_updates AFTER UPDATE ON zones BEGIN UPDATE zone_updates SET n = n + 1; END;`);
  const read = store.db.prepare('SELECT n FROM zone_updates');
  return () => (read.get() as { n: number }).n;
}

t.test('many volume changes to one zone in a turn are one UPDATE of its row, with the last value', async (t) => {
  const rig = await audioRig(t, { watched: true });
  const zone = rig.audio.zones.list(admin)[0]!;
  const updates = countUpdates(rig.store);
  const acks: Promise<void>[] = [];
  for (const volume of [0.1, 0.2, 0.3, 0.4, 0.5]) acks.push(rig.audio.zones.setVolume(admin, zone.id, { volume }));
  t.equal(rig.audio.zones.list(admin)[0]!.volume, 0.5, 'reads see the latest change before the commit');
  t.equal(updates(), 0, 'nothing is written before the turn ends');
  await Promise.all(acks);
  t.equal(updates(), 1, 'one UPDATE for five changes');
  const observer = new Database(path.join(rig.dir, 'azc.db'), { readonly: true });
  t.teardown(() => observer.close());
  t.equal(
    (observer.prepare('SELECT volume FROM zones WHERE id = ?').get(zone.id) as { volume: number }).volume,
    0.5,
    'committed: another connection reads it',
  );
  t.same(
    rig.events.filter((e) => e.type === 'zone.volumeChanged').map((e) => (e.payload as { volume: number }).volume),
    [0.1, 0.2, 0.3, 0.4, 0.5],
    'every change still has its event',
  );
});

t.test(
  'a turn that only moves volumes writes only the volume column; any other change writes the whole row',
  async (t) => {
    const rig = await audioRig(t, { watched: true });
    const zone = rig.audio.zones.list(admin)[0]!;
    // Fires only for UPDATE statements whose SET list names player_id (the indexed column).
    rig.store.db.exec(`CREATE TEMP TABLE full_updates (n INTEGER);
                     INSERT INTO full_updates VALUES (0);
                     CREATE TEMP TRIGGER count_full AFTER UPDATE OF player_id ON zones BEGIN UPDATE full_updates SET n = n + 1; END;`);
    const fullUpdates = () => (rig.store.db.prepare('SELECT n FROM full_updates').get() as { n: number }).n;
    await Promise.all([
      rig.audio.zones.setVolume(admin, zone.id, { volume: 0.2 }),
      rig.audio.zones.setVolume(admin, zone.id, { volume: 0.3 }),
    ]);
    t.equal(fullUpdates(), 0, 'volumes alone: the narrow statement');
    await Promise.all([
      rig.audio.zones.setVolume(admin, zone.id, { volume: 0.4 }),
      rig.audio.zones.setMuted(admin, zone.id, true),
    ]);
    t.equal(fullUpdates(), 1, 'a mute in the same turn: the whole row');
    const observer = new Database(path.join(rig.dir, 'azc.db'), { readonly: true });
    t.teardown(() => observer.close());
    t.same(
      observer.prepare('SELECT volume, muted FROM zones WHERE id = ?').get(zone.id),
      { volume: 0.4, muted: 1 },
      'both changes are in the database',
    );
    // A mute and its undo in one turn leave the row as it was apart from the volume: the narrow statement again.
    await Promise.all([
      rig.audio.zones.setMuted(admin, zone.id, false),
      rig.audio.zones.setMuted(admin, zone.id, true),
      rig.audio.zones.setVolume(admin, zone.id, { volume: 0.5 }),
    ]);
    t.equal(fullUpdates(), 1, 'compared with what the database holds, not with the previous call');
    t.same(observer.prepare('SELECT volume, muted FROM zones WHERE id = ?').get(zone.id), { volume: 0.5, muted: 1 });
  },
);

t.test('a group commit that fails acknowledges nothing and the zones read as the database holds them', async (t) => {
  const rig = await audioRig(t);
  const [first, second] = rig.audio.zones.list(admin);
  const before = [first!.volume, second!.volume];
  // A trigger that refuses the write, as a full disk or an I/O error would at commit.
  rig.store.db.exec(
    `CREATE TEMP TRIGGER refuse AFTER UPDATE ON zones BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;`,
  );
  const a = rig.audio.zones.setVolume(admin, first!.id, { volume: 0.9 });
  const b = rig.audio.zones.setVolume(admin, second!.id, { volume: 0.8 });
  await t.rejects(a, /refused by the test/);
  await t.rejects(b, /refused by the test/);
  const after = rig.audio.zones.list(admin);
  t.same([after[0]!.volume, after[1]!.volume], before, 'the in-memory rows were reloaded from the database');
  rig.store.db.exec('DROP TRIGGER refuse');
  await rig.audio.zones.setVolume(admin, first!.id, { volume: 0.7 });
  t.equal(rig.audio.zones.list(admin)[0]!.volume, 0.7, 'the next turn commits again');
});

t.test('a write that is not device state runs at synchronous=FULL even right after a group commit', async (t) => {
  const rig = await audioRig(t);
  const zone = rig.audio.zones.list(admin)[0]!;
  const player = rig.audio.players.create(admin, { name: 'Kitchen', input: { channel: 1 } });
  await rig.audio.zones.setVolume(admin, zone.id, { volume: 0.2 });
  t.equal(rig.store.synchronousLevel(), 'NORMAL', 'control: the group commit left the connection at NORMAL');
  rig.audio.players.update(admin, player.id, { name: 'Kitchen speakers' });
  t.equal(rig.store.synchronousLevel(), 'FULL', 'the rename was committed at FULL');
  t.equal(rig.audio.players.get(admin, player.id).name, 'Kitchen speakers');
});

t.test('the test guard catches a write made outside transaction() while the connection is at NORMAL', async (t) => {
  const rig = await audioRig(t);
  const zone = rig.audio.zones.list(admin)[0]!;
  const player = rig.audio.players.create(admin, { name: 'Den', input: { channel: 2 } });
  await rig.audio.zones.setVolume(admin, zone.id, { volume: 0.3 });
  t.throws(
    () => rig.repo.renamePlayer(player.id, 'bare write'),
    /write outside store\.transaction\(\) ran at synchronous=NORMAL/,
  );
  rig.store.transaction(() => rig.repo.renamePlayer(player.id, 'Den 2'));
  t.equal(rig.audio.players.get(admin, player.id).name, 'Den 2', 'the same write inside transaction() passes');
});
