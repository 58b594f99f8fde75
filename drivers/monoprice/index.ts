// The Monoprice MPR-6ZHMAUT / Dayton DAX66 family: factory plus the pieces tests and tools reuse.
import { checkedOptions } from '../family.js';
import { MonopriceDriver, type MonopriceOptions } from './driver.js';
import { MONOPRICE_OPTIONS } from './options.js';

export { MONOPRICE_DEFAULTS, MonopriceDriver, type MonopriceOptions } from './driver.js';
export { type EmulatorOptions, type KeypadChange, MonopriceEmulator } from './emulator.js';
export * as monopriceProtocol from './protocol.js';

export function createMonopriceDriver(options: MonopriceOptions): MonopriceDriver {
  return new MonopriceDriver(checkedOptions('monoprice', MONOPRICE_OPTIONS, options));
}
