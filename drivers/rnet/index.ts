// The Russound RNET family: factory plus the pieces tests and tools reuse.
import type { DriverOptions } from '../driver.js';
import { RnetDriver, type RnetOptions } from './driver.js';

export { RnetDriver, RNET_DEFAULTS, type RnetOptions } from './driver.js';
export { RnetEmulator, type EmulatorOptions, type EmulatedZone } from './emulator.js';
export * as rnetProtocol from './protocol.js';

export function createRnetDriver(options: DriverOptions | RnetOptions): RnetDriver {
  const serialPort = options.serialPort;
  if (typeof serialPort !== 'string' || serialPort === '') {
    throw new Error(
      'the rnet driver needs "serialPort": pass --serial-port /dev/serial/by-id/<adapter> for the controller\'s ' +
        'RS-232 port, or tcp://host:port for a serial-to-IP adapter (ser2net, Global Caché)',
    );
  }
  return new RnetDriver({ ...options, serialPort });
}
