// The Xantech driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator, type KeypadChange } from '../../drivers/xantech/emulator.js';
import type { ZoneStatus } from '../../drivers/xantech/protocol.js';
import { createPtyPair } from '../helpers/pty.js';
import { driverConformance } from './conformance.js';

const STEPS = 38;

function toKeypad(change: Partial<ZoneState>): KeypadChange {
  const out: KeypadChange = {};
  if (change.power !== undefined) out.power = change.power;
  if (change.muted !== undefined) out.mute = change.muted;
  if (change.volume !== undefined) out.volume = volumeToStep(change.volume, STEPS);
  if (change.source !== undefined) out.source = change.source;
  return out;
}

const fromStatus = (s: ZoneStatus): ZoneState => ({
  power: s.power,
  muted: s.mute,
  volume: stepToVolume(s.volume, STEPS),
  source: s.source,
});

driverConformance(t, {
  expect: { zones: 8, inputs: 8, volumeSteps: STEPS },
  async create(t) {
    const pty = await createPtyPair();
    // Zone-activity reports on, and the amp reports the driver's own changes too: the case where echoes could leak.
    const emulator = new XantechEmulator({ activityDelayMs: 5, reportOwnChanges: true });
    await emulator.attachPath(pty.b);
    const driver = new XantechDriver({
      serialPort: pty.a,
      pollIntervalMs: 40,
      activityPollIntervalMs: 40,
      commandTimeoutMs: 150,
      interCommandGapMs: 2,
      reconnectMinMs: 50,
    });
    t.teardown(async () => {
      await driver.stop();
      await emulator.close();
      await pty.close();
    });
    return {
      driver,
      keypad: (channel, change) => emulator.keypad(channel, toKeypad(change)),
      hardware: (channel) => fromStatus(emulator.zone(channel)),
      // Reports go out first; the reply to one safety poll of zone 1 is handled before the next is sent.
      observed: async () => {
        await emulator.reportsSent();
        await emulator.waitForCommand((c) => c === '?1ZD');
        await emulator.waitForCommand((c) => c === '?1ZD');
      },
      volumeWrites: (channel) => emulator.commands.filter((c) => c.startsWith(`!${channel}VO`)).length,
    };
  },
});
