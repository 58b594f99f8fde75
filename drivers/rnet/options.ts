// The Russound RNET family's options (defaults with the reason for each, and the schema the configuration and the
// factory check them with) and its entry in the driver registry.
import type { SerialTimings } from '../core/serial-options.js';
import { serialOptionsSchema } from '../core/serial-schema.js';
import type { DriverFamily } from '../family.js';

/** Defaults and their reasons live here, not spread through the code. */
export const RNET_DEFAULTS: SerialTimings = {
  baudRate: 19200,
  // A poll reads every zone (6 requests of ~130 ms per controller); keypad traffic on the bus triggers a read of
  // its zone at once, so the poll only catches what the bus did not show.
  pollIntervalMs: 5000,
  commandTimeoutMs: 500, // a zone info reply is 34 bytes, ~18 ms at 19200 baud; aiorussound waits 0.5 s
  interCommandGapMs: 100, // the RS-232 doc asks for ~100 ms after every message from keypad id 0x70 without handshakes
  // A controller that is still booting ignores requests for several seconds: keep asking, no more than every 5 s.
  reconnectMinMs: 500,
  reconnectMaxMs: 5000,
  offlineAfterTimeouts: 3,
};

export const RNET_OPTIONS = serialOptionsSchema(RNET_DEFAULTS);

/** The family's entry in the driver registry (drivers/index.ts); the driver itself is loaded when one is built. */
export const rnet: DriverFamily = {
  name: 'rnet',
  description:
    'Russound CAA66, CAM6.6, CAV6.6 and MCA controllers in RNET mode (19200 8N1), up to six controllers of six zones',
  options: RNET_OPTIONS,
  create: async (options) => (await import('./index.js')).createRnetDriver(options),
};
