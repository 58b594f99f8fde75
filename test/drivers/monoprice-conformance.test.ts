// The Monoprice driver passes the shared conformance suite: the real driver and the byte-exact emulator on an
// in-memory line, production timings on a hand-driven clock.
import t from 'tap';
import { driverConformance } from './conformance.js';
import { conformanceBase, onNextCommand } from './memory-rig.js';
import { flagsOf, fromStatus, observed, rig, STEPS, toKeypad, toneOf } from './monoprice-rig.js';

const UNIT_2 = [21, 22, 23, 24, 25, 26];

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t, options = {}) {
    const r = await rig(t, {
      emulator: { units: options.secondUnit === 'fitted' ? 2 : 1, byteDelayMs: options.paced ? 1.04 : 0 },
    });
    return {
      ...conformanceBase(r),
      keypad: (channel, change) => r.emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(r.emulator.state(channel)),
      hardwareTone: (channel) => toneOf(r.emulator.state(channel)),
      hardwareFlags: (channel) => flagsOf(r.emulator.state(channel)),
      observed: () => observed(r),
      keypadSeenThen(channel, change, then) {
        r.emulator.keypad(channel, toKeypad(change));
        onNextCommand(r.emulator, (c) => c === `?${Math.floor(channel / 10) * 10}` || c === `?${channel}`, then);
      },
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`<${channel}VO`)).length,
      noisy(on) {
        r.emulator.garbleRate = on ? 0.03 : 0;
        r.emulator.dropRate = on ? 0.01 : 0;
        if (!on) return;
        r.emulator.injectNoise(Buffer.from([0x00, 0xff, 0x0a, 0x23, 0x3e, 0x31, 0x31, 0x0d, 0x0a, 0x23]));
        r.emulator.injectNoise('\r\nCommand Error.\r\n#>1100010000131112100401\r\n#\x1b[2J garbage without a prompt');
      },
      secondUnit: {
        channels: UNIT_2,
        remove: () => (r.emulator.units = 1),
        restore: () => (r.emulator.units = 2),
      },
    };
  },
  skip: {
    'setTone loudness reaches the amplifier and reads back': 'the Monoprice protocol has no loudness command',
    'party mode is reported when the amplifier shows it': 'the Monoprice protocol reports no party mode',
  },
});
