// The whole daemon on the RNET driver, on an in-memory line: the cases every serial family shares
// (test/drivers/daemon-cases.ts), and a mute asked for through the API reaching the bus as RNET's toggle.
import t from 'tap';
import { RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { daemonCases } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './rnet-rig.js';

daemonCases(t, {
  name: 'rnet',
  steps: STEPS,
  channels: [11, 12, 13, 14, 15, 16],
  channel: 11,
  keypadVolume: 40,
  secondUnit: [21, 22, 23, 24, 25, 26],
  pollIntervalMs: 5000,
  emulator: (clock, { secondUnit }) => new RnetEmulator({ controllers: secondUnit ? 2 : 1, clock }),
  driver: (wiring) => new RnetDriver(wiring),
  state: (emulator, channel) => emulator.state(channel),
  // `volume 11 25`, `power 11 on`: what, zone, value.
  writes: (emulator) =>
    emulator.commands.flatMap((command) => {
      const m = /^(power|volume|source|mute) (\d\d)(?: (\S+))?$/.exec(command);
      if (!m) return [];
      const value = m[3] === 'on' ? 1 : m[3] === 'off' ? 0 : Number(m[3] ?? 1);
      return [
        {
          channel: Number(m[2]),
          attribute: m[1] === 'volume' ? 'volume' : m[1] === 'power' ? 'power' : 'other',
          value,
        },
      ];
    }),
  secondUnitFitted: (emulator, fitted) => (emulator.controllers = fitted ? 2 : 1),
});

t.test('on the rnet driver, a mute asked for through the API reaches the bus as the toggle', async (t) => {
  const { api, zones, emulator, until, driver } = await daemonOnMemory(t, {
    emulator: (clock) => new RnetEmulator({ controllers: 1, clock }),
    driver: (wiring) => new RnetDriver(wiring),
  });
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
  await until(driver.settled(), 'the zone on');
  t.equal((await api.put(`/api/zones/${zones[0]!.id}/mute`, { muted: true })).status, 204);
  await until(driver.settled(), 'the mute on the bus');
  t.equal(emulator.state(11).muted, true);
  t.ok(emulator.commands.includes('mute 11'), 'the toggle went out');
  t.match((await api.get(`/api/zones/${zones[0]!.id}`)).body, { muted: true });
});
