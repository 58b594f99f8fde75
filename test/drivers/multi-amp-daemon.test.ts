// One daemon driving two amplifiers of different families at once: a Monoprice over a pty and an RNET controller over
// tcp:// (an IP-serial adapter), each wired to its emulator. Zones of both are listed with their amplifier, changes
// reach the right wire, keypads on either reach the API, and one amplifier unplugged leaves the other working.
import t, { type Test } from 'tap';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { amplifierKey, type AmplifierConfig } from '../../daemon/config.js';
import { client } from '../helpers/client.js';
import { concurrently } from '../helpers/concurrency.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { eventOf, isEvent, openStream } from '../helpers/sse.js';
import { createTcpBridge } from '../helpers/tcp-bridge.js';
import { within } from '../helpers/wait-for.js';
import { FAST as MONOPRICE_FAST } from './monoprice-rig.js';
import { FAST as RNET_FAST } from './rnet-rig.js';
import { emulatorOnPty } from './serial-rig.js';

// Every test starts its own daemon on its own ptys and emulators and mostly waits on them: a few run at once.
concurrently(t);

interface Zone {
  id: string;
  name: string;
  volume: number;
  muted: boolean;
  power: boolean;
  playerId: string | null;
  output: { amplifier: string; driver: string; channel: number };
}

interface Health {
  status: string;
  drivers: Array<{ name: string; online: boolean }>;
  amplifiers: Array<{ name: string; driver: string; online: boolean }>;
}

const MAIN = 'Main floor';
const UP = 'Upstairs';

function amplifier(name: string, driver: string, port: string, options: Record<string, number | string>): AmplifierConfig {
  return { name, key: amplifierKey(name), driver, port, options };
}

async function setup(t: Test) {
  const monoprice = new MonopriceEmulator({ units: 1 });
  const pty = await emulatorOnPty(t, monoprice);
  const rnet = new RnetEmulator({ controllers: 1 });
  const bridge = await createTcpBridge(t, { device: rnet });
  t.teardown(() => rnet.close());
  const d = await startTestDaemon(t, {
    configuredAmplifiers: true,
    config: {
      amplifiers: [
        amplifier(MAIN, 'monoprice', pty.a, { ...MONOPRICE_FAST } as Record<string, number>),
        amplifier(UP, 'rnet', bridge.url, { ...RNET_FAST } as Record<string, number>),
      ],
    },
  });
  const api = client(d.base, d.adminKey);
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);
  const bothOnline = async () => {
    for (const a of d.daemon.amplifiers.list) {
      if (a.driver.online) continue;
      await stream.next(isEvent('hardware.status', (p) => p.amplifier === a.name && p.online === true), 5000, `${a.name} online`);
    }
  };
  await bothOnline();
  const zones = (await api.get('/api/zones')).body as Zone[];
  const of = (name: string, channel: number) => zones.find((z) => z.output.amplifier === name && z.output.channel === channel)!;
  /**
   * Turns a zone on through the API and waits until its driver wrote everything: amplifiers ignore other commands to
   * a zone that is off, so a zone's first settings wait for power-on.
   */
  const powerOn = async (zone: Zone) => {
    t.equal((await api.put(`/api/zones/${zone.id}/power`, { power: true })).status, 204);
    const amp = d.daemon.amplifiers.list.find((a) => a.name === zone.output.amplifier)!;
    await within(amp.driver.settled(), undefined, `${amp.name} to write the power-on`);
  };
  return { d, api, stream, pty, monoprice, rnet, bridge, zones, of, powerOn };
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
    drivers: [{ name: 'monoprice', online: true }, { name: 'rnet', online: true }],
    amplifiers: [{ name: MAIN, driver: 'monoprice', online: true }, { name: UP, driver: 'rnet', online: true }],
  });
  const inputs = (await api.get('/api/input-devices')).body as Array<{ input: { amplifier: string } }>;
  t.same([...new Set(inputs.map((i) => i.input.amplifier))], [MAIN, UP], 'inputs of both, each with its amplifier');
});

t.test('an API volume change reaches the emulator of the zone\'s amplifier and not the other', async (t) => {
  const { api, monoprice, rnet, of, powerOn } = await setup(t);
  await powerOn(of(MAIN, 11));
  await powerOn(of(UP, 11));
  const rnetBefore = rnet.state(11).volume;
  const onMonoprice = monoprice.waitForCommand((c) => c === '<11VO19');
  t.equal((await api.put(`/api/zones/${of(MAIN, 11).id}/volume`, { volume: 0.5 })).status, 204);
  await onMonoprice;
  t.equal(monoprice.state(11).volume, 19);

  const onRnet = rnet.waitForCommand((c) => c === 'volume 11 40');
  t.equal((await api.put(`/api/zones/${of(UP, 11).id}/volume`, { volume: 0.8 })).status, 204);
  await onRnet;
  t.equal(rnet.state(11).volume, 40);
  t.equal(monoprice.state(11).volume, 19, 'the Monoprice zone with the same channel kept its volume');
  t.not(rnetBefore, 40);
  t.notOk(monoprice.commands.some((c) => c.startsWith('<11VO30')), 'the RNET change never reached the Monoprice wire');
});

t.test('a keypad change on either amplifier reaches the API and the event stream as that amplifier\'s zone', async (t) => {
  const { api, stream, monoprice, rnet, of, powerOn } = await setup(t);
  const upZone = of(UP, 12);
  await powerOn(upZone);
  rnet.press(12, 'volume-up');
  const fromRnet = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === upZone.id), 5000, 'RNET keypad event');
  t.ok(eventOf(fromRnet));
  const steps = Math.round(((await api.get(`/api/zones/${upZone.id}`)).body as Zone).volume * 50);
  t.equal(steps, rnet.state(12).volume, 'the stored RNET zone follows the controller');

  const mainZone = of(MAIN, 12);
  // What waited for power-on is written first, so it cannot overwrite the keypad's change below.
  await powerOn(mainZone);
  monoprice.keypad(12, { volume: 30 });
  const fromMonoprice = await stream.next(
    isEvent('zone.volumeChanged', (p) => p.zoneId === mainZone.id && Math.round(p.volume * 38) === 30),
    5000,
    'Monoprice keypad event',
  );
  t.ok(eventOf(fromMonoprice));
  t.equal(Math.round(((await api.get(`/api/zones/${mainZone.id}`)).body as Zone).volume * 38), 30);
});

t.test('one amplifier unplugged is offline alone, the other keeps working, and replugging recovers it without a restart', async (t) => {
  const { api, stream, monoprice, rnet, bridge, of, powerOn } = await setup(t);
  await powerOn(of(MAIN, 13));
  await powerOn(of(UP, 13));
  // The IP-serial adapter in front of the RNET controller goes away.
  await bridge.refuse();
  const offline = stream.next(isEvent('hardware.status', (p) => p.online === false), 5000, 'an amplifier offline');
  await bridge.drop();
  const status = eventOf(await offline) as { payload: { amplifier?: string; driver: string; online: boolean } };
  t.same(status.payload, { driver: 'rnet', online: false, amplifier: UP }, 'the event names the amplifier');
  const health = (await api.get('/api/health')).body as Health;
  t.equal(health.status, 'degraded');
  t.same(health.amplifiers, [{ name: MAIN, driver: 'monoprice', online: true }, { name: UP, driver: 'rnet', online: false }]);

  const onMonoprice = monoprice.waitForCommand((c) => c === '<13VO19');
  t.equal((await api.put(`/api/zones/${of(MAIN, 13).id}/volume`, { volume: 0.5 })).status, 204);
  await onMonoprice;
  t.equal(monoprice.state(13).volume, 19, 'the Monoprice amplifier still follows the API');
  t.equal((await api.put(`/api/zones/${of(UP, 13).id}/volume`, { volume: 0.2 })).status, 204, 'the offline one is answered too');

  const back = stream.next(isEvent('hardware.status', (p) => p.amplifier === UP && p.online === true), 5000, 'RNET back online');
  const applied = rnet.waitForCommand((c) => c === 'volume 13 10');
  await bridge.accept();
  await back;
  await applied;
  t.equal(rnet.state(13).volume, 10, 'the change made while unplugged is applied');
  t.match((await api.get('/api/health')).body, { status: 'ok', amplifiers: [{ online: true }, { online: true }] });
});

t.test('a player of one amplifier cannot feed a zone of the other: a 400 naming both, nothing changed', async (t) => {
  const { api, monoprice, rnet, of } = await setup(t);
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
  const sentBefore = { monoprice: monoprice.commands.length, rnet: rnet.commands.filter((c) => !c.startsWith('info')).length };
  const refused = await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [upZone.id, of(MAIN, 14).id] });
  t.equal(refused.status, 400);
  t.match(refused.body.detail, /feeds an input of the "Main floor" amplifier.*amplifier "Upstairs"/);
  t.same((await api.get(`/api/zones/${upZone.id}`)).body, before, 'the zone is unchanged');
  t.same(((await api.get(`/api/zones/${of(MAIN, 14).id}`)).body as Zone).playerId, null, 'nothing of the request was applied');
  t.same((await api.get(`/api/players/${player.id}`)).body.zoneIds, []);
  t.equal(rnet.commands.filter((c) => !c.startsWith('info')).length, sentBefore.rnet, 'no command reached the RNET controller');
  t.notOk(monoprice.commands.slice(sentBefore.monoprice).some((c) => c.startsWith('<14')), 'no command reached the Monoprice zone');

  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [of(MAIN, 14).id] })).status, 204, 'its own amplifier\'s zone works');
  const zone = (await api.post('/api/zones', { name: 'Twice', output: { channel: 11 } }));
  t.equal(zone.status, 400, 'creating a zone needs the amplifier too');
});
