// Driver tests without real time: a hand-driven clock for the driver and the emulator, and in-memory lines whose
// bytes are delivered on the event loop's next turns. until() alternates letting every byte arrive and every promise
// chain run with firing the next due timer, so a test waits for what it needs and never for a wall clock.
import { MemoryIo } from '../../drivers/memory-port.js';
import { ManualClock } from './manual-clock.js';

/** Virtual time one until() may spend: a driver's poll, timeouts, back-off and reconnect all fit many times over. */
export const VIRTUAL_WAIT_MS = 10 * 60_000;
/** Timers one until() may fire: a bound against a loop of zero-delay timers, far above any test's need. */
const MAX_STEPS = 200_000;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class VirtualTime {
  readonly clock: ManualClock;
  readonly io = new MemoryIo();
  private readonly origin: number;

  constructor(start = 1_000_000) {
    this.clock = new ManualClock(start);
    this.origin = start;
  }

  /** Lets every byte on its way arrive and every promise chain run, without moving the clock. */
  async flush(): Promise<void> {
    do await nextTurn();
    while (this.io.pending > 0);
  }

  /**
   * Runs I/O and timers until `goal` (a condition, or a promise) holds or settles; resolves with the promise's value.
   * Fails, naming `what`, when nothing is left to run or the virtual time or step bound is reached.
   */
  async until<T>(
    goal: Promise<T> | (() => unknown),
    what = 'the condition',
    maxVirtualMs = VIRTUAL_WAIT_MS,
  ): Promise<T> {
    let settled = false;
    let value: T | undefined;
    let failure: { error: unknown } | undefined;
    if (typeof goal !== 'function') {
      goal.then(
        (v) => {
          settled = true;
          value = v;
        },
        (error: unknown) => {
          settled = true;
          failure = { error };
        },
      );
    }
    const reached = async (): Promise<boolean> => (typeof goal === 'function' ? Boolean(await goal()) : settled);
    const deadline = this.clock.now() + maxVirtualMs;
    for (let steps = 0; ; steps++) {
      await this.flush();
      if (await reached()) break;
      const due = this.clock.nextDue();
      if (due === undefined)
        throw new Error(
          `${what}: not reached, and nothing left to run (at virtual ${this.clock.now() - this.origin} ms)`,
        );
      if (due > deadline || steps >= MAX_STEPS)
        throw new Error(`${what}: not reached within ${maxVirtualMs} virtual ms (${steps} timers fired)`);
      this.clock.fireNext();
    }
    if (failure) throw failure.error;
    return value as T;
  }

  /** Moves the clock `ms` on, running every timer and all I/O on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    for (;;) {
      await this.flush();
      if (!this.clock.fireNext(end)) break;
    }
    this.clock.time = end;
    await this.flush();
  }
}
