// The whole daemon on the RNET driver, on an in-memory line: API changes reach the bus, wall keypads reach the zones
// and events, and the cases every serial family shares (test/drivers/daemon-cases.ts).
import t from 'tap';
import { RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { daemonCases, type WireWrite } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './rnet-rig.js';

const RNET = {
  emulator: (clock: RnetEmulator['clock']) => new RnetEmulator({ controllers: 1, clock }),
  driver: (wiring: ConstructorParameters<typeof RnetDriver>[0]) => new RnetDriver(wiring),
};

function writes(emulator: RnetEmulator): WireWrite[] {
  return emulator.commands.flatMap((command) => {
    const m = /^(power|volume|source|mute) (\d\d)(?: (\S+))?$/.exec(command);
    if (!m) return [];
    const attribute = m[1] === 'volume' ? 'volume' : m[1] === 'power' ? 'power' : 'other';
    return [{ channel: Number(m[2]), attribute, value: m[3] === 'on' ? 1 : m[3] === 'off' ? 0 : Number(m[3] ?? 1) }];
  });
}

daemonCases(t, {
  name: 'rnet',
  steps: STEPS,
  channel: 11,
  keypadVolume: 40,
  secondUnit: [21, 22, 23, 24, 25, 26],
  pollIntervalMs: 5000,
  emulator: (clock, { secondUnit }) => new RnetEmulator({ controllers: secondUnit ? 2 : 1, clock }),
  driver: (wiring) => new RnetDriver(wiring),
  keypad: (emulator, channel, change) => emulator.keypad(channel, change),
  state: (emulator, channel) => ({ power: emulator.state(channel).power, volume: emulator.state(channel).volume }),
  writes,
  secondUnitFitted: (emulator, fitted) => (emulator.controllers = fitted ? 2 : 1),
});

t.test('on the rnet driver, zones are controller 1 zones 1 to 6, as channels 11 to 16', async (t) => {
  const { api, zones } = await daemonOnMemory(t, RNET);
  t.same(zones.map((z) => z.output.channel), [11, 12, 13, 14, 15, 16]);
  t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'rnet', online: true }] });
});

t.test('on the rnet driver, attach, volume and mute reach the bus as RNET events, power first', async (t) => {
  const { api, zones, emulator, until, driver } = await daemonOnMemory(t, RNET);
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
  await until(driver.settled(), 'the writes on the bus');
  const sent = writes(emulator).filter((w) => w.channel === 11);
  t.same(sent.map((w) => w.attribute).slice(0, 2), ['power', 'other'], 'power before source');
  t.match(emulator.state(11), { power: true, source: 3, volume: 25 });
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/mute`, { muted: true })).status, 204);
  await until(() => emulator.state(11).muted, 'the mute toggle');
  t.ok(emulator.commands.includes('mute 11'));
});

t.test('on the rnet driver, a wall keypad change becomes an event and the stored state', async (t) => {
  const { api, zones, emulator, events, until, driver } = await daemonOnMemory(t, RNET);
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(driver.settled(), 'the zone on');
  emulator.press(11, 'volume-up');
  const volume = emulator.state(11).volume;
  await until(() => events.some((e) => e.type === 'zone.volumeChanged' && Math.round(e.payload.volume * STEPS) === volume), 'the keypad event');
  const zone = (await api.get(`/api/zones/${zones[0]!.id}`)).body;
  t.equal(Math.round(zone.volume * STEPS), volume);
  t.equal(zone.muted, false);
});

t.test('on the rnet driver, unplugged: the API keeps serving and health says offline; replugged: the change made meanwhile is applied', async (t) => {
  const { api, zones, emulator, serial, driver, events, until } = await daemonOnMemory(t, RNET);
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(driver.settled(), 'the power-on written');
  serial.unplug();
  await until(() => events.some((e) => e.type === 'hardware.status' && !e.payload.online), 'hardware offline');
  t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name: 'rnet', online: false }] });
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.2 })).status, 204, 'answered without the line');
  serial.replug();
  await until(() => emulator.state(11).volume === 10, 'the change made meanwhile on the controller');
});
