// What the daemon takes from node's runtime other than the way node offers it: the monotonic clock, read from
// process.hrtime() rather than the `performance` global, which loads perf_hooks, and stdout written without making
// `process.stdout` (ARCHITECTURE.md, "Memory"). Any layer of daemon/ may use them; drivers/ take the clock from
// drivers/core/clock.ts.
import { writeSync } from 'node:fs';

export { monotonicMs } from '../drivers/index.js';

/**
 * Writes to stdout as the log lines are written (straight to the file descriptor), without making `process.stdout`:
 * for a pipe or a socket (the journal) node would load its net module for it (ARCHITECTURE.md, "Memory"). A pipe that
 * cannot take the text now gets it through process.stdout.
 */
export function printOut(text: string): void {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch {
    process.stdout.write(bytes.subarray(written));
  }
}
