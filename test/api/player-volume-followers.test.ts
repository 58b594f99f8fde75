// Everyone who may see a player reads one volume for it: an Operator assigned the player but none of its zones reads
// the stored volume, which follows the zones, before and after a restart, and also on a database an older daemon wrote.

import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

t.test(
  'an Operator assigned a player but none of its zones reads the volume an Admin reads, also after a restart',
  async (t) => {
    const stateDir = tempDir('azc-player-volume-');
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await startDaemon({ stateDir });
    t.teardown(() => first.stop());
    const admin = injectClient(first.daemon, first.adminKey);
    const [kitchen, bedroom] = (await admin.get('/api/zones')).body as Array<{ id: string }>;
    const player = (await admin.post('/api/players', { name: 'Streamer', input: { channel: 1 } })).body;
    t.equal(player.volume, 0.3, 'a new player starts at 0.3');
    await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen!.id, bedroom!.id] });
    t.equal((await admin.put(`/api/zones/${kitchen!.id}/volume`, { volume: 0.4 })).status, 204);
    t.equal((await admin.put(`/api/zones/${bedroom!.id}/volume`, { volume: 0.34 })).status, 204);
    const operator = await createUser(admin, 'player-only', 'Operator', { playerIds: [player.id], zoneIds: [] });

    const volumes = async (daemon: typeof first.daemon) => ({
      admin: (await injectClient(daemon, first.adminKey).get(`/api/players/${player.id}`)).body.volume,
      operator: (await injectClient(daemon, operator.apiKey).get(`/api/players/${player.id}`)).body.volume,
      operatorList: (await injectClient(daemon, operator.apiKey).get('/api/players')).body.map(
        (p: { volume: number }) => p.volume,
      ),
    });
    t.same(
      await volumes(first.daemon),
      { admin: 0.37, operator: 0.37, operatorList: [0.37] },
      "both read the zones' average",
    );
    await first.stop();

    const second = await startDaemon({ stateDir });
    t.teardown(() => second.stop());
    t.same(
      await volumes(second.daemon),
      { admin: 0.37, operator: 0.37, operatorList: [0.37] },
      'and still after a restart',
    );
  },
);

t.test(
  "a stale stored volume from an older database is brought to its zones' average when the daemon starts",
  async (t) => {
    const stateDir = tempDir('azc-player-volume-old-');
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await startDaemon({ stateDir });
    const admin = injectClient(first.daemon, first.adminKey);
    const [kitchen] = (await admin.get('/api/zones')).body as Array<{ id: string }>;
    const player = (await admin.post('/api/players', { name: 'Streamer', input: { channel: 1 } })).body;
    await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen!.id] });
    await admin.put(`/api/zones/${kitchen!.id}/volume`, { volume: 0.45 });
    const operator = await createUser(admin, 'player-only', 'Operator', { playerIds: [player.id], zoneIds: [] });
    await first.stop();
    // What a daemon that stored a player's volume only when its last zone left would have on disk.
    const db = new Database(path.join(stateDir, 'azc.db'));
    db.transaction(() => db.prepare('UPDATE players SET volume = 0.3 WHERE id = ?').run(player.id))();
    db.close();

    const second = await startDaemon({ stateDir });
    t.teardown(() => second.stop());
    t.equal(
      (await injectClient(second.daemon, operator.apiKey).get(`/api/players/${player.id}`)).body.volume,
      0.45,
      "the Operator reads the zone's volume",
    );
  },
);
