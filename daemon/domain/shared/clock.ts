// Time and timers as a dependency: the sleep timers and the MQTT bridge take a Clock, so tests drive them by hand.

import type { Clock } from '../../../drivers/driver.js';

/** Time and timers, passed in so tests can drive them without waiting: the drivers' one Clock interface. */
export type { Clock };

export const systemClock: Clock = {
  now: () => Date.now(),
  // Unref'd: a pending timer alone never keeps the process alive.
  setTimeout: (fire, ms) => setTimeout(fire, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
