// The volume PUT's same-work baseline (test/bench/same-work-server.ts) does the daemon's work for it: on a copy of the
// daemon's database, one PUT makes the same event frames, commits the same rows, and a bad body changes nothing.

import { copyFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { openSqlite } from '../../daemon/store/sqlite.js';
import { type BaselineProcess, startSameWork } from '../bench/lib/baseline.js';
import { captureFrames, withoutSequence } from '../bench/lib/event-frames.js';
import { setupPlayers } from '../bench/lib/fixture.js';
import { client } from '../helpers/client.js';
import { startDaemon, type TestDaemon, tempDir } from '../helpers/daemon.js';

const stateDir = tempDir();
const copyDir = tempDir('azc-same-work-');
const dbCopy = path.join(copyDir, 'azc.db');
let daemon: TestDaemon;
let sameWork: BaselineProcess | undefined;
let playerId: string;
let zoneIds: string[];

t.before(async () => {
  // The fixture is made on the daemon, which is then stopped (it holds its database alone) and copied, as the
  // benchmark does, and started again on the same folder.
  const first = await startDaemon({ stateDir });
  try {
    const fixture = await setupPlayers(first.base, first.adminKey);
    playerId = fixture.playerId;
    zoneIds = fixture.zoneIds.slice(0, 2);
  } finally {
    await first.stop();
  }
  copyFileSync(path.join(stateDir, 'azc.db'), dbCopy);
  if (existsSync(path.join(stateDir, 'azc.db-wal'))) copyFileSync(path.join(stateDir, 'azc.db-wal'), `${dbCopy}-wal`);
  daemon = await startDaemon({ stateDir });
});

t.teardown(async () => {
  await sameWork?.stop();
  await daemon?.stop();
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(copyDir, { recursive: true, force: true });
});

const putVolume = (base: string, key: string, body: unknown) =>
  client(base, key).put(`/api/players/${playerId}/volume`, body);

const port = (base: string) => Number(new URL(base).port);

/** What the copy's rows hold once the baseline stopped (it holds the database alone while it runs). */
function storedVolumes(): { zones: number[]; player: number } {
  const db = openSqlite(dbCopy);
  try {
    const zone = db.prepare('SELECT volume FROM zones WHERE id = ?');
    return {
      zones: zoneIds.map((id) => (zone.get(id) as { volume: number }).volume),
      player: (db.prepare('SELECT volume FROM players WHERE id = ?').get(playerId) as { volume: number }).volume,
    };
  } finally {
    db.close();
  }
}

t.test('one volume PUT makes the same three event frames on the daemon and on the same-work baseline', async (t) => {
  const fromDaemon = await captureFrames(port(daemon.base), { 'x-api-key': daemon.adminKey }, 3, async () => {
    t.equal((await putVolume(daemon.base, daemon.adminKey, { volume: 0.5 })).status, 204);
  });
  const eventIdPrefix = /^id: (.*?)\d+\n/.exec(fromDaemon[0]!)?.[1] ?? '';
  sameWork = await startSameWork({ dbFile: dbCopy, requestIdLength: 36, eventIdPrefix });
  const fromBaseline = await captureFrames(sameWork.port, {}, 3, async () => {
    t.equal((await putVolume(sameWork!.base, '', { volume: 0.5 })).status, 204);
  });
  t.same(fromBaseline.map(withoutSequence).sort(), fromDaemon.map(withoutSequence).sort());
  t.match(fromBaseline.join('\n'), /zone\.volumeChanged[\s\S]*zone\.volumeChanged[\s\S]*player\.volumeChanged/);
});

t.test('a body with both "volume" and "delta" is refused naming them, and no row changes', async (t) => {
  const refused = await putVolume(sameWork!.base, '', { volume: 0.9, delta: 0.1 });
  t.equal(refused.status, 400);
  t.match(refused.body.detail, /"volume" and "delta"/);
  t.equal((await putVolume(sameWork!.base, '', { volume: 1.5 })).status, 400, 'out of range');
  t.equal((await putVolume(sameWork!.base, '', { volume: 0.5, loud: true })).status, 400, 'unknown field');
  await sameWork!.stop();
  sameWork = undefined;
  t.same(
    storedVolumes(),
    { zones: [0.5, 0.5], player: 0.5 },
    'the accepted PUT is committed, the refused ones are not',
  );
});
