// Switching amplifiers on the same state directory: the other amplifier's zones, inputs and players are unusable
// while it is not configured, and come back unchanged when it is configured again.
import t from 'tap';
import { rmSync } from 'node:fs';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { injectClient, createUser } from '../helpers/inject.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { FAST } from '../drivers/monoprice-rig.js';
import { isEvent, openStream } from '../helpers/sse.js';
import { emulatorOnPty } from '../drivers/serial-rig.js';

interface Zone {
  id: string;
  playerId: string | null;
  power: boolean;
  output: { driver: string; channel: number };
}

t.test('restarting on another amplifier driver', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));

  // The simulated amplifier, as after `npm start`: a player routed to a zone, an operator assigned to both.
  const first = await startDaemon({ stateDir });
  const api1 = injectClient(first.daemon, first.adminKey);
  const simZones = (await api1.get('/api/zones')).body as Zone[];
  const simInputs = (await api1.get('/api/input-devices')).body as Array<{ id: string }>;
  const oldPlayer = (await api1.post('/api/players', { name: 'Old streamer', input: { channel: 4 } })).body;
  t.equal((await api1.post(`/api/players/${oldPlayer.id}/attach-zones`, { zoneIds: [simZones[0]!.id] })).status, 204);
  const op = await createUser(api1, 'switch-op', 'Operator', { playerIds: [oldPlayer.id], zoneIds: [simZones[0]!.id] });
  const before = {
    players: (await api1.get('/api/players')).body,
    zones: (await api1.get('/api/zones')).body,
    inputs: (await api1.get('/api/input-devices')).body,
  };
  await first.stop();

  // The same state directory on a Monoprice amplifier (its emulator over a real pty).
  const emulator = new MonopriceEmulator({ units: 1 });
  const pty = await emulatorOnPty(t, emulator);
  const driver = new MonopriceDriver({ serialPort: pty.a, ...FAST });
  const second = await startDaemon({ stateDir, driver });
  let secondStopped = false;
  t.teardown(() => (secondStopped ? undefined : second.stop()));
  const api2 = injectClient(second.daemon, first.adminKey);
  // start() resolves once the driver runs; wait for the link so wire checks see a connected amplifier.
  if (!driver.online) {
    await new Promise<void>((resolve) => {
      const off = driver.onEvent((e) => {
        if (e.type === 'status' && e.online) {
          off();
          resolve();
        }
      });
    });
  }
  await driver.settled();
  const stream = openStream(second.base, '/api/stream/events', { 'X-API-Key': first.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);

  t.test('lists show only the configured amplifier', async (t) => {
    const zones = (await api2.get('/api/zones')).body as Zone[];
    t.same(zones.map((z) => z.output.driver), Array(6).fill('monoprice'));
    t.same((await api2.get('/api/players')).body, []);
    const inputs = (await api2.get('/api/input-devices')).body as Array<{ input: { driver: string } }>;
    t.ok(inputs.length > 0 && inputs.every((i) => i.input.driver === 'monoprice'), 'only monoprice inputs');
  });

  t.test('the simulated player, zone and input answer 404 by id', async (t) => {
    t.equal((await api2.get(`/api/players/${oldPlayer.id}`)).status, 404);
    t.equal((await api2.get(`/api/zones/${simZones[0]!.id}`)).status, 404);
    t.equal((await api2.get(`/api/input-devices/${simInputs[0]!.id}`)).status, 404);
    t.equal((await api2.put(`/api/zones/${simZones[0]!.id}/volume`, { volume: 0.9 })).status, 404);
    t.equal((await api2.put(`/api/players/${oldPlayer.id}/volume`, { volume: 0.9 })).status, 404);
    t.equal((await api2.put(`/api/input-devices/${simInputs[0]!.id}/favorite`, { isFavorite: true })).status, 404);
  });

  t.test('the operator assigned to them sees nothing of them', async (t) => {
    const asOp = injectClient(second.daemon, op.apiKey);
    t.same((await asOp.get('/api/players')).body, []);
    t.same((await asOp.get('/api/zones')).body, []);
    t.equal((await asOp.get(`/api/players/${oldPlayer.id}`)).status, 404);
  });

  t.test('they cannot be assigned to a user', async (t) => {
    const user = await createUser(api2, 'switch-viewer', 'Viewer');
    const res = await api2.put(`/api/users/${user.id}/assignments`, { playerIds: [oldPlayer.id], zoneIds: [] });
    t.equal(res.status, 400);
    t.same((await api2.get(`/api/users/${user.id}`)).body.assignments, { playerIds: [], zoneIds: [] });
  });

  t.test('routing across amplifiers is refused and sends nothing to the amplifier', async (t) => {
    const zones = (await api2.get('/api/zones')).body as Zone[];
    const player = (await api2.post('/api/players', { name: 'New streamer', input: { channel: 2 } })).body;
    t.equal(player.input.driver, 'monoprice');

    const toOldZone = await api2.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [simZones[0]!.id] });
    t.equal(toOldZone.status, 400);
    t.match(toOldZone.body.detail, /not configured.*"simulated"/);
    const oldToNewZone = await api2.post(`/api/players/${oldPlayer.id}/attach-zones`, { zoneIds: [zones[1]!.id] });
    t.equal(oldToNewZone.status, 404);

    await driver.settled();
    t.notOk(emulator.commands.some((c) => c.startsWith('<12')), 'no command for zone 12 reached the amplifier');
    t.same((await api2.get('/api/zones')).body, zones, 'zones unchanged');
    t.same((await api2.get(`/api/players/${player.id}`)).body.zoneIds, []);
  });

  t.test('no event on the stream names the simulated player, zones or inputs', async (t) => {
    // A change of its own marks the point up to which every earlier request's events have been sent.
    const mark = (await api2.post('/api/players', { name: 'Marker', input: { channel: 5 } })).body;
    await stream.next(isEvent('player.created', (p) => p.player.id === mark.id), 5000, 'the marker event');
    const hidden = [oldPlayer.id, ...simZones.map((z) => z.id), ...simInputs.map((i) => i.id)];
    const leaked = stream.messages.filter((m) => hidden.some((id) => m.data?.includes(id)));
    t.same(leaked, []);
  });

  t.test('they cannot be deleted or renamed', async (t) => {
    t.equal((await api2.del(`/api/players/${oldPlayer.id}`)).status, 404);
    t.equal((await api2.del(`/api/zones/${simZones[1]!.id}`)).status, 404);
    t.equal((await api2.put(`/api/zones/${simZones[0]!.id}`, { name: 'Renamed' })).status, 404);
  });

  t.test('configuring the simulated amplifier again restores everything as it was', async (t) => {
    await second.stop();
    secondStopped = true;
    const third = await startDaemon({ stateDir, driver: new SimulatedDriver({ applyDelayMs: 1 }) });
    t.teardown(() => third.stop());
    const api3 = injectClient(third.daemon, first.adminKey);
    t.same((await api3.get('/api/players')).body, before.players);
    t.same((await api3.get('/api/zones')).body, before.zones);
    t.same((await api3.get('/api/input-devices')).body, before.inputs);
    t.same((await injectClient(third.daemon, op.apiKey).get(`/api/players/${oldPlayer.id}`)).body, before.players[0]);
  });
});
