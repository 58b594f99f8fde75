// The Russound RNET family: factory plus the pieces tests and tools reuse.
import { checkedOptions } from '../family.js';
import { RnetDriver, type RnetOptions } from './driver.js';
import { RNET_OPTIONS } from './options.js';

export { RNET_DEFAULTS, RnetDriver, type RnetOptions } from './driver.js';
export { type EmulatedZone, type EmulatorOptions, RnetEmulator } from './emulator.js';
export * as rnetProtocol from './protocol.js';

export function createRnetDriver(options: RnetOptions): RnetDriver {
  return new RnetDriver(checkedOptions('rnet', RNET_OPTIONS, options));
}
