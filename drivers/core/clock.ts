// Time and timers for drivers and emulators, passed in so tests can run them on a clock they move by hand.

/** The one Clock of the project: drivers, the playback engine and the daemon's timers all take it; nothing reaches for the global timers itself. */
export interface Clock {
  /** Milliseconds on a clock that never goes back; only differences and order matter. */
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Milliseconds, with fractions, on the process's monotonic clock (the one performance.now() reads, from another
 * origin). Reading the `performance` global loads node's perf_hooks and the modules it loads, ~0.4 MB of an idle
 * daemon's memory (ARCHITECTURE.md, "Memory"); process.hrtime() reads the same clock.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

/**
 * The process's monotonic clock (monotonicMs): not the wall clock the daemon's and the playback engine's
 * `systemClock` read (Date.now), whose times are stored and shown.
 */
export const monotonicClock: Clock = {
  now: monotonicMs,
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};
