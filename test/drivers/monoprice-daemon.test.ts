// The whole daemon on the Monoprice driver, on an in-memory line: the cases every serial family shares
// (test/drivers/daemon-cases.ts), with the Monoprice's own addresses and commands.
import t from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { daemonCases } from './daemon-cases.js';
import { STEPS } from './monoprice-rig.js';

daemonCases(t, {
  name: 'monoprice',
  steps: STEPS,
  channels: [11, 12, 13, 14, 15, 16],
  channel: 11,
  keypadVolume: 25,
  secondUnit: [21, 22, 23, 24, 25, 26],
  pollIntervalMs: 5000,
  emulator: (clock, { secondUnit }) => new MonopriceEmulator({ units: secondUnit ? 2 : 1, clock }),
  driver: (wiring) => new MonopriceDriver(wiring),
  state: (emulator, channel) => emulator.state(channel),
  // `<11VO25`: zone, attribute, value.
  writes: (emulator) =>
    emulator.commands.flatMap((command) => {
      const m = /^<(\d\d)([A-Z]{2})(\d\d)$/.exec(command);
      return m ? [{ channel: Number(m[1]), attribute: m[2] === 'VO' ? 'volume' : m[2] === 'PR' ? 'power' : 'other', value: Number(m[3]) }] : [];
    }),
  secondUnitFitted: (emulator, fitted) => (emulator.units = fitted ? 2 : 1),
});
