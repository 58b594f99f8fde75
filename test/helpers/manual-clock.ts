// A clock that moves only when a test tells it to, running the timers that come due as it moves: no waiting.
import type { Clock } from '../../daemon/domain/shared/index.js';

interface Timer {
  at: number;
  fire: () => void;
  /** The view that set it (see view()). */
  owner: Set<number> | undefined;
}

export class ManualClock implements Clock {
  private nextHandle = 1;
  private readonly timers = new Map<number, Timer>();

  constructor(public time = Date.now()) {}

  now(): number {
    return this.time;
  }
  setTimeout(fire: () => void, ms: number): unknown {
    return this.add(fire, ms, undefined);
  }
  clearTimeout(handle: unknown): void {
    const timer = this.timers.get(handle as number);
    timer?.owner?.delete(handle as number);
    this.timers.delete(handle as number);
  }
  /** When the pending timers are due, earliest first. */
  dueTimes(): number[] {
    return [...this.timers.values()].map((timer) => timer.at).sort((a, b) => a - b);
  }
  /** Timers set and not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time forward by `ms`, firing each timer due on the way at its own time, in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    while (this.fireNext(end)) {
      // each fired timer may set others, due before `end` too
    }
    this.time = end;
  }
  /**
   * Fires the earliest timer (ties in the order they were set) if it is due by `limit`, moving time to it.
   * Returns whether one fired.
   */
  fireNext(limit = Infinity): boolean {
    let next: [number, Timer] | undefined;
    for (const entry of this.timers) if (!next || entry[1].at < next[1].at) next = entry;
    if (!next || next[1].at > limit) return false;
    this.clearTimeout(next[0]);
    this.time = Math.max(this.time, next[1].at);
    next[1].fire();
    return true;
  }
  /** The earliest time a timer is due, if any. */
  nextDue(): number | undefined {
    let at: number | undefined;
    for (const timer of this.timers.values()) if (at === undefined || timer.at < at) at = timer.at;
    return at;
  }
  /**
   * The same clock for one user of it (a driver, apart from the emulator on the same clock), whose own pending
   * timers can be counted: a driver that stopped must have left none.
   */
  view(): Clock & { readonly pending: number } {
    const mine = new Set<number>();
    return {
      now: () => this.now(),
      setTimeout: (fire, ms) => this.add(fire, ms, mine),
      clearTimeout: (handle) => this.clearTimeout(handle),
      get pending() {
        return mine.size;
      },
    };
  }

  private add(fire: () => void, ms: number, owner: Set<number> | undefined): number {
    const handle = this.nextHandle++;
    this.timers.set(handle, { at: this.time + Math.max(0, ms), fire, owner });
    owner?.add(handle);
    return handle;
  }
}
