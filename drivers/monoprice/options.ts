// The Monoprice family's options (defaults with the reason for each, and the schema the configuration and the
// factory check them with) and its entry in the driver registry.
import type { SerialTimings } from '../core/serial-options.js';
import { serialOptionsSchema } from '../core/serial-schema.js';
import type { DriverFamily } from '../family.js';

/** Defaults and their reasons live here, not spread through the code. */
export const MONOPRICE_DEFAULTS: SerialTimings = {
  baudRate: 9600,
  pollIntervalMs: 5000, // existing integrations poll every 5-15 s
  commandTimeoutMs: 1000, // a ?x0 reply takes ~175 ms at 9600 baud
  interCommandGapMs: 30, // the amp desynchronises when commands are pipelined; 20..100 ms is known to work
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  offlineAfterTimeouts: 3,
};

export const MONOPRICE_OPTIONS = serialOptionsSchema(MONOPRICE_DEFAULTS);

/** The family's entry in the driver registry (drivers/index.ts); the driver itself is loaded when one is built. */
export const monoprice: DriverFamily = {
  name: 'monoprice',
  description:
    'Monoprice MPR-6ZHMAUT / Dayton Audio DAX66 over RS-232 (9600 8N1), up to three chained units of six zones',
  options: MONOPRICE_OPTIONS,
  create: async (options) => (await import('./index.js')).createMonopriceDriver(options),
};
