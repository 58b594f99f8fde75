// The Monoprice driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import { driverConformance } from './conformance.js';
import { STEPS, fromStatus, rig, toKeypad } from './monoprice-rig.js';

// One case at a time: the Monoprice rig's keypad cases wait for the driver's poll, which missed its 150 ms reply
// timeout under load when cases ran side by side.

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t) {
    const r = await rig(t, { emulator: { units: 1 }, driver: { reconnectMinMs: 50 } });
    return {
      driver: r.driver,
      keypad: (channel, change) => r.emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(r.emulator.state(channel)),
      observed: r.observed,
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`<${channel}VO`)).length,
      // The USB adapter is pulled and plugged back in: the port vanishes and returns at the same path.
      unplug: r.unplug,
      replug: r.replug,
    };
  },
});
