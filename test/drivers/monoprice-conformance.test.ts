// The Monoprice driver passes the shared conformance suite: the real driver and the byte-exact emulator on an
// in-memory line, production timings on a hand-driven clock.
import t from 'tap';
import { driverConformance } from './conformance.js';
import { onNextCommand } from './memory-rig.js';
import { STEPS, fromStatus, observed, rig, toKeypad } from './monoprice-rig.js';

const UNIT_2 = [21, 22, 23, 24, 25, 26];

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t, options = {}) {
    const r = await rig(t, { emulator: { units: options.secondUnit === 'fitted' ? 2 : 1 } });
    return {
      driver: r.driver,
      keypad: (channel, change) => r.emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(r.emulator.state(channel)),
      observed: () => observed(r),
      until: r.until,
      advance: (ms) => r.time.advance(ms),
      timers: r.timers,
      keypadSeenThen(channel, change, then) {
        r.emulator.keypad(channel, toKeypad(change));
        onNextCommand(r.emulator, (c) => c === `?${Math.floor(channel / 10) * 10}` || c === `?${channel}`, then);
      },
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`<${channel}VO`)).length,
      // The USB adapter is pulled and plugged back in: the port vanishes and returns at the same path.
      unplug: () => r.serial.unplug(),
      replug: () => r.serial.replug(),
      secondUnit: {
        channels: UNIT_2,
        remove: () => (r.emulator.units = 1),
        restore: () => (r.emulator.units = 2),
      },
    };
  },
});
