// The whole daemon on the Monoprice driver, on an in-memory line: API changes reach the wire, keypads reach the
// zones and events, and the cases every serial family shares (test/drivers/daemon-cases.ts).
import t from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { daemonCases, type WireWrite } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './monoprice-rig.js';

const MONOPRICE = {
  emulator: (clock: MonopriceEmulator['clock']) => new MonopriceEmulator({ units: 1, clock }),
  driver: (wiring: ConstructorParameters<typeof MonopriceDriver>[0]) => new MonopriceDriver(wiring),
};

function writes(emulator: MonopriceEmulator): WireWrite[] {
  return emulator.commands.flatMap((command) => {
    const m = /^<(\d\d)([A-Z]{2})(\d\d)$/.exec(command);
    if (!m) return [];
    const attribute = m[2] === 'VO' ? 'volume' : m[2] === 'PR' ? 'power' : 'other';
    return [{ channel: Number(m[1]), attribute, value: Number(m[3]) }];
  });
}

daemonCases(t, {
  name: 'monoprice',
  steps: STEPS,
  channel: 11,
  keypadVolume: 25,
  secondUnit: [21, 22, 23, 24, 25, 26],
  pollIntervalMs: 5000,
  emulator: (clock, { secondUnit }) => new MonopriceEmulator({ units: secondUnit ? 2 : 1, clock }),
  driver: (wiring) => new MonopriceDriver(wiring),
  keypad: (emulator, channel, change) => emulator.keypad(channel, change),
  state: (emulator, channel) => ({ power: emulator.state(channel).power, volume: emulator.state(channel).volume }),
  writes,
  secondUnitFitted: (emulator, fitted) => (emulator.units = fitted ? 2 : 1),
});

t.test('on the monoprice driver, zones are the amplifier addresses of the fitted unit', async (t) => {
  const { api, zones } = await daemonOnMemory(t, MONOPRICE);
  t.same(zones.map((z) => z.output.channel), [11, 12, 13, 14, 15, 16]);
  t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'monoprice', online: true }] });
});

t.test('on the monoprice driver, attach and volume reach the wire as the right commands, power first', async (t) => {
  const { api, zones, emulator, until } = await daemonOnMemory(t, MONOPRICE);
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
  await until(() => emulator.commands.includes('<11VO19'), 'the volume on the wire');
  const sets = writes(emulator).filter((w) => w.channel === 11);
  t.same(sets.map((w) => w.attribute).slice(0, 2), ['power', 'other'], 'power before source');
  t.match(emulator.state(11), { power: true, source: 3, volume: 19 });
});

t.test('on the monoprice driver, a keypad change on the amplifier becomes an event and the stored state', async (t) => {
  const { api, zones, emulator, events, until } = await daemonOnMemory(t, MONOPRICE);
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(() => emulator.state(11).power, 'the zone on');
  emulator.keypad(11, { volume: 30 });
  await until(() => events.some((e) => e.type === 'zone.volumeChanged' && Math.round(e.payload.volume * STEPS) === 30), 'the keypad event');
  t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * STEPS), 30);
});

t.test('on the monoprice driver, unplugged: the API keeps serving and health says offline; replugged: the change made meanwhile is applied', async (t) => {
  const { api, zones, emulator, serial, driver, events, until } = await daemonOnMemory(t, MONOPRICE);
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(driver.settled(), 'the power-on written');
  serial.unplug();
  await until(() => events.some((e) => e.type === 'hardware.status' && !e.payload.online), 'hardware offline');
  t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name: 'monoprice', online: false }] });
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.5 })).status, 204, 'answered without the line');
  serial.replug();
  await until(() => emulator.state(11).volume === 19, 'the change made meanwhile on the amplifier');
  t.match((await api.get('/api/health')).body, { status: 'ok' });
});
