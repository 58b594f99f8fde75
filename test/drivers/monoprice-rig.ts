// A Monoprice driver wired to the emulator: on an in-memory line with the production timings on a hand-driven clock
// (most tests), or over a real pty with short polls (the end-to-end ones); shared by the driver test files.
import type { Test } from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { MonopriceDriver, type MonopriceOptions } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator, type EmulatorOptions, type KeypadChange } from '../../drivers/monoprice/emulator.js';
import type { ZoneStatus } from '../../drivers/monoprice/protocol.js';
import { memoryRig, type MemoryRig } from './memory-rig.js';
import { fromStatusLine, serialRig, toStatusChange, type SerialRig } from './serial-rig.js';

export const STEPS = 38;

/**
 * Timings for a driver on a real pty or tcp:// (the end-to-end tests, and other suites' daemons): short polls and gaps
 * so tests move quickly, and the production command timeout, so a loaded machine never makes a reply miss it.
 */
export const FAST: Partial<MonopriceOptions> = {
  pollIntervalMs: 40,
  commandTimeoutMs: 1000,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

export type Rig = MemoryRig<MonopriceDriver, MonopriceEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<MonopriceOptions>;
  /** Whether the adapter is there at start (default true). */
  plugged?: boolean;
}

/** The driver with its production timings against the emulator, on an in-memory line and a hand-driven clock. */
export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return memoryRig(t, {
    emulator: (clock) => new MonopriceEmulator({ ...options.emulator, clock }),
    driver: (wiring) => new MonopriceDriver({ ...wiring, ...options.driver }),
    ...(options.plugged === undefined ? {} : { plugged: options.plugged }),
  });
}

/** Sets zones on the amplifier as given, starts the driver remembering the same, and runs until online and settled. */
export async function startWith(r: Rig, zones: Array<[number, ZoneState]> = []): Promise<void> {
  for (const [channel, state] of zones) r.emulator.keypad(channel, toKeypad(state));
  await r.startOnline(new Map(zones));
}

/** The reply to a poll is taken in before the next poll is sent: two more `?10` prove one whole poll was seen. */
export const observed = (r: Rig): Promise<void> => r.commands((c) => c === '?10', 2, 'polls of unit 1');

/** Sets the amp received since `mark` (an index into emulator.commands). */
export const setsSince = (r: Rig, mark = 0): string[] => r.since(mark).filter((c) => c.startsWith('<'));

/** Timeouts the driver logged. */
export const timeouts = (r: { logs: string[] }): string[] => r.logs.filter((l) => l.includes('timeout on'));

export type PtyRig = SerialRig<MonopriceDriver, MonopriceEmulator>;

/** The driver through the real serialport on a socat pty, with FAST timings (end-to-end tests only). */
export function ptyRig(t: Test, options: Omit<RigOptions, 'plugged'> & { deferredPort?: boolean } = {}): Promise<PtyRig> {
  return serialRig(t, {
    emulator: new MonopriceEmulator(options.emulator),
    driver: (serialPort, log) => new MonopriceDriver({ serialPort, ...FAST, log, ...options.driver }),
    deferredPort: options.deferredPort ?? false,
  });
}

export const toKeypad = (change: Partial<ZoneState>): KeypadChange => toStatusChange(change, STEPS);
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
