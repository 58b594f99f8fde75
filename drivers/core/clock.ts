// Time and timers for drivers and emulators, passed in so tests can run them on a clock they move by hand.

/** The one Clock of the project: drivers, the playback engine and the daemon's timers all take it; nothing reaches for the global timers itself. */
export interface Clock {
  /** Milliseconds on a clock that never goes back; only differences and order matter. */
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The process's monotonic clock (performance.now): not the wall clock the daemon's and the playback engine's
 * `systemClock` read (Date.now), whose times are stored and shown.
 */
export const monotonicClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};
