// The Xantech MRC88 / MRAUDIO8x8 / MX88 family: factory plus the pieces tests and tools reuse.
import { checkedOptions } from '../family.js';
import { XantechDriver } from './driver.js';
import { XANTECH_OPTIONS, type XantechOptions } from './options.js';

export { XantechDriver } from './driver.js';
export { type EmulatorOptions, type KeypadChange, XantechEmulator } from './emulator.js';
export { XANTECH_DEFAULTS, type XantechOptions } from './options.js';
export * as xantechProtocol from './protocol.js';

export function createXantechDriver(options: XantechOptions): XantechDriver {
  return new XantechDriver(checkedOptions('xantech', XANTECH_OPTIONS, options));
}
