// A clock that moves only when a test tells it to, running the timers that come due as it moves: no waiting.
import type { Clock } from '../../daemon/domain/sleep-timers.js';

export class ManualClock implements Clock {
  private nextHandle = 1;
  private readonly timers = new Map<number, { at: number; fire: () => void }>();

  constructor(public time = Date.now()) {}

  now(): number {
    return this.time;
  }
  setTimeout(fire: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    this.timers.set(handle, { at: this.time + ms, fire });
    return handle;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** When the pending timers are due, earliest first. */
  dueTimes(): number[] {
    return [...this.timers.values()].map((timer) => timer.at).sort((a, b) => a - b);
  }
  /** Moves time forward by `ms`, firing each timer due on the way at its own time, in order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = [...this.timers.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].fire();
    }
    this.time = end;
  }
}
