// The simulated family's options (the schema the configuration and the factory check them with) and its entry in the
// driver registry.
import { Type } from '@sinclair/typebox';
import type { DriverFamily } from '../family.js';

export const SIMULATED_ZONES = 6;
/** Delay before a change reaches the simulated hardware: a serial round trip is ~20 ms, tests want it short. */
export const SIMULATED_APPLY_DELAY_MS = 2;

export const SIMULATED_OPTIONS = Type.Object({
  zones: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 36,
      default: SIMULATED_ZONES,
      description: 'zones fitted, channels 1 to zones (36: as many as six RNET controllers)',
    }),
  ),
  applyDelayMs: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10_000,
      default: SIMULATED_APPLY_DELAY_MS,
      description: 'delay before a change reaches the simulated hardware, in ms',
    }),
  ),
});

/** The family's entry in the driver registry (drivers/index.ts); the driver itself is loaded when one is built. */
export const simulated: DriverFamily = {
  name: 'simulated',
  description:
    'an amplifier in memory (6 zones, 6 inputs, 38 volume steps) with the timing shape of a real one; runs anywhere',
  options: SIMULATED_OPTIONS,
  create: async (options) => (await import('./index.js')).createSimulatedDriver(options),
};
