// Players and zones from outside: routing rules, group volume, validation, and what reaches the amplifier.
import t, { type Test } from 'tap';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

// Every case makes the players it needs and deletes them afterwards (an input carries one player at most), so
// none depends on another having run.
t.test('players and zones', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; output: { channel: number } }>;
  const [z1, z2, z3] = zones;
  const newPlayer = async (t: Test, name: string, channel: number) => {
    const res = await api.post('/api/players', { name, input: { channel } });
    if (res.status !== 201) throw new Error(res.text);
    t.teardown(() => api.del(`/api/players/${res.body.id}`));
    return res.body as { id: string; input: { channel: number } };
  };

  t.test('the amplifier described six zones and six inputs, created on first start', async (t) => {
    t.equal(zones.length, 6);
    t.same(
      zones.map((z) => z.output.channel),
      [1, 2, 3, 4, 5, 6],
    );
    t.equal((await api.get('/api/input-devices')).body.length, 6);
  });

  t.test('an admin creates a player with defaults and can read it back', async (t) => {
    const player = await newPlayer(t, 'Kitchen streamer', 2);
    t.match(player, {
      name: 'Kitchen streamer',
      volume: 0.3,
      zoneIds: [],
      input: { driver: 'simulated', channel: 2 },
      state: 'idle',
    });
    t.same((await api.get(`/api/players/${player.id}`)).body, player);
    t.ok((await api.get('/api/players')).body.some((p: { id: string }) => p.id === player.id));
  });

  t.test('a second player on the same input is a conflict', async (t) => {
    await newPlayer(t, 'First', 2);
    const res = await api.post('/api/players', { name: 'Again', input: { channel: 2 } });
    t.equal(res.status, 409);
  });

  t.test('a player on an input the amplifier lacks is a 400', async (t) => {
    const res = await api.post('/api/players', { name: 'Nowhere', input: { channel: 9 } });
    t.equal(res.status, 400);
    t.ok(res.body.errors['input.channel']);
  });

  t.test('attach routes the input, powers on and unmutes on the amplifier', async (t) => {
    const p = await newPlayer(t, 'Living room', 3);
    await api.put(`/api/zones/${z1!.id}/mute`, { muted: true });
    const res = await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds: [z1!.id, z2!.id, z1!.id] });
    t.equal(res.status, 204);
    t.equal(res.text, '');
    await driver.settled();
    t.match(driver.hardwareState(1), { power: true, muted: false, source: 3 });
    t.match(driver.hardwareState(2), { power: true, muted: false, source: 3 });
    const zone = (await api.get(`/api/zones/${z1!.id}`)).body;
    t.match(zone, { playerId: p.id, power: true, muted: false });
    t.same((await api.get(`/api/players/${p.id}`)).body.zoneIds.sort(), [z1!.id, z2!.id].sort());
    t.equal((await api.get(`/api/players/${p.id}`)).body.state, 'playing');
  });

  t.test('attaching a zone owned by another player moves it', async (t) => {
    const a = await newPlayer(t, 'A', 4);
    const b = await newPlayer(t, 'B', 5);
    await api.post(`/api/players/${a.id}/attach-zones`, { zoneIds: [z3!.id] });
    await api.post(`/api/players/${b.id}/attach-zones`, { zoneIds: [z3!.id] });
    t.same((await api.get(`/api/players/${a.id}`)).body.zoneIds, []);
    t.same((await api.get(`/api/players/${b.id}`)).body.zoneIds, [z3!.id]);
    await driver.settled();
    t.equal(driver.hardwareState(3)!.source, 5);
  });

  t.test('detach mutes the zone and frees it; detaching a zone it does not own is a no-op', async (t) => {
    const p = await newPlayer(t, 'Detacher', 6);
    await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds: [zones[3]!.id] });
    const other = zones[4]!.id;
    const res = await api.post(`/api/players/${p.id}/detach-zones`, { zoneIds: [zones[3]!.id, other] });
    t.equal(res.status, 204);
    await driver.settled();
    t.equal(driver.hardwareState(4)!.muted, true);
    t.match((await api.get(`/api/zones/${zones[3]!.id}`)).body, { playerId: null, muted: true });
    t.match((await api.get(`/api/zones/${other}`)).body, { playerId: null });
  });

  t.test('an attach body naming an unknown zone is a 400 that changes nothing', async (t) => {
    const p = await newPlayer(t, 'Strict', 1);
    const res = await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds: [zones[5]!.id, UNKNOWN] });
    t.equal(res.status, 400);
    t.match(res.body.detail, UNKNOWN);
    t.same((await api.get(`/api/players/${p.id}`)).body.zoneIds, []);
    t.equal((await api.get(`/api/zones/${zones[5]!.id}`)).body.playerId, null);
  });

  t.test('zoneIds must be a non-empty array of UUIDs of at most 256', async (t) => {
    const p = await newPlayer(t, 'Validated', 1);
    for (const zoneIds of [[], 'x', ['not-a-uuid'], [1], new Array(257).fill(UNKNOWN), null]) {
      const res = await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds });
      t.equal(res.status, 400, `zoneIds ${JSON.stringify(zoneIds).slice(0, 30)} is rejected`);
      t.ok(
        Object.keys(res.body.errors).some((field) => field.startsWith('zoneIds')),
        'names the field',
      );
    }
  });

  t.test('player volume is the group volume: every attached zone follows, on the amplifier too', async (t) => {
    const p = await newPlayer(t, 'Group', 3);
    t.equal((await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds: [z1!.id, z2!.id] })).status, 204);
    const res = await api.put(`/api/players/${p.id}/volume`, { volume: 0.5 });
    t.equal(res.status, 204);
    t.equal((await api.get(`/api/players/${p.id}`)).body.volume, 0.5);
    t.equal((await api.get(`/api/zones/${z1!.id}`)).body.volume, 0.5);
    t.equal((await api.get(`/api/zones/${z2!.id}`)).body.volume, 0.5);
    await driver.settled();
    t.equal(Math.round(driver.hardwareState(1)!.volume * 38), 19);
  });

  t.test('volume must be a finite number in [0, 1]', async (t) => {
    const p = await newPlayer(t, 'Bounded', 1);
    for (const volume of [1.5, -0.1, '0.5', null, true, [0.5]]) {
      const res = await api.put(`/api/players/${p.id}/volume`, { volume });
      t.equal(res.status, 400, `volume ${JSON.stringify(volume)} is rejected`);
      t.ok(res.body.errors.volume);
    }
    const huge = await api.call('PUT', `/api/players/${p.id}/volume`, { raw: '{"volume": 1e999}' });
    t.equal(huge.status, 400, 'an overflowing number is rejected');
    const missing = await api.put(`/api/players/${p.id}/volume`, {});
    t.equal(missing.status, 400);
    t.match(missing.body.errors.volume[0], /required/);
    t.equal((await api.get(`/api/players/${p.id}`)).body.volume, 0.3, 'the default volume is unchanged');
  });

  t.test('the edges 0 and 1 are accepted', async (t) => {
    const p = await newPlayer(t, 'Edges', 1);
    t.equal((await api.put(`/api/players/${p.id}/volume`, { volume: 0 })).status, 204);
    t.equal((await api.get(`/api/players/${p.id}`)).body.volume, 0);
    t.equal((await api.put(`/api/players/${p.id}/volume`, { volume: 1 })).status, 204);
    t.equal((await api.get(`/api/players/${p.id}`)).body.volume, 1);
  });

  t.test('unknown players are 404 and malformed ids 400', async (t) => {
    t.equal((await api.get(`/api/players/${UNKNOWN}`)).status, 404);
    t.equal((await api.put(`/api/players/${UNKNOWN}/volume`, { volume: 0.2 })).status, 404);
    t.equal((await api.post(`/api/players/${UNKNOWN}/attach-zones`, { zoneIds: [z1!.id] })).status, 404);
    t.equal((await api.get('/api/players/123')).status, 400);
    t.equal((await api.get(`/api/zones/${UNKNOWN}`)).status, 404);
  });

  t.test('zone volume, mute and power reach the amplifier', async (t) => {
    t.equal((await api.put(`/api/zones/${z2!.id}/volume`, { volume: 0.25 })).status, 204);
    t.equal((await api.put(`/api/zones/${z2!.id}/mute`, { muted: true })).status, 204);
    t.equal((await api.put(`/api/zones/${z2!.id}/power`, { power: false })).status, 204);
    await driver.settled();
    t.match(driver.hardwareState(2), { power: false, muted: true });
    t.equal(Math.round(driver.hardwareState(2)!.volume * 38), 10);
    t.match((await api.get(`/api/zones/${z2!.id}`)).body, { volume: 0.25, muted: true, power: false });
    t.equal((await api.put(`/api/zones/${z2!.id}/mute`, { muted: 'yes' })).status, 400);
    t.equal((await api.put(`/api/zones/${z2!.id}/power`, {})).status, 400);
  });

  t.test('a keypad change on the amplifier updates the zone, keeping the client value within a step', async (t) => {
    await api.put(`/api/zones/${z2!.id}/volume`, { volume: 0.26 });
    await driver.settled();
    driver.simulateKeypad(2, { volume: 0.26 });
    t.equal((await api.get(`/api/zones/${z2!.id}`)).body.volume, 0.26, 'same step: the exact client value stays');
    driver.simulateKeypad(2, { volume: 20 / 38, power: true });
    const zone = (await api.get(`/api/zones/${z2!.id}`)).body;
    t.equal(Math.round(zone.volume * 38), 20);
    t.equal(zone.power, true);
  });

  t.test('selecting another source on the keypad moves the zone to that player', async (t) => {
    const before = await newPlayer(t, 'Before', 5);
    t.equal((await api.post(`/api/players/${before.id}/attach-zones`, { zoneIds: [z2!.id] })).status, 204);
    await driver.settled();
    const owner = await newPlayer(t, 'Keypad choice', 4);
    driver.simulateKeypad(2, { source: 4 });
    t.equal((await api.get(`/api/zones/${z2!.id}`)).body.playerId, owner.id);
    t.ok((await api.get(`/api/players/${owner.id}`)).body.zoneIds.includes(z2!.id));
    t.notOk((await api.get(`/api/players/${before.id}`)).body.zoneIds.includes(z2!.id), 'and off the one it had');
  });

  t.test('admins rename players and zones; others may not', async (t) => {
    const p = await newPlayer(t, 'Renamed', 1);
    const renamed = await api.put(`/api/players/${p.id}`, { name: 'Hall streamer' });
    t.equal(renamed.status, 200);
    t.equal(renamed.body.name, 'Hall streamer');
    t.equal((await api.put(`/api/zones/${z1!.id}`, { name: 'Kitchen' })).body.name, 'Kitchen');
    t.equal((await api.get(`/api/zones/${z1!.id}`)).body.name, 'Kitchen');
    t.equal((await api.put(`/api/zones/${z1!.id}`, { name: '' })).status, 400);
    t.equal((await api.put(`/api/players/${UNKNOWN}`, { name: 'x' })).status, 404);
    const viewer = await createUser(api, 'rename-viewer', 'Viewer', { playerIds: [p.id], zoneIds: [z1!.id] });
    t.equal((await api.put(`/api/zones/${z1!.id}`, { name: 'Nope' }, { key: viewer.apiKey })).status, 403);
  });

  t.test('deleting a player detaches and mutes its zones and removes it from assignments', async (t) => {
    const res = await api.post('/api/players', { name: 'Temporary', input: { channel: 1 } });
    t.equal(res.status, 201);
    const p = res.body as { id: string };
    await api.post(`/api/players/${p.id}/attach-zones`, { zoneIds: [zones[4]!.id] });
    const op = await createUser(api, 'assigned-op', 'Operator', { playerIds: [p.id], zoneIds: [] });
    t.equal((await api.del(`/api/players/${p.id}`)).status, 204);
    t.equal((await api.get(`/api/players/${p.id}`)).status, 404);
    t.match((await api.get(`/api/zones/${zones[4]!.id}`)).body, { playerId: null, muted: true });
    t.same((await api.get(`/api/users/${op.id}`)).body.assignments.playerIds, []);
  });
});

t.test('admins create and delete zones; a deleted zone is not recreated and frees its output', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const res = await api.del(`/api/zones/${zones[5]!.id}`);
  t.equal(res.status, 204);
  t.equal((await api.get(`/api/zones/${zones[5]!.id}`)).status, 404);
  t.equal((await api.del(`/api/zones/${zones[5]!.id}`)).status, 404);
  const created = await api.post('/api/zones', { name: 'Patio', output: { channel: 6 } });
  t.equal(created.status, 201);
  t.match(created.body, { name: 'Patio', output: { driver: 'simulated', channel: 6 }, playerId: null });
  t.equal((await api.post('/api/zones', { name: 'Twice', output: { channel: 6 } })).status, 409);
  t.equal((await api.post('/api/zones', { name: 'Nowhere', output: { channel: 42 } })).status, 400);
  t.equal(
    (await api.post('/api/zones', { name: 'Bad driver', output: { driver: 'monoprice', channel: 6 } })).status,
    400,
  );
  t.equal((await api.get('/api/zones')).body.length, 6, 'five of the first start and the new one');
});
