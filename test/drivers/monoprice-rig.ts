// The Monoprice driver and emulator as test rigs (test/drivers/family-rigs.ts), and what its test files share.
import type { ZoneFlags, ZoneState, ZoneTone } from '../../drivers/driver.js';
import { MonopriceDriver, type MonopriceOptions } from '../../drivers/monoprice/driver.js';
import { type EmulatorOptions, type KeypadChange, MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { MONOPRICE_SOUND, type ZoneStatus } from '../../drivers/monoprice/protocol.js';
import { FAST_TIMINGS, familyRigs } from './family-rigs.js';
import type { MemoryRig } from './memory-rig.js';
import { fromStatusLine, toStatusChange } from './serial-rig.js';
import { fromNative, type PanelChange, toNative } from './tone-rig.js';

export const STEPS = 38;

/** Timings on a real pty or tcp:// (family-rigs.ts). */
export const FAST: Partial<MonopriceOptions> = FAST_TIMINGS;

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

/** A keypad's (or the amplifier's own) change as the emulator takes it: state, tone, PA and DT. */
export function toKeypad(change: PanelChange): KeypadChange {
  const out: KeypadChange = { ...toStatusChange(change, STEPS), ...toNative(change, MONOPRICE_SOUND) };
  if (change.paging !== undefined) out.pa = change.paging;
  if (change.doNotDisturb !== undefined) out.dnd = change.doNotDisturb;
  return out;
}
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
export const toneOf = (s: ZoneStatus): ZoneTone => fromNative(s, MONOPRICE_SOUND);
export const flagsOf = (s: ZoneStatus): ZoneFlags => ({ paging: s.pa, doNotDisturb: s.dnd });

export const { rig, ptyRig } = familyRigs<MonopriceDriver, MonopriceEmulator, MonopriceOptions, EmulatorOptions>({
  emulator: (options) => new MonopriceEmulator(options),
  driver: (options) => new MonopriceDriver(options),
  hold: (emulator, channel, state) => emulator.keypad(channel, toKeypad(state)),
  fast: FAST,
});

export type Rig = MemoryRig<MonopriceDriver, MonopriceEmulator>;

/** The reply to a poll is taken in before the next poll is sent: two more `?10` prove one whole poll was seen. */
export const observed = (r: Rig): Promise<void> => r.commands((c) => c === '?10', 2, 'polls of unit 1');

/** Sets the amp received since `mark` (an index into emulator.commands). */
export const setsSince = (r: Rig, mark = 0): string[] => r.since(mark).filter((c) => c.startsWith('<'));

/** Timeouts the driver logged. */
export const timeouts = (r: { logs: string[] }): string[] => r.logs.filter((l) => l.includes('timeout on'));
