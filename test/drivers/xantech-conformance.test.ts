// The Xantech driver passes the shared conformance suite: the real driver and the byte-exact emulator on an in-memory
// line, production timings on a hand-driven clock, zone-activity reports on (the driver's own changes reported too).
import t from 'tap';
import { driverConformance } from './conformance.js';
import { conformanceBase, onNextCommand } from './memory-rig.js';
import { flagsOf, fromStatus, observed, rig, STEPS, toKeypad, toneOf } from './xantech-rig.js';

const EXPANSION = [9, 10, 11, 12, 13, 14, 15, 16];

driverConformance(t, {
  expect: { zones: 8, inputs: 8, volumeSteps: STEPS },
  async create(t, options = {}) {
    // 'absent': the daemon remembers zones 9..16 from when an expansion amplifier was linked; the driver is set to 8.
    const expanded = options.secondUnit === 'fitted';
    const r = await rig(t, {
      emulator: { reportOwnChanges: true, zones: expanded ? 16 : 8, byteDelayMs: options.paced ? 1.04 : 0 },
      driver: { zones: expanded ? 16 : 8 },
    });
    return {
      ...conformanceBase(r),
      keypad: (channel, change) => r.emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(r.emulator.zone(channel)),
      hardwareTone: (channel) => toneOf(r.emulator.zone(channel)),
      hardwareFlags: (channel) => flagsOf(r.emulator.zone(channel)),
      observed: () => observed(r),
      // The change goes unreported (its activity report lost): the safety poll's read is the one that shows it.
      keypadSeenThen(channel, change, then) {
        r.emulator.activityUpdates = false;
        r.emulator.keypad(channel, toKeypad(change));
        onNextCommand(
          r.emulator,
          (c) => c === `?${channel}ZD`,
          () => {
            r.emulator.activityUpdates = true;
            then();
          },
        );
      },
      volumeWrites: (channel) => r.emulator.commands.filter((c) => c.startsWith(`!${channel}VO`)).length,
      noisy(on) {
        r.emulator.garbleRate = on ? 0.03 : 0;
        r.emulator.dropRate = on ? 0.01 : 0;
        if (!on) return;
        r.emulator.injectNoise(Buffer.from([0x00, 0xff, 0x0a, 0x23, 0x3f, 0x2b, 0x0d]));
        r.emulator.injectNoise('ERROR\rOK\r#1ZS PR1 SS1 VO1');
      },
      // Mains off and on again: the port stays open, the amp goes silent and forgets its zone-activity mode.
      unplug: () => r.emulator.powerOff(),
      replug: () => r.emulator.powerOn(),
      secondUnit: {
        channels: EXPANSION,
        remove: () => (r.emulator.zones = 8),
        restore: () => (r.emulator.zones = 16),
      },
    };
  },
  skip: {
    'setTone loudness reaches the amplifier and reads back': 'the Xantech protocol has no loudness command',
    'do-not-disturb is reported when the amplifier shows it': 'the Xantech protocol reports no do-not-disturb',
    'party mode is reported when the amplifier shows it': 'the Xantech protocol reports no party mode',
  },
});
