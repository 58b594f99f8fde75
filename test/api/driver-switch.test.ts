// Switching the driver, or taking an amplifier out of the config file, on the same state directory: its zones, inputs
// and players are listed as unavailable with the reason (so assignments and scenes still name them), writes to them
// are 409s, scenes skip them, admins delete them for good, and configuring the amplifier again brings the rest back.

import { rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { type AmplifierConfig, amplifierKey } from '../../daemon/config.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

interface Zone {
  id: string;
  name: string;
  playerId: string | null;
  power: boolean;
  volume: number;
  available: boolean;
  unavailableReason: string | null;
  output: { amplifier: string; driver: string; channel: number };
}

const simulated = (name: string): AmplifierConfig => ({
  name,
  key: amplifierKey(name),
  driver: 'simulated',
  port: undefined,
  options: {},
});

t.test('an amplifier taken out of the config file', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const start = (names: string[]) =>
    startDaemon({ stateDir, configuredAmplifiers: true, config: { amplifiers: names.map(simulated) } });

  // Two amplifiers: a player on the garage one routed to a zone there, an operator assigned to both, a scene over
  // a zone of each.
  const first = await start(['House', 'Garage']);
  const api1 = injectClient(first.daemon, first.adminKey);
  const zones1 = (await api1.get('/api/zones')).body as Zone[];
  const house = zones1.filter((z) => z.output.amplifier === 'House');
  const garage = zones1.filter((z) => z.output.amplifier === 'Garage');
  const garageInputs = (
    (await api1.get('/api/input-devices')).body as Array<{ id: string; input: { amplifier: string } }>
  ).filter((i) => i.input.amplifier === 'Garage');
  const player = (await api1.post('/api/players', { name: 'Garage radio', input: { amplifier: 'Garage', channel: 1 } }))
    .body;
  t.equal((await api1.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [garage[0]!.id] })).status, 204);
  t.equal((await api1.put(`/api/zones/${house[0]!.id}/power`, { power: true })).status, 204);
  const op = await createUser(api1, 'garage-op', 'Operator', {
    playerIds: [player.id],
    zoneIds: [house[0]!.id, garage[0]!.id, garage[1]!.id],
  });
  const scene = (await api1.post('/api/scenes', { name: 'Evening', zoneIds: [house[0]!.id, garage[0]!.id] })).body;
  t.equal((await api1.put(`/api/zones/${house[0]!.id}/volume`, { volume: 0.1 })).status, 204);
  await first.stop();

  const second = await start(['House']);
  let secondStopped = false;
  t.teardown(() => (secondStopped ? undefined : second.stop()));
  const api = injectClient(second.daemon, first.adminKey);
  const asOp = injectClient(second.daemon, op.apiKey);
  const reason = 'amplifier "garage" (driver simulated) is not configured';

  t.test('its zones, player and inputs are listed as unavailable, with the reason', async (t) => {
    const zones = (await api.get('/api/zones')).body as Zone[];
    t.same(
      zones.filter((z) => !z.available).map((z) => z.id),
      garage.map((z) => z.id),
      'every zone of the garage amplifier, and only those',
    );
    t.match(
      zones.find((z) => z.id === garage[0]!.id),
      { playerId: player.id, unavailableReason: reason, output: { amplifier: 'garage', driver: 'simulated' } },
    );
    t.match((await api.get(`/api/players/${player.id}`)).body, {
      available: false,
      unavailableReason: reason,
      zoneIds: [garage[0]!.id],
    });
    const input = (await api.get(`/api/input-devices/${garageInputs[0]!.id}`)).body;
    t.match(input, { available: false, unavailableReason: reason });
    t.ok(
      ((await api.get('/api/input-devices')).body as Array<{ id: string }>).some((i) => i.id === garageInputs[0]!.id),
      'listed',
    );
    t.match((await api.get(`/api/zones/${house[0]!.id}`)).body, { available: true, unavailableReason: null });
  });

  t.test('the operator still sees what is assigned to it, and its assignment list names them', async (t) => {
    const ids = ((await asOp.get('/api/zones')).body as Zone[]).map((z) => z.id).sort();
    t.same(ids, [house[0]!.id, garage[0]!.id, garage[1]!.id].sort());
    t.match((await asOp.get(`/api/players/${player.id}`)).body, { available: false });
    t.same((await api.get(`/api/users/${op.id}`)).body.assignments.playerIds, [player.id]);
    const viewer = await createUser(api, 'garage-viewer', 'Viewer');
    t.equal(
      (await api.put(`/api/users/${viewer.id}/assignments`, { playerIds: [player.id], zoneIds: [garage[2]!.id] }))
        .status,
      200,
      'they can be assigned',
    );
  });

  t.test('every write that would reach the amplifier is a 409 naming it, and changes nothing', async (t) => {
    const before = {
      zone: (await api.get(`/api/zones/${garage[0]!.id}`)).body,
      player: (await api.get(`/api/players/${player.id}`)).body,
    };
    const housePlayer = (await api.post('/api/players', { name: 'House streamer', input: { channel: 2 } })).body;
    const writes: Array<[string, 'put' | 'post', string, unknown]> = [
      ['zone volume', 'put', `/api/zones/${garage[0]!.id}/volume`, { volume: 0.9 }],
      ['mute', 'put', `/api/zones/${garage[0]!.id}/mute`, { muted: true }],
      ['power', 'put', `/api/zones/${garage[0]!.id}/power`, { power: false }],
      ['sleep', 'put', `/api/zones/${garage[0]!.id}/sleep`, { minutes: 5 }],
      ['player volume', 'put', `/api/players/${player.id}/volume`, { volume: 0.9 }],
      ['attach to its own player', 'post', `/api/players/${player.id}/attach-zones`, { zoneIds: [garage[1]!.id] }],
      ['detach from its player', 'post', `/api/players/${player.id}/detach-zones`, { zoneIds: [garage[0]!.id] }],
      [
        'attach to a player that is configured',
        'post',
        `/api/players/${housePlayer.id}/attach-zones`,
        { zoneIds: [garage[1]!.id] },
      ],
    ];
    for (const [what, method, route, body] of writes) {
      const res = await api[method](route, body);
      t.equal(res.status, 409, what);
      t.match(res.body.detail, reason, `${what}: names the amplifier`);
      t.match(res.body.detail, /configure that amplifier again/, `${what}: says what to do`);
    }
    t.same((await api.get(`/api/zones/${garage[0]!.id}`)).body, before.zone, 'the zone is unchanged');
    t.same((await api.get(`/api/players/${player.id}`)).body, before.player, 'the player is unchanged');
  });

  t.test('a scene over both amplifiers applies to the configured one and names the zone it skipped', async (t) => {
    const res = await api.post(`/api/scenes/${scene.id}/apply`);
    t.equal(res.status, 200);
    t.same(res.body, { applied: scene.id, zoneIds: [house[0]!.id], skipped: [{ zoneId: garage[0]!.id, reason }] });
    t.match(
      (await api.get(`/api/zones/${house[0]!.id}`)).body,
      { power: true, volume: house[0]!.volume },
      'the house zone took the scene',
    );
    t.same(
      (await api.get(`/api/scenes/${scene.id}`)).body.zones.map((z: { zoneId: string }) => z.zoneId).sort(),
      [house[0]!.id, garage[0]!.id].sort(),
      'and the scene still names both',
    );
  });

  t.test(
    'an admin deletes what is gone for good: the users lose it, and a later start does not recreate it',
    async (t) => {
      t.equal((await api.del(`/api/players/${player.id}`)).status, 204);
      t.equal((await api.del(`/api/zones/${garage[1]!.id}`)).status, 204);
      t.equal((await api.del(`/api/input-devices/${garageInputs[1]!.id}`)).status, 204);
      const assignments = (await api.get(`/api/users/${op.id}`)).body.assignments;
      t.same([assignments.playerIds, [...assignments.zoneIds].sort()], [[], [house[0]!.id, garage[0]!.id].sort()]);
      t.equal((await asOp.get(`/api/players/${player.id}`)).status, 404);
      await second.stop();
      secondStopped = true;

      const third = await start(['House', 'Garage']);
      t.teardown(() => third.stop());
      const api3 = injectClient(third.daemon, first.adminKey);
      const zones = (await api3.get('/api/zones')).body as Zone[];
      t.same(
        zones.filter((z) => z.output.amplifier === 'Garage').map((z) => z.id),
        garage.filter((_, i) => i !== 1).map((z) => z.id),
        'configured again: its zones are back, but not the one deleted',
      );
      t.ok(
        zones.every((z) => z.available),
        'and available',
      );
      const inputs = (await api3.get('/api/input-devices')).body as Array<{ id: string }>;
      t.notOk(
        inputs.some((i) => i.id === garageInputs[1]!.id),
        'the deleted input is not recreated',
      );
      t.ok(
        inputs.some((i) => i.id === garageInputs[0]!.id),
        'the others are back',
      );
      t.equal((await api3.get(`/api/players/${player.id}`)).status, 404, 'nor is the deleted player');
      t.equal(
        (await api3.put(`/api/zones/${garage[0]!.id}/volume`, { volume: 0.35 })).status,
        204,
        'the remaining zones take writes again',
      );
    },
  );
});

t.test('restarting on another driver, and back', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));

  // The simulated amplifier, as after `npm start`: a player routed to a zone, and a scene.
  const first = await startDaemon({ stateDir });
  const api1 = injectClient(first.daemon, first.adminKey);
  const simZones = (await api1.get('/api/zones')).body as Zone[];
  const oldPlayer = (await api1.post('/api/players', { name: 'Old streamer', input: { channel: 4 } })).body;
  t.equal((await api1.post(`/api/players/${oldPlayer.id}/attach-zones`, { zoneIds: [simZones[0]!.id] })).status, 204);
  const scene = (await api1.post('/api/scenes', { name: 'Morning', zoneIds: [simZones[0]!.id] })).body;
  const before = {
    players: (await api1.get('/api/players')).body,
    zones: (await api1.get('/api/zones')).body,
    inputs: (await api1.get('/api/input-devices')).body,
  };
  await first.stop();

  // The same state directory on a Monoprice amplifier whose serial port does not exist: it stays offline.
  const second = await startDaemon({
    stateDir,
    configuredAmplifiers: true,
    config: { driver: 'monoprice', serialPort: path.join(stateDir, 'no-such-serial-port') },
  });
  let secondStopped = false;
  t.teardown(() => (secondStopped ? undefined : second.stop()));
  const api = injectClient(second.daemon, first.adminKey);
  const reason = 'amplifier "simulated" (driver simulated) is not configured';

  t.test(
    "the simulated zones, player and inputs are listed as unavailable; the offline amplifier's zones are not",
    async (t) => {
      const zones = (await api.get('/api/zones')).body as Zone[];
      const bySimulated = zones.filter((z) => z.output.driver === 'simulated');
      t.same(
        bySimulated.map((z) => z.id),
        simZones.map((z) => z.id),
      );
      t.ok(
        bySimulated.every((z) => !z.available && z.unavailableReason === reason),
        'unavailable, with the reason',
      );
      const monoprice = zones.filter((z) => z.output.driver === 'monoprice');
      t.equal(monoprice.length, 6);
      t.ok(
        monoprice.every((z) => z.available),
        'an amplifier that is only offline leaves its zones available',
      );
      t.equal(
        (await api.put(`/api/zones/${monoprice[0]!.id}/volume`, { volume: 0.2 })).status,
        204,
        'writes to them are intents for when it is back',
      );
      t.match((await api.get(`/api/players/${oldPlayer.id}`)).body, { available: false, unavailableReason: reason });
      const inputs = (await api.get('/api/input-devices')).body as Array<{
        available: boolean;
        input: { driver: string };
      }>;
      t.ok(inputs.filter((i) => i.input.driver === 'simulated').every((i) => !i.available));
    },
  );

  t.test('a scene of only such zones is a 409 that says why', async (t) => {
    const res = await api.post(`/api/scenes/${scene.id}/apply`);
    t.equal(res.status, 409);
    t.match(res.body.detail, reason);
  });

  t.test('renaming a player of an amplifier that is not configured is allowed, and shows where it is', async (t) => {
    const res = await api.put(`/api/players/${oldPlayer.id}`, { name: 'Old streamer (kitchen)' });
    t.equal(res.status, 200);
    t.match(res.body, {
      name: 'Old streamer (kitchen)',
      available: false,
      input: { amplifier: 'simulated', driver: 'simulated', channel: 4 },
    });
    t.equal((await api.put(`/api/players/${oldPlayer.id}`, { name: 'Old streamer' })).status, 200);
  });

  t.test('configuring the simulated amplifier again restores everything as it was', async (t) => {
    await second.stop();
    secondStopped = true;
    const third = await startDaemon({ stateDir });
    t.teardown(() => third.stop());
    const api3 = injectClient(third.daemon, first.adminKey);
    t.same(
      (await api3.get('/api/players')).body.filter(
        (p: { input: { driver: string } }) => p.input.driver === 'simulated',
      ),
      before.players,
    );
    t.same(
      (await api3.get('/api/zones')).body.filter((z: Zone) => z.output.driver === 'simulated'),
      before.zones,
    );
    t.same(
      (await api3.get('/api/input-devices')).body.filter(
        (i: { input: { driver: string } }) => i.input.driver === 'simulated',
      ),
      before.inputs,
    );
    t.equal((await api3.post(`/api/scenes/${scene.id}/apply`)).status, 200);
  });
});
