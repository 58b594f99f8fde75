// The RNET driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { driverConformance } from './conformance.js';
import { STEPS, fromEmulated, rig, toEmulated } from './rnet-rig.js';

// Every case builds its own rig and mostly waits on the emulated line: a few run at once (conformance.ts runs the
// cases that count timers or pace a burst ALONE).
concurrently(t);

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t) {
    const r = await rig(t, { emulator: { controllers: 1 } });
    return {
      driver: r.driver,
      // As heard on a real bus: the change is made and the keypad's event goes out on it.
      keypad: (channel, change) => r.emulator.keypad(channel, toEmulated(change)),
      hardware: (channel) => fromEmulated(r.emulator.state(channel)),
      observed: r.observed,
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`volume ${channel} `)).length,
      // The RS-232 adapter is pulled and plugged back in: the port vanishes and returns at the same path.
      unplug: r.unplug,
      replug: r.replug,
    };
  },
});
