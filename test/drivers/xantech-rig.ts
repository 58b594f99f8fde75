// A Xantech driver wired to the emulator: on an in-memory line with the production timings on a hand-driven clock
// (most tests), or over a real pty with short polls (the end-to-end ones); shared by the driver test files.
import type { Test } from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { XantechDriver, type XantechOptions } from '../../drivers/xantech/driver.js';
import { XantechEmulator, type EmulatorOptions, type KeypadChange } from '../../drivers/xantech/emulator.js';
import type { ZoneStatus } from '../../drivers/xantech/protocol.js';
import { zoneEvents as zoneEventsOf } from './events.js';
import { memoryRig, type MemoryRig } from './memory-rig.js';
import { fromStatusLine, serialRig, toStatusChange, type SerialRig } from './serial-rig.js';

export const STEPS = 38;

/**
 * Timings for a driver on a real pty or tcp:// (the end-to-end tests, and other suites' daemons): short polls and gaps
 * so tests move quickly, and the production command timeout, so a loaded machine never makes a reply miss it.
 */
export const FAST: Partial<XantechOptions> = {
  pollIntervalMs: 40,
  activityPollIntervalMs: 40,
  commandTimeoutMs: 1000,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

/** Reports follow activity after 5 ms instead of a second (on a real line). */
export const FAST_EMULATOR: EmulatorOptions = { activityDelayMs: 5 };

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

export type Rig = MemoryRig<XantechDriver, XantechEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<XantechOptions>;
  plugged?: boolean;
}

/** The driver with its production timings against the emulator (reports a second after activity), in memory. */
export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return memoryRig(t, {
    emulator: (clock) => new XantechEmulator({ ...options.emulator, clock }),
    driver: (wiring) => new XantechDriver({ ...wiring, ...options.driver }),
    ...(options.plugged === undefined ? {} : { plugged: options.plugged }),
  });
}

/** Pending reports out, then two more polls of zone 1: the first may predate a change, the second cannot. */
export async function observed(r: Rig): Promise<void> {
  await r.until(r.emulator.reportsSent(), 'the pending zone-activity reports');
  await r.commands((c) => c === '?1ZD', 2, 'polls of zone 1');
}

/** Sets the amp received since `mark` (an index into emulator.commands). */
export const setsSince = (r: { emulator: XantechEmulator }, mark = 0): string[] => r.emulator.commands.slice(mark).filter((c) => c.startsWith('!'));

export const zoneEvents = (r: { events: Rig['events'] }) => zoneEventsOf(r.events);

export type PtyRig = SerialRig<XantechDriver, XantechEmulator>;

/** The driver through the real serialport on a socat pty, with FAST timings (end-to-end tests only). */
export function ptyRig(t: Test, options: Omit<RigOptions, 'plugged'> & { deferredPort?: boolean } = {}): Promise<PtyRig> {
  return serialRig(t, {
    emulator: new XantechEmulator({ ...FAST_EMULATOR, ...options.emulator }),
    driver: (serialPort, log) => new XantechDriver({ serialPort, ...FAST, log, ...options.driver }),
    deferredPort: options.deferredPort ?? false,
  });
}

export const toKeypad = (change: Partial<ZoneState>): KeypadChange => toStatusChange(change, STEPS);
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
