// The amplifier driver seam: the only thing the daemon knows about hardware.
import type { Clock } from './core/clock.js';

export type { Clock };

import type { OpenPort } from './port.js';

/** What one zone output of the amplifier is doing. Volume is a fraction of full scale (0..1). */
export interface ZoneState {
  power: boolean;
  muted: boolean;
  volume: number;
  /** Source input channel feeding the zone (1..S). */
  source: number;
}

/**
 * A zone's tone on the one scale every family shares: bass and treble from -1 (full cut) through 0 (flat) to +1
 * (full boost), balance from -1 (full left) through 0 (centre) to +1 (full right). Each side of flat is spread evenly
 * over the family's native steps (ToneScale), so every native step has a value of its own and reads back as the value
 * that writes it. Only the controls the family has are present (DriverDescription.sound says which).
 */
export interface ZoneTone {
  bass?: number;
  treble?: number;
  balance?: number;
  /** Loudness compensation on or off. */
  loudness?: boolean;
}

export type ToneControl = keyof ZoneTone;
export const TONE_CONTROLS: readonly ToneControl[] = ['bass', 'treble', 'balance', 'loudness'];
export type StepControl = Exclude<ToneControl, 'loudness'>;

/**
 * What the amplifier reports about a zone by itself, read-only: a page in progress (Monoprice PA, Xantech PS),
 * do-not-disturb (Monoprice DT, RNET), party mode (RNET). Only the fields the family reports are present.
 */
export interface ZoneFlags {
  paging?: boolean;
  doNotDisturb?: boolean;
  party?: boolean;
}

export type ZoneFlag = keyof ZoneFlags;
export const ZONE_FLAGS: readonly ZoneFlag[] = ['paging', 'doNotDisturb', 'party'];

/** A stepped tone control's native range: `down` steps from flat (or centre) to full cut (left), `up` to full boost (right). */
export interface ToneScale {
  down: number;
  up: number;
}

/** A control or status field the family does not have, and why (in words an installer reads). */
export interface Absent {
  absent: string;
}

/** Which tone controls and status fields the family has; each one it lacks is listed with the reason. */
export interface SoundDescription {
  controls: { [C in StepControl]: ToneScale | Absent } & { loudness: true | Absent };
  flags: Record<ZoneFlag, true | Absent>;
}

/** What the daemon remembers of a zone at start: its state, and its tone where it kept one. */
export type RememberedZone = ZoneState & { tone?: ZoneTone };

export interface ZoneDescription {
  /** The driver's own address of the output (simulated: 1..6; Monoprice: 11..16, 21..26, 31..36). */
  channel: number;
  name: string;
}

export interface InputDescription {
  /** Source input number (1..S). */
  channel: number;
  name: string;
  kind: string;
}

export interface DriverDescription {
  zones: ZoneDescription[];
  inputs: InputDescription[];
  /** Number of volume steps of the device; the API volume v maps to round(v * volumeSteps). */
  volumeSteps: number;
  /** Tone controls and status fields (drivers without any leave it out). */
  sound?: SoundDescription;
}

/**
 * Whether a zone can take writes now. A zone whose unit, controller or expander is not fitted or stops answering is
 * unavailable (`reason` names the amplifier's part: "unit 2 does not answer"); it becomes available again by itself
 * when that part answers. A whole amplifier that is offline does not make its zones unavailable: writes made then
 * are intents, pushed when it is back (the `status` event says it is offline).
 */
export interface ZoneAvailability {
  available: boolean;
  /** Why not, when unavailable: the unit and what it does, in words an installer reads. */
  reason?: string;
}

/**
 * Events a driver reports. `zone` is a zone whose state differs from what the daemon was last told or asked for: a
 * change read back from the hardware that the daemon did not write (a keypad, a front panel, another controller),
 * or, on first contact after a start or a reconnect, what the amplifier holds where it differs from what the daemon
 * remembered; `status` is the link going up or down;
 * `described` is a change of the fitted zones/inputs (for example a slave unit found by a probe);
 * `availability` is a zone becoming unavailable or available again (see ZoneAvailability).
 * A `zone` event of a driver with tone controls or status fields also carries the zone's whole tone and flags (the
 * controls and fields the family has); a change of one of them alone is a `zone` event too. What the daemon was
 * never told of (the tone at the first read after a start) is adopted without an event.
 */
export type DriverEvent =
  | { type: 'zone'; channel: number; state: ZoneState; tone?: ZoneTone; flags?: ZoneFlags }
  | { type: 'status'; online: boolean; detail?: string }
  | { type: 'described'; description: DriverDescription }
  | { type: 'availability'; channel: number; available: boolean; reason?: string };

export type DriverListener = (event: DriverEvent) => void;

/**
 * An amplifier. The amplifier's report is the truth about the present; the daemon's intents (setZone calls, each
 * stamped with the time it was made) are writes still to be made. A change the daemon did not write is adopted at
 * once, reported as a `zone` event, and supersedes every older intent for that attribute (last writer wins, by
 * time); an intent made after the read that shows such a change was sent stays and is written. An intent for a zone
 * that is off waits for power-on only if it was made while the zone was off (or going off); one made while the zone
 * was on is dropped when the zone is seen off. An intent is forgotten once the amplifier confirms it.
 * No method may throw because of the hardware: faults become `status` events.
 */
export interface AmplifierDriver {
  /** Family name, as chosen in configuration (`simulated`, `monoprice`). */
  readonly name: string;
  /** Whether the hardware is currently reachable. */
  readonly online: boolean;
  /** The zones and inputs known: configured, found, or remembered (start's channels), available or not. */
  describe(): DriverDescription;
  /**
   * Starts the driver with what the daemon last knew of each zone channel (its tone too, where the daemon kept
   * one). A real driver writes none of it: on first contact it adopts what the amplifier holds and reports every
   * zone that differs (RNET, which cannot read mute, sets the mute it was told again). The channels are also the zones the daemon knows: one whose unit is not
   * fitted (any more) is described, and unavailable with the reason. The simulated driver, whose hardware does not
   * outlive the process, takes the state as its hardware's. Resolves once the driver is running (not necessarily
   * online): a missing port is a `status` event, never a rejection.
   */
  start(remembered: ReadonlyMap<number, RememberedZone>): Promise<void>;
  /**
   * Records an intent for one zone (the attributes given, stamped with the time) and writes it asynchronously.
   * Returns at once: callers never wait on the hardware. Bursts are coalesced by the driver. An intent for an
   * unavailable zone is dropped; one made while the amplifier is offline is written when it is back.
   */
  setZone(channel: number, change: Partial<ZoneState>): void;
  /**
   * Records a tone intent for one zone, under the same ownership rule as setZone, and writes it asynchronously.
   * Throws a RangeError, changing nothing, for a value off the scale (ZoneTone) or a control the family lacks.
   * Drivers without tone controls leave it out.
   */
  setTone?(channel: number, change: ZoneTone): void;
  /** The last state read from the hardware for a zone, if any. */
  hardwareState(channel: number): ZoneState | undefined;
  /** The last tone read from the hardware for a zone (the controls the family has), if any. */
  hardwareTone?(channel: number): ZoneTone | undefined;
  /** The last status fields read from the hardware for a zone (those the family reports), if any. */
  hardwareFlags?(channel: number): ZoneFlags | undefined;
  /**
   * Whether the zone on this channel can take writes now (see ZoneAvailability). A channel the amplifier does not
   * have (a unit not fitted) is unavailable with the reason.
   */
  availability(channel: number): ZoneAvailability;
  /**
   * A hint from the daemon: someone watches the zones (an event-stream client is connected). A driver that polls for
   * keypad changes reads faster while true and slower when nobody watches (docs/drivers.md); others may ignore it.
   */
  watching?(watched: boolean): void;
  /** Resolves once every intent recorded so far has reached the hardware (or the driver is offline). */
  settled(): Promise<void>;
  /** Subscribes to driver events; returns the unsubscribe function. */
  onEvent(listener: DriverListener): () => void;
  /** Stops polling, closes the port, clears every timer. */
  stop(): Promise<void>;
}

/** Options every driver factory receives; families read what they need. */
export interface DriverOptions {
  serialPort?: string;
  baudRate?: number;
  pollIntervalMs?: number;
  commandTimeoutMs?: number;
  /**
   * Opens the byte port (drivers/port.ts `openPort` by default). Tests pass an in-memory line
   * (drivers/memory-port.ts) so the real driver talks to the real emulator without a pty.
   */
  openPort?: OpenPort;
  /** Time and timers of the driver (the system clock by default); tests pass a clock they move by hand. */
  clock?: Clock;
  /** Called with diagnostics; never with secrets. */
  log?: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** Maps an API volume (0..1) to a device step and back. */
export function volumeToStep(volume: number, steps: number): number {
  return Math.min(steps, Math.max(0, Math.round(volume * steps)));
}

export function stepToVolume(step: number, steps: number): number {
  return Math.min(1, Math.max(0, step / steps));
}

/** A tone value (-1..1) as a native step (0 full cut or left, `down` flat or centre, `down + up` full boost or right). */
export function toneToStep(value: number, scale: ToneScale): number {
  const offset = Math.round(value < 0 ? value * scale.down : value * scale.up);
  return scale.down + Math.min(scale.up, Math.max(-scale.down, offset));
}

export function stepToTone(step: number, scale: ToneScale): number {
  const offset = Math.min(scale.up, Math.max(-scale.down, step - scale.down));
  return offset < 0 ? offset / scale.down : offset === 0 ? 0 : offset / scale.up;
}

/**
 * Checks a tone change against what the family has: throws a RangeError naming the control and the fix for a value
 * off the scale or a control the family lacks; returns nothing when every value can be written.
 */
export function checkTone(change: ZoneTone, sound: SoundDescription | undefined): void {
  for (const [control, value] of Object.entries(change) as Array<[string, unknown]>) {
    if (value === undefined) continue;
    if (!(TONE_CONTROLS as readonly string[]).includes(control)) {
      throw new RangeError(`"${control}" is no tone control; the controls are ${TONE_CONTROLS.join(', ')}`);
    }
    const has = sound?.controls[control as ToneControl];
    if (!has || (typeof has === 'object' && 'absent' in has)) {
      throw new RangeError(`this amplifier has no ${control} control${has ? `: ${has.absent}` : ''}`);
    }
    if (control === 'loudness') {
      if (typeof value !== 'boolean') throw new RangeError(`"loudness" must be true or false, got ${String(value)}`);
    } else if (typeof value !== 'number' || !Number.isFinite(value) || value < -1 || value > 1) {
      throw new RangeError(
        `"${control}" must be a number from -1 to 1 (0 ${control === 'balance' ? 'centre' : 'flat'}), got ${String(value)}`,
      );
    }
  }
}
