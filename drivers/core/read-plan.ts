// What the work loop reads next, and which zones it may write: read-backs of unacknowledged writes first, then the
// first reads of a connection (and probes), then queued reads (keypad hints in front, the poll behind).
import type { Topology } from './units.js';

/** Why a read is made: a read-back after writes, a zone's or unit's first read (or a probe), or a queued one. */
export type ReadPurpose = 'verify' | 'sync' | 'queued';

export interface PlannedRead {
  address: number;
  purpose: ReadPurpose;
}

export class ReadPlan {
  /** Zones read on this connection whose unit still answers: their hardware state is current, so writes and diffs use it. */
  readonly live = new Set<number>();
  /** Zones whose last write was refused: held back until they have been read again. */
  readonly held = new Set<number>();
  /** Zones written without an acknowledgement since their last read (RNET, prompt-less Monoprice): each is read back. */
  readonly verify = new Set<number>();
  /** Zones something else acted on since their last read (a keypad heard on the bus): a difference is its change. */
  readonly touched = new Set<number>();
  /** Reads to make before anything else on this connection, lowest address first. */
  private readonly syncing = new Set<number>();
  private queue: number[] = [];

  constructor(private readonly topology: Topology) {}

  sync(address: number): void {
    this.syncing.add(address);
  }

  /** Queues a read behind the others (the poll), or in front (a hint that a zone changed). */
  queueRead(address: number, front = false): void {
    if (front) this.queue = [address, ...this.queue.filter((a) => a !== address)];
    else if (!this.queue.includes(address)) this.queue.push(address);
  }

  /** A keypad acted on the zone: its read goes first, and what it shows is that keypad's change. */
  touch(channel: number): void {
    this.touched.add(channel);
    this.verify.delete(channel);
    this.queueRead(this.topology.zoneRead(channel), true);
  }

  next(): PlannedRead | undefined {
    for (const channel of this.verify)
      if (this.live.has(channel)) return { address: this.topology.zoneRead(channel), purpose: 'verify' };
    if (this.syncing.size > 0) return { address: Math.min(...this.syncing), purpose: 'sync' };
    const address = this.queue.shift();
    return address === undefined ? undefined : { address, purpose: 'queued' };
  }

  /** The read of `address` is done (answered, or given up). */
  done(address: number): void {
    this.syncing.delete(address);
  }

  /** Reads that must come before the driver counts as settled: syncs, refused writes, read-backs. */
  urgent(): boolean {
    return this.syncing.size > 0 || this.held.size > 0 || [...this.verify].some((channel) => this.live.has(channel));
  }

  /** Nothing at all left to read. */
  empty(): boolean {
    return this.queue.length === 0 && !this.urgent();
  }

  /** A unit fell silent: nothing of it is read or written until it answers again (the poll probes it). */
  forgetUnit(unit: number): void {
    for (const channel of this.topology.channels(unit)) {
      for (const set of [this.live, this.held, this.verify, this.touched]) set.delete(channel);
    }
    const ofUnit = (address: number): boolean => this.topology.unitOf(address) === unit;
    for (const address of this.syncing) if (ofUnit(address)) this.syncing.delete(address);
    this.queue = this.queue.filter((address) => !ofUnit(address));
  }

  /** The connection ended: the next one starts from nothing. */
  reset(): void {
    for (const set of [this.live, this.held, this.verify, this.touched, this.syncing]) set.clear();
    this.queue = [];
  }
}

/** Refusals in a row per command (noise garbles some), so that one the amplifier keeps refusing is given up. */
export class Refusals {
  private readonly counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts one refusal of `key`: true while it is worth another try; at the limit false, and the count starts over. */
  retry(key: string): boolean {
    const count = (this.counts.get(key) ?? 0) + 1;
    if (count < this.limit) {
      this.counts.set(key, count);
      return true;
    }
    this.counts.delete(key);
    return false;
  }

  /** The command went through: its count starts over. */
  reset(key: string): void {
    this.counts.delete(key);
  }

  clear(): void {
    this.counts.clear();
  }
}
