// Volume limits against a keypad on the Monoprice emulator, on an in-memory line: the whole daemon pulls a raise above
// a zone's limit back on the amplifier, and a zone switched on at the keypad starts at its turn-on volume.
import t, { type Test } from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './monoprice-rig.js';

const step = (volume: number) => Math.round(volume * STEPS);

async function setup(t: Test) {
  const rig = await daemonOnMemory(t, {
    emulator: (clock) => new MonopriceEmulator({ units: 1, clock }),
    driver: (wiring) => new MonopriceDriver(wiring),
  });
  const { api, emulator, until, zones } = rig;
  /** Switches a zone on through the API and runs until the driver wrote everything that waited for power-on. */
  const powerOn = async (index: number, address: number) => {
    t.equal((await api.put(`/api/zones/${zones[index]!.id}/power`, { power: true })).status, 204);
    await until(() => emulator.state(address).power, 'the zone on');
    await until(rig.driver.settled(), 'the driver to write what waited for power-on');
  };
  const limit = async (index: number, body: Record<string, unknown>) => {
    t.equal((await api.put(`/api/zones/${zones[index]!.id}`, body)).status, 200);
  };
  return { ...rig, powerOn, limit };
}

t.test(
  'on the monoprice driver, a keypad raise above the limit is pulled back on the amplifier and the limit is reported',
  async (t) => {
    const { api, emulator, events, until, zones, powerOn, limit } = await setup(t);
    const zoneId = zones[0]!.id;
    await limit(0, { maxVolume: 0.5 });
    await powerOn(0, 11);
    emulator.keypad(11, { volume: 30 });
    await until(() => emulator.commands.includes(`<11VO${step(0.5)}`), 'the volume pulled back on the wire');
    const reported = events.filter((e) => e.type === 'zone.volumeChanged' && e.payload.zoneId === zoneId);
    t.same(
      reported.map((e) => e.type === 'zone.volumeChanged' && e.payload.volume),
      [0.5],
      'the event reports the limit, and nothing above it',
    );
    t.equal(emulator.state(11).volume, 19, 'the amplifier is back at the limit step');
    t.equal((await api.get(`/api/zones/${zoneId}`)).body.volume, 0.5);
  },
);

t.test('on the monoprice driver, an API volume above the limit reaches the wire as the limit step', async (t) => {
  const { api, emulator, until, zones, powerOn, limit } = await setup(t);
  await limit(0, { maxVolume: 0.4 });
  await powerOn(0, 11);
  const mark = emulator.commands.length;
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 1 })).status, 204);
  await until(() => emulator.commands.slice(mark).some((c) => c.startsWith('<11VO')), 'a volume on the wire');
  t.same(
    emulator.commands.slice(mark).filter((c) => c.startsWith('<11VO')),
    [`<11VO${step(0.4)}`],
  );
  t.equal((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume, 0.4);
});
