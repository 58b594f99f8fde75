// Restart on the same state directory: everything acknowledged is still there and the amplifier is restored.

import { rmSync } from 'node:fs';
import t from 'tap';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

t.test('state survives a restart', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startDaemon({ stateDir });
  const api = injectClient(first.daemon, first.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const inputs = (await api.get('/api/input-devices')).body as Array<{ id: string }>;
  const player = (await api.post('/api/players', { name: 'Den', input: { channel: 2 } })).body;
  await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  await api.put(`/api/players/${player.id}/volume`, { volume: 0.42 });
  await api.put(`/api/zones/${zones[2]!.id}/power`, { power: true });
  await api.put(`/api/zones/${zones[2]!.id}/volume`, { volume: 0.77 });
  await api.put(`/api/zones/${zones[2]!.id}/mute`, { muted: true });
  const op = await createUser(api, 'persisted-op', 'Operator', { playerIds: [player.id], zoneIds: [zones[0]!.id] });
  const pl = (
    await api.post('/api/playlists', {
      name: 'Kept',
      tracks: [
        { title: 'a', uri: 'u:a' },
        { title: 'b', uri: 'u:b' },
      ],
    })
  ).body;
  await api.post(`/api/playlists/${pl.id}/reorder`, { newOrder: [1, 0] });
  await api.put(`/api/playlists/${pl.id}/favorite`, { isFavorite: true });
  await api.put(`/api/input-devices/${inputs[3]!.id}/favorite`, { isFavorite: true });
  const before = {
    players: (await api.get('/api/players')).body,
    zones: (await api.get('/api/zones')).body,
    playlists: (await api.get('/api/playlists')).body,
    inputs: (await api.get('/api/input-devices')).body,
    users: (await api.get('/api/users')).body,
  };
  await first.stop();

  const driver = new SimulatedDriver({ applyDelayMs: 1 });
  const second = await startDaemon({ stateDir, driver });
  t.teardown(() => second.stop());
  const again = injectClient(second.daemon, first.adminKey);

  t.test('players, zones, playlists, inputs and users are unchanged and ids are stable', async (t) => {
    t.same((await again.get('/api/players')).body, before.players);
    t.same((await again.get('/api/zones')).body, before.zones);
    t.same((await again.get('/api/playlists')).body, before.playlists);
    t.same((await again.get('/api/input-devices')).body, before.inputs);
    t.same((await again.get('/api/users')).body, before.users);
  });

  t.test('API keys keep working across the restart with the same permissions', async (t) => {
    const opApi = injectClient(second.daemon, op.apiKey);
    t.same(
      (await opApi.get('/api/players')).body.map((p: { id: string }) => p.id),
      [player.id],
    );
  });

  t.test('the amplifier is brought back to the stored state on start', async (t) => {
    t.match(driver.hardwareState(1), { power: true, muted: false, source: 2 });
    t.equal(Math.round(driver.hardwareState(1)!.volume * 38), Math.round(0.42 * 38));
    t.match(driver.hardwareState(3), { power: true, muted: true });
    t.equal(Math.round(driver.hardwareState(3)!.volume * 38), Math.round(0.77 * 38));
  });

  t.test('the SSDP UDN generated on first start is kept', async (t) => {
    t.equal(second.daemon.services.udn, first.daemon.services.udn);
  });

  t.test('the first admin is not created again', async (t) => {
    t.equal((await again.get('/api/users')).body.filter((u: { username: string }) => u.username === 'admin').length, 1);
  });
});
