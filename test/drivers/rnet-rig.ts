// The RNET driver and emulator as test rigs (test/drivers/family-rigs.ts), and what its test files share.
import type { ZoneFlags, ZoneState, ZoneTone } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { RnetDriver, type RnetOptions } from '../../drivers/rnet/driver.js';
import { type EmulatedZone, type EmulatorOptions, RnetEmulator } from '../../drivers/rnet/emulator.js';
import { RNET_SOUND } from '../../drivers/rnet/protocol.js';
import { FAST_TIMINGS, familyRigs } from './family-rigs.js';
import type { MemoryRig } from './memory-rig.js';
import { fromNative, type PanelChange, toNative } from './tone-rig.js';

export const STEPS = 50;

/** Timings on a real pty or tcp:// (family-rigs.ts). */
export const FAST: Partial<RnetOptions> = FAST_TIMINGS;

export const ON: ZoneState = { power: true, muted: false, volume: 20 / STEPS, source: 1 };

/** A keypad's (or the controller's own) change as the emulator takes it: state, tone, DND and party mode (1 for on). */
export function toEmulated(change: PanelChange): Partial<EmulatedZone> {
  const out: Partial<EmulatedZone> = toNative(change, RNET_SOUND);
  if (change.doNotDisturb !== undefined) out.doNotDisturb = change.doNotDisturb;
  if (change.party !== undefined) out.party = change.party ? 1 : 0;
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

export const toneOf = (z: EmulatedZone): ZoneTone => fromNative(z, RNET_SOUND);
export const flagsOf = (z: EmulatedZone): ZoneFlags => ({ doNotDisturb: z.doNotDisturb, party: z.party !== 0 });

export const { rig, ptyRig } = familyRigs<RnetDriver, RnetEmulator, RnetOptions, EmulatorOptions>({
  emulator: (options) => new RnetEmulator(options),
  driver: (options) => new RnetDriver(options),
  hold: (emulator, channel, state) => emulator.keypad(channel, toEmulated(state)),
  fast: FAST,
});

export type Rig = MemoryRig<RnetDriver, RnetEmulator>;

/** Two more polls of zone 11: the one in flight when called may predate a change, the second cannot. */
export const observed = (r: Rig): Promise<void> => r.commands((c) => c === 'info 11', 2, 'polls of zone 11');

/** Commands the controller received since `mark` (an index into emulator.commands), reads left out. */
export const setsSince = (r: { emulator: RnetEmulator }, mark = 0): string[] =>
  r.emulator.commands.slice(mark).filter((c) => !c.startsWith('info '));
