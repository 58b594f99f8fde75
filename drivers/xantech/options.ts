// The Xantech family's options (defaults with the reason for each, and the schema the configuration and the factory
// check them with) and its entry in the driver registry.
import { Type } from '@sinclair/typebox';
import type { SerialOptions, SerialTimings } from '../core/serial-options.js';
import { serialOptionsSchema } from '../core/serial-schema.js';
import type { DriverFamily } from '../family.js';
import { XANTECH_MODELS, type XantechModel, ZONE_COUNTS, type ZoneCount } from './protocol.js';

export interface XantechOptions extends SerialOptions {
  model?: XantechModel;
  zones?: ZoneCount;
  activityUpdates?: 'auto' | 'off';
  activityPollIntervalMs?: number;
}

/** Defaults and their reasons live here, not spread through the code. */
export const XANTECH_DEFAULTS: SerialTimings & {
  model: XantechModel;
  zones: ZoneCount;
  activityPollIntervalMs: number;
} = {
  model: 'mrc88',
  zones: 8,
  baudRate: 9600, // the MRC88's; the model's own wins unless a baud rate is given (drivers/xantech/protocol.ts)
  pollIntervalMs: 5000, // without activity reports: a keypad change shows within ~5 s (8 queries, ~0.5 s at 9600 baud)
  activityPollIntervalMs: 60_000, // with them: reports carry the news, the poll only catches what got lost
  commandTimeoutMs: 1000, // a zone report is ~45 bytes, ~50 ms at 9600 baud
  interCommandGapMs: 30,
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  offlineAfterTimeouts: 3,
};

const SERIAL = serialOptionsSchema(XANTECH_DEFAULTS);
const modelRates = Object.entries(XANTECH_MODELS).map(([model, { baudRate }]) => `${model} ${baudRate}`);

export const XANTECH_OPTIONS = Type.Object({
  ...SERIAL.properties,
  baudRate: Type.Optional(
    Type.Integer({ ...SERIAL.properties.baudRate, default: undefined, defaultText: "the model's" }),
  ),
  model: Type.Optional(
    Type.Union(
      Object.keys(XANTECH_MODELS).map((model) => Type.Literal(model)),
      {
        default: XANTECH_DEFAULTS.model,
        description: `the amplifier model, which sets the default baud rate (${modelRates.join(', ')})`,
      },
    ),
  ),
  zones: Type.Optional(
    Type.Union(
      ZONE_COUNTS.map((count) => Type.Literal(count)),
      {
        default: XANTECH_DEFAULTS.zones,
        description: '8, or 16 for two amplifiers linked in expanded mode (zones 9-16 on the expansion amplifier)',
      },
    ),
  ),
  activityUpdates: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('off')], {
      default: 'auto',
      description:
        'auto: the amplifier reports keypad changes by itself (!ZA1+) and is polled only as a safety net; off: switch reports off and poll, for firmware that misbehaves with them',
    }),
  ),
  activityPollIntervalMs: Type.Optional(
    Type.Integer({
      minimum: 200,
      maximum: 3_600_000,
      default: XANTECH_DEFAULTS.activityPollIntervalMs,
      description:
        'how often every zone is read while activity reports are on (a safety net and the liveness check), in ms',
    }),
  ),
});

/** The family's entry in the driver registry (drivers/index.ts); the driver itself is loaded when one is built. */
export const xantech: DriverFamily = {
  name: 'xantech',
  description: 'Xantech MRC88 / MRAUDIO8x8 / MX88 over RS-232, 8 zones (16 with an expansion amplifier)',
  options: XANTECH_OPTIONS,
  create: async (options) => (await import('./index.js')).createXantechDriver(options),
};
