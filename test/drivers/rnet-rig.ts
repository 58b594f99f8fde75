// An RNET driver wired to the emulator over a real pty, with fast timings; shared by the RNET driver test files.
import type { Test } from 'tap';
import type { ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { RnetDriver, type RnetOptions } from '../../drivers/rnet/driver.js';
import { RnetEmulator, type EmulatedZone, type EmulatorOptions } from '../../drivers/rnet/emulator.js';
import { serialRig, type SerialRig } from './serial-rig.js';

export { startOnline } from './serial-rig.js';

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

export type Rig = SerialRig<RnetDriver, RnetEmulator>;

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<RnetOptions>;
  deferredPort?: boolean;
}

export function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  return serialRig(t, {
    emulator: new RnetEmulator(options.emulator),
    driver: (serialPort, log) => new RnetDriver({ serialPort, ...FAST, log, ...options.driver }),
    observed,
    deferredPort: options.deferredPort ?? false,
  });
}

/** Two more polls of zone 11: the one in flight when called may predate a change, the second cannot. */
export async function observed(emulator: RnetEmulator): Promise<void> {
  await emulator.waitForCommand((c) => c === 'info 11');
  await emulator.waitForCommand((c) => c === 'info 11');
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
