// The Xantech driver and emulator as test rigs (test/drivers/family-rigs.ts), and what its test files share.
import type { ZoneFlags, ZoneState, ZoneTone } from '../../drivers/driver.js';
import { XantechDriver, type XantechOptions } from '../../drivers/xantech/driver.js';
import { type EmulatorOptions, type KeypadChange, XantechEmulator } from '../../drivers/xantech/emulator.js';
import { XANTECH_SOUND, type ZoneStatus } from '../../drivers/xantech/protocol.js';
import { FAST_TIMINGS, familyRigs } from './family-rigs.js';
import type { MemoryRig } from './memory-rig.js';
import { fromStatusLine, toStatusChange } from './serial-rig.js';
import { fromNative, type PanelChange, toNative } from './tone-rig.js';

export const STEPS = 38;

/** Timings on a real pty or tcp:// (family-rigs.ts), with the safety poll as fast as the poll. */
export const FAST: Partial<XantechOptions> = { ...FAST_TIMINGS, activityPollIntervalMs: 40 };

/** Reports follow activity after 5 ms instead of a second (on a real line). */
export const FAST_EMULATOR: EmulatorOptions = { activityDelayMs: 5 };

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

/** A keypad's (or the amplifier's own) change as the emulator takes it: state, tone and PS (paged). */
export function toKeypad(change: PanelChange): KeypadChange {
  const out: KeypadChange = { ...toStatusChange(change, STEPS), ...toNative(change, XANTECH_SOUND) };
  if (change.paging !== undefined) out.paged = change.paging;
  return out;
}
export const fromStatus = (s: ZoneStatus): ZoneState => fromStatusLine(s, STEPS);
export const toneOf = (s: ZoneStatus): ZoneTone => fromNative(s, XANTECH_SOUND);
export const flagsOf = (s: ZoneStatus): ZoneFlags => ({ paging: s.paged });

export const { rig, ptyRig } = familyRigs<XantechDriver, XantechEmulator, XantechOptions, EmulatorOptions>({
  emulator: (options) => new XantechEmulator(options),
  driver: (options) => new XantechDriver(options),
  hold: (emulator, channel, state) => emulator.keypad(channel, toKeypad(state)),
  fast: FAST,
  fastEmulator: FAST_EMULATOR,
});

export type Rig = MemoryRig<XantechDriver, XantechEmulator>;

/** Pending reports out, then two more polls of zone 1: the first may predate a change, the second cannot. */
export async function observed(r: Rig): Promise<void> {
  await r.until(r.emulator.reportsSent(), 'the pending zone-activity reports');
  await r.commands((c) => c === '?1ZD', 2, 'polls of zone 1');
}

/** Sets the amp received since `mark` (an index into emulator.commands). */
export const setsSince = (r: { emulator: XantechEmulator }, mark = 0): string[] =>
  r.emulator.commands.slice(mark).filter((c) => c.startsWith('!'));
