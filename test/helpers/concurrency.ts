// Subtests that mostly wait (on an emulated serial line, a reconnect, a child process) run a few at a time.
import type { Test } from 'tap';

/**
 * Lets `t`'s subtests run `jobs` at a time. Only for files whose subtests each build their own daemon, pty, emulator
 * or driver and share nothing; the subtests' output stays in order. A subtest that looks at the whole process (its
 * timers, say) or whose assertion depends on event-loop pacing is declared with ALONE.
 */
export function concurrently(t: Pick<Test, 'jobs'>, jobs = 4): void {
  t.jobs = jobs;
}

/** Subtest option: waits until the subtests before it have ended and starts the ones after it once it has. */
export const ALONE = { buffered: false } as const;
