// The RNET driver passes the shared conformance suite: the real driver and the byte-exact emulator on an in-memory
// line, production timings (100 ms pacing) on a hand-driven clock.
import t from 'tap';
import { driverConformance } from './conformance.js';
import { conformanceBase, onNextCommand } from './memory-rig.js';
import { flagsOf, fromEmulated, observed, rig, STEPS, toEmulated, toneOf } from './rnet-rig.js';

const CONTROLLER_2 = [21, 22, 23, 24, 25, 26];

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t, options = {}) {
    const r = await rig(t, {
      emulator: { controllers: options.secondUnit === 'fitted' ? 2 : 1, byteDelayMs: options.paced ? 0.52 : 0 },
    });
    return {
      ...conformanceBase(r),
      // As heard on a real bus: the change is made and the keypad's event goes out on it.
      keypad: (channel, change) => r.emulator.keypad(channel, toEmulated(change)),
      hardware: (channel) => fromEmulated(r.emulator.state(channel)),
      hardwareTone: (channel) => toneOf(r.emulator.state(channel)),
      hardwareFlags: (channel) => flagsOf(r.emulator.state(channel)),
      observed: () => observed(r),
      // The keypad's event makes the driver read the zone at once: that read shows the change.
      keypadSeenThen(channel, change, then) {
        onNextCommand(r.emulator, (c) => c === `info ${channel}`, then);
        r.emulator.keypad(channel, toEmulated(change));
      },
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`volume ${channel} `)).length,
      noisy(on) {
        r.emulator.garbleRate = on ? 0.02 : 0;
        r.emulator.dropRate = on ? 0.01 : 0;
        if (on) r.emulator.injectNoise(Buffer.from([0xf0, 0x00, 0xf1, 0xf7, 0xf7, 0xf0, 0xf0, 0x12]));
      },
      secondUnit: {
        channels: CONTROLLER_2,
        remove: () => (r.emulator.controllers = 1),
        restore: () => (r.emulator.controllers = 2),
      },
    };
  },
  skip: {
    'a tone control the family lacks is refused with the reason':
      'RNET has every tone control (bass, treble, balance, loudness)',
    'paging is reported when the amplifier shows it': 'RNET reports no paging',
  },
});
