// Long work done a slice at a time: a step runs again and again for a few milliseconds, then the event loop gets a
// turn, so requests keep being answered while a restore writes millions of rows.

import { monotonicMs } from '../../runtime.js';

/** How long a run of steps may hold the event loop before it yields. */
export const SLICE_MS = 8;

/** Runs `step` until it returns false, yielding to the event loop every SLICE_MS. */
export async function inSlices(step: () => boolean, sliceMs = SLICE_MS): Promise<void> {
  for (;;) {
    const until = monotonicMs() + sliceMs;
    do {
      if (!step()) return;
    } while (monotonicMs() < until);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
