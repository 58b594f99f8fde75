// One daemon driving two amplifiers of different families at once, built from its configuration: a Monoprice and an
// RNET controller, each on an in-memory line to its emulator, both drivers on one hand-driven clock. Zones of both
// are listed with their amplifier, changes reach the right wire, keypads on either reach the zones, and one
// amplifier unplugged leaves the other working.
import t, { type Test } from 'tap';
import { type AmplifierConfig, amplifierKey } from '../../daemon/config.js';
import type { StampedEvent } from '../../daemon/domain/shared/events.js';
import type { ZoneView as Zone } from '../../daemon/domain/shared/views.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';
import { MemorySerial, openByPath } from '../helpers/memory-serial.js';
import { VirtualTime } from '../helpers/virtual-time.js';

interface Health {
  status: string;
  drivers: Array<{ name: string; online: boolean }>;
  amplifiers: Array<{ name: string; driver: string; online: boolean }>;
}

const MAIN = 'Main floor';
const UP = 'Upstairs';

function amplifier(name: string, driver: string, port: string): AmplifierConfig {
  return { name, key: amplifierKey(name), driver, port, options: {} };
}

async function setup(t: Test) {
  const time = new VirtualTime();
  const monoprice = new MonopriceEmulator({ units: 1, clock: time.clock });
  const rnet = new RnetEmulator({ controllers: 1, clock: time.clock });
  const adapters = {
    '/dev/ttyMAIN': new MemorySerial(monoprice, time.io),
    '/dev/ttyUP': new MemorySerial(rnet, time.io),
  };
  const d = await startTestDaemon(t, {
    configuredAmplifiers: true,
    config: { amplifiers: [amplifier(MAIN, 'monoprice', '/dev/ttyMAIN'), amplifier(UP, 'rnet', '/dev/ttyUP')] },
    driverOptions: { openPort: openByPath(adapters), clock: time.clock.view() },
  });
  const drivers = d.daemon.services.amplifiers.list.map((a) => a.driver);
  const until = <T>(goal: Promise<T> | (() => unknown), what?: string): Promise<T> => time.until(goal, what);
  const settled = () => until(Promise.all(drivers.map((driver) => driver.settled())), 'both drivers to settle');
  // Runs before the daemon's own teardown: it stops without waiting for writes the clock would never let finish.
  t.teardown(async () => {
    await settled();
    await monoprice.close();
    await rnet.close();
  });
  await until(() => drivers.every((driver) => driver.online), 'both amplifiers online');
  await settled();
  const api = injectClient(d.daemon, d.adminKey);
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const zones = (await api.get('/api/zones')).body as Zone[];
  const of = (name: string, channel: number) =>
    zones.find((z) => z.output.amplifier === name && z.output.channel === channel)!;
  /** Turns a zone on through the API and runs until its driver wrote it. */
  const powerOn = async (zone: Zone) => {
    t.equal((await api.put(`/api/zones/${zone.id}/power`, { power: true })).status, 204);
    await settled();
  };
  return { d, api, events, until, settled, monoprice, rnet, adapters, zones, of, powerOn };
}

t.test('zones of both amplifiers are listed with their amplifier, and health lists each amplifier', async (t) => {
  const { api, zones } = await setup(t);
  t.same(
    zones.map((z) => [z.output.amplifier, z.output.driver, z.output.channel]),
    [
      ...[11, 12, 13, 14, 15, 16].map((c) => [MAIN, 'monoprice', c]),
      ...[11, 12, 13, 14, 15, 16].map((c) => [UP, 'rnet', c]),
    ],
  );
  t.equal(new Set(zones.map((z) => z.id)).size, 12, 'the same channel on two amplifiers is two zones');
  const health = (await api.get('/api/health')).body as Health;
  t.same(health, {
    ...health,
    status: 'ok',
    drivers: [
      { name: 'monoprice', online: true },
      { name: 'rnet', online: true },
    ],
    amplifiers: [
      { name: MAIN, driver: 'monoprice', online: true },
      { name: UP, driver: 'rnet', online: true },
    ],
  });
  const inputs = (await api.get('/api/input-devices')).body as Array<{ input: { amplifier: string } }>;
  t.same([...new Set(inputs.map((i) => i.input.amplifier))], [MAIN, UP], 'inputs of both, each with its amplifier');
});

t.test("an API volume change reaches the emulator of the zone's amplifier and not the other", async (t) => {
  const { api, monoprice, rnet, of, powerOn, settled } = await setup(t);
  await powerOn(of(MAIN, 11));
  await powerOn(of(UP, 11));
  const rnetBefore = rnet.state(11).volume;
  t.equal((await api.put(`/api/zones/${of(MAIN, 11).id}/volume`, { volume: 0.5 })).status, 204);
  await settled();
  t.equal(monoprice.state(11).volume, 19);
  t.equal(rnet.state(11).volume, rnetBefore, 'the RNET zone with the same channel kept its volume');
  t.equal((await api.put(`/api/zones/${of(UP, 11).id}/volume`, { volume: 0.8 })).status, 204);
  await settled();
  t.equal(rnet.state(11).volume, 40);
  t.equal(monoprice.state(11).volume, 19, 'the Monoprice zone with the same channel kept its volume');
  t.notOk(
    monoprice.commands.some((c) => c.startsWith('<11VO30')),
    'the RNET change never reached the Monoprice wire',
  );
});

t.test('a keypad change on either amplifier reaches the zone of that amplifier', async (t) => {
  const { api, events, until, monoprice, rnet, of, powerOn } = await setup(t);
  const upZone = of(UP, 12);
  await powerOn(upZone);
  rnet.press(12, 'volume-up');
  await until(
    () => events.some((e) => e.type === 'zone.volumeChanged' && e.payload.zoneId === upZone.id),
    'the RNET keypad event',
  );
  const steps = Math.round(((await api.get(`/api/zones/${upZone.id}`)).body as Zone).volume * 50);
  t.equal(steps, rnet.state(12).volume, 'the stored RNET zone follows the controller');

  const mainZone = of(MAIN, 12);
  await powerOn(mainZone);
  monoprice.keypad(12, { volume: 30 });
  await until(
    () =>
      events.some(
        (e) =>
          e.type === 'zone.volumeChanged' &&
          e.payload.zoneId === mainZone.id &&
          Math.round(e.payload.volume * 38) === 30,
      ),
    'the Monoprice keypad event',
  );
  t.equal(Math.round(((await api.get(`/api/zones/${mainZone.id}`)).body as Zone).volume * 38), 30);
});

t.test(
  'one amplifier unplugged is offline alone, the other keeps working, and replugging recovers it without a restart',
  async (t) => {
    const { api, events, until, settled, monoprice, rnet, adapters, of, powerOn } = await setup(t);
    await powerOn(of(MAIN, 13));
    await powerOn(of(UP, 13));
    adapters['/dev/ttyUP'].unplug();
    await until(() => events.some((e) => e.type === 'hardware.status' && !e.payload.online), 'an amplifier offline');
    const offline = events.filter((e) => e.type === 'hardware.status').map((e) => e.payload);
    t.same(offline, [{ driver: 'rnet', online: false, amplifier: UP }], 'the event names the amplifier');
    const health = (await api.get('/api/health')).body as Health;
    t.equal(health.status, 'degraded');
    t.same(health.amplifiers, [
      { name: MAIN, driver: 'monoprice', online: true },
      { name: UP, driver: 'rnet', online: false },
    ]);

    t.equal((await api.put(`/api/zones/${of(MAIN, 13).id}/volume`, { volume: 0.5 })).status, 204);
    await until(() => monoprice.state(13).volume === 19, 'the Monoprice amplifier following the API');
    t.equal(
      (await api.put(`/api/zones/${of(UP, 13).id}/volume`, { volume: 0.2 })).status,
      204,
      'the offline one is answered too',
    );

    adapters['/dev/ttyUP'].replug();
    await until(
      () => events.some((e) => e.type === 'hardware.status' && e.payload.amplifier === UP && e.payload.online),
      'RNET back online',
    );
    await settled();
    t.equal(rnet.state(13).volume, 10, 'the change made while unplugged is applied');
    t.match((await api.get('/api/health')).body, { status: 'ok', amplifiers: [{ online: true }, { online: true }] });
  },
);

t.test('a player of one amplifier cannot feed a zone of the other: a 400 naming both, nothing changed', async (t) => {
  const { api, settled, monoprice, rnet, of } = await setup(t);
  const ambiguous = await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } });
  t.equal(ambiguous.status, 400, 'which amplifier is ambiguous');
  t.match(ambiguous.body.detail, /several amplifiers are configured.*"Main floor".*"Upstairs"/);
  const unknown = await api.post('/api/players', { name: 'Streamer', input: { amplifier: 'Cellar', channel: 3 } });
  t.equal(unknown.status, 400);
  t.match(unknown.body.detail, /"input\.amplifier" must name a configured amplifier/);

  const created = await api.post('/api/players', { name: 'Streamer', input: { amplifier: 'main FLOOR', channel: 3 } });
  t.equal(created.status, 201, 'names match whatever their case');
  const player = created.body as { id: string; input: { amplifier: string; driver: string; channel: number } };
  t.same(player.input, { amplifier: MAIN, driver: 'monoprice', channel: 3 });

  const upZone = of(UP, 14);
  const before = (await api.get(`/api/zones/${upZone.id}`)).body;
  const sentBefore = {
    monoprice: monoprice.commands.length,
    rnet: rnet.commands.filter((c) => !c.startsWith('info')).length,
  };
  const refused = await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [upZone.id, of(MAIN, 14).id] });
  t.equal(refused.status, 400);
  t.match(refused.body.detail, /feeds an input of the "Main floor" amplifier.*amplifier "Upstairs"/);
  await settled();
  t.same((await api.get(`/api/zones/${upZone.id}`)).body, before, 'the zone is unchanged');
  t.same(
    ((await api.get(`/api/zones/${of(MAIN, 14).id}`)).body as Zone).playerId,
    null,
    'nothing of the request was applied',
  );
  t.same((await api.get(`/api/players/${player.id}`)).body.zoneIds, []);
  t.equal(
    rnet.commands.filter((c) => !c.startsWith('info')).length,
    sentBefore.rnet,
    'no command reached the RNET controller',
  );
  t.notOk(
    monoprice.commands.slice(sentBefore.monoprice).some((c) => c.startsWith('<14')),
    'no command reached the Monoprice zone',
  );

  t.equal(
    (await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [of(MAIN, 14).id] })).status,
    204,
    "its own amplifier's zone works",
  );
  const zone = await api.post('/api/zones', { name: 'Twice', output: { channel: 11 } });
  t.equal(zone.status, 400, 'creating a zone needs the amplifier too');
});
