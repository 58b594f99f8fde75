// The whole daemon on the Monoprice driver over a real pty: API changes reach the wire, keypads reach the stream.
import t, { type Test } from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { eventOf, isEvent } from '../helpers/sse.js';
import { within } from '../helpers/wait-for.js';
import { daemonOnDriver } from './daemon-rig.js';
import { FAST } from './monoprice-rig.js';

/** A daemon on the Monoprice driver, wired to an emulated one-unit amplifier over a pty; each test gets its own. */
async function setup(t: Test) {
  const { pty, emulator, driver, api, zones, stream } = await daemonOnDriver(
    t,
    new MonopriceEmulator({ units: 1 }),
    (serialPort) => new MonopriceDriver({ serialPort, ...FAST }),
  );
  /**
   * Turns zone 11 on through the API and waits until the driver wrote everything: the zone's first-start settings
   * wait for power-on, and a keypad change made before they are written would be overwritten by them.
   */
  const powerOn = async () => {
    const onWire = emulator.waitForCommand((c) => c === '<11PR01');
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
    await onWire;
    await within(driver.settled(), undefined, 'the driver to write what waited for power-on');
  };
  return { pty, emulator, api, zones, stream, powerOn };
}

t.test('on the monoprice driver, zones are the amplifier addresses of the fitted unit', async (t) => {
  const { api, zones } = await setup(t);
  t.same(zones.map((z) => z.output.channel), [11, 12, 13, 14, 15, 16]);
  t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'monoprice', online: true }] });
});

t.test('on the monoprice driver, attach and volume reach the wire as the right commands, power first', async (t) => {
  const { api, zones, emulator } = await setup(t);
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
  const volumeOnWire = emulator.waitForCommand((c) => c === '<11VO19');
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
  await volumeOnWire;
  const sets = emulator.commands.filter((c) => c.startsWith('<11'));
  t.ok(sets.indexOf('<11PR01') >= 0, 'powered on');
  t.ok(sets.indexOf('<11PR01') < sets.indexOf('<11CH03'), 'power before source');
  t.ok(sets.includes('<11CH03'), 'source selected');
  t.match(emulator.state(11), { power: true, source: 3, volume: 19 });
});

t.test('on the monoprice driver, a keypad change on the amplifier becomes an event and the stored state', async (t) => {
  const { api, zones, emulator, stream, powerOn } = await setup(t);
  await powerOn();
  emulator.keypad(11, { volume: 30 });
  const m = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id && Math.round(p.volume * 38) === 30), 5000, 'keypad event');
  t.ok(eventOf(m));
  t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * 38), 30);
});

t.test('on the monoprice driver, unplugged: the API keeps serving and health says offline; replugged: the change made meanwhile is applied', async (t) => {
  const { api, zones, emulator, stream, pty, powerOn } = await setup(t);
  await powerOn();
  await pty.kill();
  await stream.next(isEvent('hardware.status', (p) => p.online === false), 5000, 'hardware offline');
  t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name: 'monoprice', online: false }] });
  // 0.5 is step 19; the emulated amplifier starts every zone at step 10, so 19 has to travel to be seen.
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.5 })).status, 204, 'answered without the line');
  const online = stream.next(isEvent('hardware.status', (p) => p.online === true), 5000, 'hardware online');
  // Listen before replugging: the driver may push the change before the online event is seen here.
  const applied = emulator.waitForCommand((c) => c === '<11VO19');
  await pty.replug();
  await emulator.attachPath(pty.b);
  await online;
  await applied;
  t.equal(emulator.state(11).volume, 19);
});
