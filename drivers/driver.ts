// The amplifier driver seam: the only thing the daemon knows about hardware.
import type { Clock } from './core/clock.js';
import type { OpenPort } from './port.js';

/** What one zone output of the amplifier is doing. Volume is a fraction of full scale (0..1). */
export interface ZoneState {
  power: boolean;
  muted: boolean;
  volume: number;
  /** Source input channel feeding the zone (1..S). */
  source: number;
}

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
 */
export type DriverEvent =
  | { type: 'zone'; channel: number; state: ZoneState }
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
   * Starts the driver with what the daemon last knew of each zone channel. A real driver writes none of it: on first
   * contact it adopts what the amplifier holds and reports every zone that differs (RNET, which cannot read mute,
   * sets the mute it was told again). The channels are also the zones the daemon knows: one whose unit is not
   * fitted (any more) is described, and unavailable with the reason. The simulated driver, whose hardware does not
   * outlive the process, takes the state as its hardware's. Resolves once the driver is running (not necessarily
   * online): a missing port is a `status` event, never a rejection.
   */
  start(remembered: ReadonlyMap<number, ZoneState>): Promise<void>;
  /**
   * Records an intent for one zone (the attributes given, stamped with the time) and writes it asynchronously.
   * Returns at once: callers never wait on the hardware. Bursts are coalesced by the driver. An intent for an
   * unavailable zone is dropped; one made while the amplifier is offline is written when it is back.
   */
  setZone(channel: number, change: Partial<ZoneState>): void;
  /** The last state read from the hardware for a zone, if any. */
  hardwareState(channel: number): ZoneState | undefined;
  /**
   * Whether the zone on this channel can take writes now (see ZoneAvailability). A channel the amplifier does not
   * have (a unit not fitted) is unavailable with the reason.
   */
  availability(channel: number): ZoneAvailability;
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
