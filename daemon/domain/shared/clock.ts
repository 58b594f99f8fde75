// Time and timers as a dependency: the sleep timers and the MQTT bridge take a Clock, so tests drive them by hand.

/** Time and timers, passed in so tests can drive them without waiting. */
export interface Clock {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  // Unref'd: a pending timer alone never keeps the process alive.
  setTimeout: (fire, ms) => setTimeout(fire, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
