// What the shared conformance suite (conformance.ts) needs of each driver's rig: the driver, a handle on the
// hardware behind it, and the rig's clock.
import type { Test } from 'tap';
import type { AmplifierDriver, ZoneFlags, ZoneState, ZoneTone } from '../../drivers/driver.js';
import type { ConformanceCase } from './conformance.js';
import type { PanelChange } from './tone-rig.js';

/** A driver plus a handle on the hardware behind it (an emulator, or the simulated amplifier's memory). */
export interface DriverRig {
  /** Built, not started. */
  driver: AmplifierDriver;
  /**
   * Changes the hardware behind the driver's back, like a keypad or a front panel (state and tone), or the amplifier
   * itself (its status flags: a page, do-not-disturb, party mode).
   */
  keypad(channel: number, change: PanelChange): void;
  /** What the hardware really holds now, not what the driver believes. */
  hardware(channel: number): ZoneState;
  /** The tone the hardware really holds, on the shared scale (the controls the family has). */
  hardwareTone(channel: number): ZoneTone;
  /** The status flags the hardware really holds (those the family reports). */
  hardwareFlags(channel: number): ZoneFlags;
  /** Resolves once the driver has looked at the hardware again (a completed poll); at once for push-only drivers. */
  observed(): Promise<void>;
  /** Runs the rig (I/O and its clock) until `goal` holds or settles. */
  until<T>(goal: Promise<T> | (() => unknown), what: string): Promise<T>;
  /** Moves the rig's clock on by `ms`, running what comes due. */
  advance(ms: number): Promise<void>;
  /** The driver's own pending timers. */
  timers(): number;
  /**
   * Makes a keypad change and calls `then` once the driver has sent the read that will show it, before it has taken
   * in the answer (a push-only driver: right after it reported the change).
   */
  keypadSeenThen(channel: number, change: Partial<ZoneState>, then: () => void): void;
  /** The hardware becomes unreachable (the adapter pulled, the amplifier's mains off) and back. */
  unplug(): void;
  replug(): void;
  /** Volume commands that reached the wire for a zone, for drivers that have a wire. */
  volumeWrites?(channel: number): number;
  /** Noise on the line: bytes garbled and dropped, and garbage of the family's own shape injected; or a clean line. */
  noisy?(on: boolean): void;
  /** The second unit (slave unit, controller 2, expansion amplifier): its channels, and the switches that remove it. */
  secondUnit: { channels: number[]; remove(): void; restore(): void };
}

export interface ConformanceHarness {
  /**
   * Builds a fresh driver and hardware (every zone off) and registers their teardown on `t`. `secondUnit`: fitted,
   * or absent from the hardware; by default the family's smallest amplifier. `paced`: the line at its real byte rate.
   */
  create(t: Test, options?: { secondUnit?: 'fitted' | 'absent'; paced?: boolean }): Promise<DriverRig>;
  /** What the description of the smallest amplifier must say. */
  expect: { zones: number; inputs: number; volumeSteps: number };
  /** Cases this driver cannot meet, each with the reason; reported as skips, never dropped silently. */
  skip?: Partial<Record<ConformanceCase, string>>;
}
