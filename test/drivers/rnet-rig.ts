// An RNET driver wired to the emulator: on an in-memory line with the production timings on a hand-driven clock
// (most tests), or over a real pty with short polls (the end-to-end ones); shared by the RNET test files.
import type { Test } from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { RnetDriver, type RnetOptions } from '../../drivers/rnet/driver.js';
import { RnetEmulator, type EmulatedZone, type EmulatorOptions } from '../../drivers/rnet/emulator.js';
import { memoryRig, type MemoryRig } from './memory-rig.js';
import { serialRig, type SerialRig } from './serial-rig.js';

export const STEPS = 50;

/**
 * Timings for a driver on a real pty or tcp:// (the end-to-end tests, and other suites' daemons): short polls and gaps
 * so tests move quickly, and a generous request timeout, so a loaded machine never makes a reply miss it.
 */
export const FAST: Partial<RnetOptions> = {
  pollIntervalMs: 40,
  commandTimeoutMs: 1000,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

export const ON: ZoneState = { power: true, muted: false, volume: 20 / STEPS, source: 1 };

export type Rig = MemoryRig<RnetDriver, RnetEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<RnetOptions>;
  plugged?: boolean;
}

/** The driver with its production timings (100 ms pacing) against the emulator, in memory. */
export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return memoryRig(t, {
    emulator: (clock) => new RnetEmulator({ ...options.emulator, clock }),
    driver: (wiring) => new RnetDriver({ ...wiring, ...options.driver }),
    ...(options.plugged === undefined ? {} : { plugged: options.plugged }),
  });
}

/** Zones on the controller as given, the driver started remembering the same, online and settled. */
export async function startWith(r: Rig, zones: Array<[number, ZoneState]> = []): Promise<void> {
  for (const [channel, state] of zones) r.emulator.keypad(channel, toEmulated(state));
  await r.startOnline(new Map(zones));
}

/** Two more polls of zone 11: the one in flight when called may predate a change, the second cannot. */
export const observed = (r: Rig): Promise<void> => r.commands((c) => c === 'info 11', 2, 'polls of zone 11');

/** Commands the controller received since `mark` (an index into emulator.commands), reads left out. */
export const setsSince = (r: { emulator: RnetEmulator }, mark = 0): string[] =>
  r.emulator.commands.slice(mark).filter((c) => !c.startsWith('info '));

export type PtyRig = SerialRig<RnetDriver, RnetEmulator>;

/** The driver through the real serialport on a socat pty, with FAST timings (end-to-end tests only). */
export function ptyRig(t: Test, options: Omit<RigOptions, 'plugged'> & { deferredPort?: boolean } = {}): Promise<PtyRig> {
  return serialRig(t, {
    emulator: new RnetEmulator(options.emulator),
    driver: (serialPort, log) => new RnetDriver({ serialPort, ...FAST, log, ...options.driver }),
    deferredPort: options.deferredPort ?? false,
  });
}

export function toEmulated(change: Partial<ZoneState>): Partial<EmulatedZone> {
  const out: Partial<EmulatedZone> = {};
  if (change.power !== undefined) out.power = change.power;
  if (change.muted !== undefined) out.muted = change.muted;
  if (change.volume !== undefined) out.volume = volumeToStep(change.volume, STEPS);
  if (change.source !== undefined) out.source = change.source;
  return out;
}

export const fromEmulated = (z: EmulatedZone): ZoneState => ({
  power: z.power,
  muted: z.muted,
  volume: stepToVolume(z.volume, STEPS),
  source: z.source,
});
