// The Xantech MRC88 / MRAUDIO8x8 / MX88 family: factory plus the pieces tests and tools reuse.
import { withSerialPort } from '../core/serial-options.js';
import { XantechDriver } from './driver.js';
import type { XantechOptions } from './options.js';

export { XantechDriver } from './driver.js';
export { XANTECH_DEFAULTS, type XantechOptions } from './options.js';
export { XantechEmulator, type EmulatorOptions, type KeypadChange } from './emulator.js';
export * as xantechProtocol from './protocol.js';

export function createXantechDriver(options: XantechOptions): XantechDriver {
  return new XantechDriver(withSerialPort('xantech', options, ' (a by-id path survives the adapter being renumbered) or tcp://host:port for an IP-serial adapter'));
}
