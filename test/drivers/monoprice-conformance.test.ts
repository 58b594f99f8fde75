// The Monoprice driver passes the shared conformance suite: real serialport, socat pty, byte-exact emulator.
import t from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator, type KeypadChange } from '../../drivers/monoprice/emulator.js';
import type { ZoneStatus } from '../../drivers/monoprice/protocol.js';
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
  expect: { zones: 6, inputs: 6, volumeSteps: STEPS },
  async create(t) {
    const pty = await createPtyPair();
    const emulator = new MonopriceEmulator({ units: 1 });
    await emulator.attachPath(pty.b);
    const driver = new MonopriceDriver({
      serialPort: pty.a,
      pollIntervalMs: 40,
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
      hardware: (channel) => fromStatus(emulator.state(channel)),
      // The reply to one poll is handled before the next poll is sent, so the second ?10 proves the first was seen.
      observed: async () => {
        await emulator.waitForCommand((c) => c === '?10');
        await emulator.waitForCommand((c) => c === '?10');
      },
      volumeWrites: (channel) => emulator.commands.filter((c) => c.startsWith(`<${channel}VO`)).length,
    };
  },
});
