// A Xantech driver wired to the emulator over a real pty, with fast timings; shared by the driver test files.
import type { Test } from 'tap';
import type { DriverEvent, ZoneState } from '../../drivers/driver.js';
import { XantechDriver, type XantechOptions } from '../../drivers/xantech/driver.js';
import { XantechEmulator, type EmulatorOptions, type KeypadChange } from '../../drivers/xantech/emulator.js';
import type { ZoneStatus } from '../../drivers/xantech/protocol.js';
import { fromStatusLine, serialRig, toStatusChange, type SerialRig } from './serial-rig.js';

export { startOnline } from './serial-rig.js';

export const STEPS = 38;

/** Short timings so faults resolve in milliseconds; the defaults are for a real 9600 baud line. */
export const FAST: Partial<XantechOptions> = {
  pollIntervalMs: 40,
  activityPollIntervalMs: 40,
  commandTimeoutMs: 150,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

/** Reports follow activity after 5 ms instead of a second. */
export const FAST_EMULATOR: EmulatorOptions = { activityDelayMs: 5 };

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

export type Rig = SerialRig<XantechDriver, XantechEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<XantechOptions>;
  deferredPort?: boolean;
}

export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return serialRig(t, {
    emulator: new XantechEmulator({ ...FAST_EMULATOR, ...options.emulator }),
    driver: (serialPort, log) => new XantechDriver({ serialPort, ...FAST, log, ...options.driver }),
    // Reports go out first; the reply to one safety poll of zone 1 is handled before the next is sent (needs a fast poll).
    observed: async (emulator) => {
      await emulator.reportsSent();
      await emulator.waitForCommand((c) => c === '?1ZD');
      await emulator.waitForCommand((c) => c === '?1ZD');
    },
    deferredPort: options.deferredPort ?? false,
  });
}

/** Commands the amp received since `mark` (an index into emulator.commands), sets only. */
export const setsSince = (r: Rig, mark = 0): string[] => r.emulator.commands.slice(mark).filter((c) => c.startsWith('!'));

/** Zone events the driver emitted. */
export const zoneEvents = (r: Rig): DriverEvent[] => r.events.filter((e) => e.type === 'zone');

export const toKeypad = (change: Partial<ZoneState>): KeypadChange => toStatusChange(change, STEPS);
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
