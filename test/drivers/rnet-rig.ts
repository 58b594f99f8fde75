// An RNET driver wired to the emulator over a real pty, with fast timings; shared by the RNET driver test files.
import type { Test } from 'tap';
import type { DriverEvent, ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { RnetDriver, type RnetOptions } from '../../drivers/rnet/driver.js';
import { RnetEmulator, type EmulatedZone, type EmulatorOptions } from '../../drivers/rnet/emulator.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { isStatus, nextEvent, settledWithin } from './conformance.js';

export const STEPS = 50;

/** Short timings so faults resolve in milliseconds; the defaults are for a real 19200 baud bus. */
export const FAST: Partial<RnetOptions> = {
  pollIntervalMs: 40,
  commandTimeoutMs: 150,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

export const ON: ZoneState = { power: true, muted: false, volume: 20 / STEPS, source: 1 };

export interface Rig {
  pty: PtyPair;
  emulator: RnetEmulator;
  driver: RnetDriver;
  events: DriverEvent[];
  /** Every log line the driver wrote, as `level: message`. */
  logs: string[];
  /** Resolves after two more reads of zone 11 reached the controller, so the reply to the first has been handled. */
  observed(): Promise<void>;
}

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<RnetOptions>;
  deferredPort?: boolean;
}

export async function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  const pty = await createPtyPair({ deferred: options.deferredPort ?? false });
  const emulator = new RnetEmulator(options.emulator);
  if (pty.plugged) await emulator.attachPath(pty.b);
  const logs: string[] = [];
  const driver = new RnetDriver({
    serialPort: pty.a,
    ...FAST,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
    ...options.driver,
  });
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
    await pty.close();
  });
  return { pty, emulator, driver, events, logs, observed: () => observed(emulator) };
}

/** Two more polls of zone 11: the one in flight when called may predate a change, the second cannot. */
export async function observed(emulator: RnetEmulator): Promise<void> {
  await emulator.waitForCommand((c) => c === 'info 11');
  await emulator.waitForCommand((c) => c === 'info 11');
}

/** Starts the driver and waits until it is online and has pushed its desired state. */
export async function startOnline(r: Rig, desired: Map<number, ZoneState> = new Map()): Promise<void> {
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  await r.driver.start(desired);
  await online;
  await settledWithin(r.driver);
}

/** Commands the controller received since `mark` (an index into emulator.commands), reads left out. */
export const setsSince = (r: Rig, mark = 0): string[] =>
  r.emulator.commands.slice(mark).filter((c) => !c.startsWith('info '));

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
