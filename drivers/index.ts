// Picks a driver family by name; the daemon sees only this and drivers/driver.ts.
import type { AmplifierDriver, DriverOptions } from './driver.js';
import { createSimulatedDriver } from './simulated/index.js';

export const DRIVER_NAMES = ['simulated', 'monoprice', 'rnet', 'xantech'] as const;
export type DriverName = (typeof DRIVER_NAMES)[number];

export async function createDriver(name: string, options: DriverOptions): Promise<AmplifierDriver> {
  switch (name) {
    case 'simulated':
      return createSimulatedDriver(options);
    case 'monoprice': {
      const { createMonopriceDriver } = await import('./monoprice/index.js');
      return createMonopriceDriver(options);
    }
    case 'rnet': {
      const { createRnetDriver } = await import('./rnet/index.js');
      return createRnetDriver(options);
    }
    case 'xantech': {
      const { createXantechDriver } = await import('./xantech/index.js');
      return createXantechDriver(options);
    }
    default:
      throw new Error(`unknown driver "${name}": choose one of ${DRIVER_NAMES.join(', ')}`);
  }
}
