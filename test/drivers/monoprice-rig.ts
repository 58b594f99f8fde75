// A Monoprice driver wired to the emulator over a real pty, with fast timings; shared by the driver test files.
import type { Test } from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { MonopriceDriver, type MonopriceOptions } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator, type EmulatorOptions, type KeypadChange } from '../../drivers/monoprice/emulator.js';
import type { ZoneStatus } from '../../drivers/monoprice/protocol.js';
import { fromStatusLine, serialRig, toStatusChange, type SerialRig } from './serial-rig.js';

export { startOnline } from './serial-rig.js';

export const STEPS = 38;

/** Short timings so faults resolve in milliseconds; the defaults are for a real 9600 baud line. */
export const FAST: Partial<MonopriceOptions> = {
  pollIntervalMs: 40,
  commandTimeoutMs: 150,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

export type Rig = SerialRig<MonopriceDriver, MonopriceEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<MonopriceOptions>;
  deferredPort?: boolean;
}

export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return serialRig(t, {
    emulator: new MonopriceEmulator(options.emulator),
    driver: (serialPort, log) => new MonopriceDriver({ serialPort, ...FAST, log, ...options.driver }),
    // The reply to one poll is handled before the next poll is sent, so the second ?10 proves the first was seen.
    observed: async (emulator) => {
      await emulator.waitForCommand((c) => c === '?10');
      await emulator.waitForCommand((c) => c === '?10');
    },
    deferredPort: options.deferredPort ?? false,
  });
}

/** Commands the amp received since `mark` (an index into emulator.commands), sets only. */
export const setsSince = (r: Rig, mark = 0): string[] => r.emulator.commands.slice(mark).filter((c) => c.startsWith('<'));

/** Timeouts the driver logged. */
export const timeouts = (r: Rig): string[] => r.logs.filter((l) => l.includes('timeout on'));

export const toKeypad = (change: Partial<ZoneState>): KeypadChange => toStatusChange(change, STEPS);
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
