// Volume limits against a keypad on the Monoprice emulator over a real pty: the whole daemon pulls a raise above a
// zone's limit back on the amplifier, and a zone switched on at the keypad starts at its turn-on volume.
import t, { type Test } from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { eventOf, isEvent } from '../helpers/sse.js';
import { within } from '../helpers/wait-for.js';
import { daemonOnDriver } from './daemon-rig.js';
import { FAST, STEPS } from './monoprice-rig.js';

async function setup(t: Test) {
  const rig = await daemonOnDriver(t, new MonopriceEmulator({ units: 1 }), (serialPort) => new MonopriceDriver({ serialPort, ...FAST }));
  const { api, emulator, driver, zones } = rig;
  /** Switches a zone on through the API and waits until the driver wrote everything that waited for power-on. */
  const powerOn = async (index: number, address: number) => {
    const onWire = emulator.waitForCommand((c) => c === `<${address}PR01`);
    t.equal((await api.put(`/api/zones/${zones[index]!.id}/power`, { power: true })).status, 204);
    await onWire;
    await within(driver.settled(), undefined, 'the driver to write what waited for power-on');
  };
  const limit = async (index: number, body: Record<string, unknown>) => {
    t.equal((await api.put(`/api/zones/${zones[index]!.id}`, body)).status, 200);
  };
  return { ...rig, powerOn, limit };
}

t.test('on the monoprice driver, a keypad raise above the limit is pulled back on the amplifier and the limit is reported', async (t) => {
  const { api, emulator, stream, zones, powerOn, limit } = await setup(t);
  const zoneId = zones[0]!.id;
  await limit(0, { maxVolume: 0.5 });
  await powerOn(0, 11);
  const pulledBack = emulator.waitForCommand((c) => c === `<11VO${String(Math.round(0.5 * STEPS)).padStart(2, '0')}`);
  emulator.keypad(11, { volume: 30 });
  await pulledBack;
  const reported = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === zoneId), 5000, 'the keypad change');
  t.equal(eventOf(reported)!.payload.volume, 0.5, 'the event reports the limit');
  t.equal(emulator.state(11).volume, 19, 'the amplifier is back at the limit step');
  t.equal((await api.get(`/api/zones/${zoneId}`)).body.volume, 0.5);
  const above = stream.messages.filter(isEvent('zone.volumeChanged', (p) => p.zoneId === zoneId && p.volume > 0.5));
  t.same(above, [], 'no event ever reported the raise');
});

t.test('on the monoprice driver, a zone switched on at the keypad starts at its turn-on volume', async (t) => {
  const { api, emulator, stream, zones, limit } = await setup(t);
  const zoneId = zones[1]!.id;
  await limit(1, { maxVolume: 0.5, turnOnVolume: 0.15 });
  const turnOn = emulator.waitForCommand((c) => c === `<12VO${String(Math.round(0.15 * STEPS)).padStart(2, '0')}`);
  emulator.keypad(12, { power: true, volume: 25 });
  await stream.next(isEvent('zone.powerChanged', (p) => p.zoneId === zoneId && p.power === true), 5000, 'the keypad power-on');
  await turnOn;
  t.match((await api.get(`/api/zones/${zoneId}`)).body, { power: true, volume: 0.15 });
  t.equal(emulator.state(12).volume, 6);
});

t.test('on the monoprice driver, an API volume above the limit reaches the wire as the limit step', async (t) => {
  const { api, emulator, zones, powerOn, limit } = await setup(t);
  await limit(0, { maxVolume: 0.4 });
  await powerOn(0, 11);
  const onWire = emulator.waitForCommand((c) => c.startsWith('<11VO'));
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 1 })).status, 204);
  t.equal(await onWire, `<11VO${String(Math.round(0.4 * STEPS)).padStart(2, '0')}`);
  t.equal((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume, 0.4);
});
