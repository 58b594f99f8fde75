// The Xantech driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { driverConformance } from './conformance.js';
import { STEPS, fromStatus, rig, toKeypad } from './xantech-rig.js';

// Every case builds its own rig and mostly waits on the emulated line: a few run at once (conformance.ts runs the
// cases that count timers or pace a burst ALONE).
concurrently(t);

driverConformance(t, {
  expect: { zones: 8, inputs: 8, volumeSteps: STEPS },
  async create(t) {
    // Zone-activity reports on, and the amp reports the driver's own changes too: the case where echoes could leak.
    const r = await rig(t, { emulator: { reportOwnChanges: true }, driver: { reconnectMinMs: 50 } });
    return {
      driver: r.driver,
      keypad: (channel, change) => r.emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(r.emulator.zone(channel)),
      observed: r.observed,
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`!${channel}VO`)).length,
      // Mains off and on again: the port stays open, the amp goes silent and forgets its zone-activity mode.
      unplug: async () => r.emulator.powerOff(),
      replug: async () => r.emulator.powerOn(),
    };
  },
});
