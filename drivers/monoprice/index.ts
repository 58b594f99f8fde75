// The Monoprice MPR-6ZHMAUT / Dayton DAX66 family: factory plus the pieces tests and tools reuse.
import { checkedOptions } from '../family.js';
import { MonopriceDriver, type MonopriceOptions } from './driver.js';
import { MONOPRICE_OPTIONS } from './options.js';

export { MonopriceDriver, MONOPRICE_DEFAULTS, type MonopriceOptions } from './driver.js';
export { MonopriceEmulator, type EmulatorOptions, type KeypadChange } from './emulator.js';
export * as monopriceProtocol from './protocol.js';

export function createMonopriceDriver(options: MonopriceOptions): MonopriceDriver {
  return new MonopriceDriver(checkedOptions('monoprice', MONOPRICE_OPTIONS, options));
}
