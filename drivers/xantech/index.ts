// The Xantech MRC88 / MRAUDIO8x8 / MX88 family: factory plus the pieces tests and tools reuse.
import type { DriverOptions } from '../driver.js';
import { XantechDriver } from './driver.js';
import type { XantechOptions } from './options.js';

export { XantechDriver } from './driver.js';
export { XANTECH_DEFAULTS, type XantechOptions } from './options.js';
export { XantechEmulator, type EmulatorOptions, type KeypadChange } from './emulator.js';
export * as xantechProtocol from './protocol.js';

export function createXantechDriver(options: DriverOptions | XantechOptions): XantechDriver {
  const serialPort = options.serialPort;
  if (typeof serialPort !== 'string' || serialPort === '') {
    throw new Error(
      'the xantech driver needs "serialPort": pass --serial-port /dev/serial/by-id/<adapter> ' +
        '(a by-id path survives the adapter being renumbered) or tcp://host:port for an IP-serial adapter',
    );
  }
  return new XantechDriver({ ...options, serialPort });
}
