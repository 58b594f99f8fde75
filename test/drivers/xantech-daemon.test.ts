// The whole daemon on the Xantech driver over a real pty: API changes reach the wire, activity reports reach the stream.
import t, { type Test } from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { eventOf, isEvent } from '../helpers/sse.js';
import { within } from '../helpers/wait-for.js';
import { daemonOnDriver } from './daemon-rig.js';
import { FAST, FAST_EMULATOR } from './xantech-rig.js';

/** A daemon on the Xantech driver, wired to an emulated amplifier over a pty; each test gets its own. */
function setup(t: Test) {
  // The safety poll out of the way: what the daemon hears from a keypad must come from an activity report.
  return daemonOnDriver(t, new XantechEmulator(FAST_EMULATOR), (serialPort) =>
    new XantechDriver({ serialPort, ...FAST, activityPollIntervalMs: 60_000 }),
  );
}

t.test('on the xantech driver, zones are the eight outputs and health names the driver', async (t) => {
  const { api, zones } = await setup(t);
  t.same(zones.map((z) => z.output.channel), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'xantech', online: true }] });
});

t.test('on the xantech driver, attach and volume reach the wire as !...+ commands, power first', async (t) => {
  const { api, zones, emulator } = await setup(t);
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
  const volumeOnWire = emulator.waitForCommand((c) => c === '!1VO19');
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
  await volumeOnWire;
  const sets = emulator.commands.filter((c) => c.startsWith('!1'));
  t.ok(sets.indexOf('!1PR1') >= 0, 'powered on');
  t.ok(sets.indexOf('!1PR1') < sets.indexOf('!1SS3'), 'power before source');
  t.match(emulator.zone(1), { power: true, source: 3, volume: 19 });
});

t.test('on the xantech driver, a keypad change reported by the amplifier becomes an event and the stored state', async (t) => {
  const { api, zones, emulator, stream, driver } = await setup(t);
  const onWire = emulator.waitForCommand((c) => c === '!1PR1');
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await onWire;
  // The zone's first-start settings wait for power-on; a keypad change before they are written would be overwritten.
  await within(driver.settled(), undefined, 'the driver to write what waited for power-on');
  emulator.keypad(1, { volume: 30 });
  const m = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id && Math.round(p.volume * 38) === 30), 5000, 'keypad event');
  t.ok(eventOf(m));
  t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * 38), 30);
});
