// The Monoprice driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { driverConformance } from './conformance.js';
import { STEPS, fromStatus, rig, toKeypad } from './monoprice-rig.js';

// Every case builds its own rig and mostly waits on the emulated line: four run at once (conformance.ts runs the
// cases that count timers or pace a burst ALONE).
concurrently(t);

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
