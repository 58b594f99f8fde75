// What a serial family gives the driver core and gets from it: its options and defaults, the link's options the core
// builds, and the shape of one read's and one write's outcome.
import type { DriverOptions, InputDescription, SoundDescription } from '../driver.js';
import type { Outcome } from './link.js';
import type { ReconnectingPortOptions } from './reconnecting-port.js';
import type { Topology } from './units.js';
import type { Fields, Stamp } from './zone-book.js';

/** What one read showed. */
export interface ReadReply {
  outcome: Outcome;
  /** Whether the unit answered at all (any data, even a garbled line): a unit that did is there. */
  answered: boolean;
  /** What it showed of each zone, as wire values. */
  zones: Array<{ channel: number; fields: Fields }>;
}

/** How a write went: acknowledged ('ok'), or 'sent' when nothing acknowledges it and only a read-back can tell. */
export type WriteOutcome = Outcome | 'sent';

/** The first read of a connection, made by the family's handshake. */
export interface FirstRead {
  address: number;
  reply: ReadReply;
  stamp: Stamp;
}

/** What every serial family takes: the options of drivers/driver.ts plus the line's timings. */
export interface SerialOptions extends DriverOptions {
  /** Quiet time between commands: amplifiers desynchronise when commands are pipelined. */
  interCommandGapMs?: number;
  /** First reconnect delay; doubles per failed attempt up to reconnectMaxMs. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Consecutive unanswered requests to the master unit that mean the amplifier is off, booting or unplugged. */
  offlineAfterTimeouts?: number;
}

export const TIMINGS = [
  'baudRate',
  'pollIntervalMs',
  'commandTimeoutMs',
  'interCommandGapMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  'offlineAfterTimeouts',
] as const;

/** A family's defaults, with their reasons where the family declares them. */
export type SerialTimings = Required<Pick<SerialOptions, (typeof TIMINGS)[number]>>;

/** What a family's link is built with, besides its own framing. */
export type LineOptions = Omit<ReconnectingPortOptions, 'family'> & { timeoutMs: number; gapMs: number };

export interface CoreOptions {
  family: string;
  topology: Topology;
  defaults: SerialTimings;
  /** Units fitted without being found (Xantech's expansion when configured); the master always is. */
  configured?: readonly number[];
  /** Units neither configured nor remembered are probed once on the first connection. */
  probeOthers: boolean;
  /** Refusals in a row of one read or write before the driver stops insisting (noise garbles some). */
  maxRefusals: number;
  volumeSteps: number;
  inputs: InputDescription[];
  /** The family's tone controls and status fields, each one it lacks with the reason. */
  sound: SoundDescription;
}
