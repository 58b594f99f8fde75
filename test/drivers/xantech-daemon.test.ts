// The whole daemon on the Xantech driver, on an in-memory line: API changes reach the wire, activity reports reach
// the zones and events, and the cases every serial family shares (test/drivers/daemon-cases.ts).
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { daemonCases, type WireWrite } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './xantech-rig.js';

const XANTECH = {
  emulator: (clock: XantechEmulator['clock']) => new XantechEmulator({ clock }),
  driver: (wiring: ConstructorParameters<typeof XantechDriver>[0]) => new XantechDriver(wiring),
};

function writes(emulator: XantechEmulator): WireWrite[] {
  return emulator.commands.flatMap((command) => {
    const m = /^!(\d{1,2})([A-Z]{2})(\d{1,2})$/.exec(command);
    if (!m) return [];
    const attribute = m[2] === 'VO' ? 'volume' : m[2] === 'PR' ? 'power' : 'other';
    return [{ channel: Number(m[1]), attribute, value: Number(m[3]) }];
  });
}

daemonCases(t, {
  name: 'xantech',
  steps: STEPS,
  channel: 1,
  keypadVolume: 30,
  secondUnit: [9, 10, 11, 12, 13, 14, 15, 16],
  pollIntervalMs: 60_000, // with zone-activity reports on, the poll is a safety net
  emulator: (clock, { secondUnit }) => new XantechEmulator({ zones: secondUnit ? 16 : 8, clock }),
  driver: (wiring) => new XantechDriver({ ...wiring, zones: wiring.secondUnit ? 16 : 8 }),
  keypad: (emulator, channel, change) => emulator.keypad(channel, change),
  state: (emulator, channel) => ({ power: emulator.zone(channel).power, volume: emulator.zone(channel).volume }),
  writes,
  secondUnitFitted: (emulator, fitted) => (emulator.zones = fitted ? 16 : 8),
});

t.test('on the xantech driver, zones are the eight outputs and health names the driver', async (t) => {
  const { api, zones } = await daemonOnMemory(t, XANTECH);
  t.same(zones.map((z) => z.output.channel), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'xantech', online: true }] });
});

t.test('on the xantech driver, attach and volume reach the wire as !...+ commands, power first', async (t) => {
  const { api, zones, emulator, until } = await daemonOnMemory(t, XANTECH);
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
  await until(() => emulator.commands.includes('!1VO19'), 'the volume on the wire');
  const sets = emulator.commands.filter((c) => c.startsWith('!1'));
  t.ok(sets.indexOf('!1PR1') >= 0 && sets.indexOf('!1PR1') < sets.indexOf('!1SS3'), 'power before source');
  t.match(emulator.zone(1), { power: true, source: 3, volume: 19 });
});

t.test('on the xantech driver, a keypad change reported by the amplifier becomes an event and the stored state', async (t) => {
  const { api, zones, emulator, events, until, driver } = await daemonOnMemory(t, XANTECH);
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(driver.settled(), 'the zone on, and read again');
  const asked = emulator.commands.length;
  emulator.keypad(1, { volume: 30 });
  await until(() => events.some((e) => e.type === 'zone.volumeChanged' && Math.round(e.payload.volume * STEPS) === 30), 'the keypad event');
  t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * STEPS), 30);
  t.notOk(emulator.commands.slice(asked).includes('?1ZD'), 'the activity report carried it, not a poll');
});
