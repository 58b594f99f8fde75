// The Russound RNET family: factory plus the pieces tests and tools reuse.
import { withSerialPort } from '../core/serial-options.js';
import { RnetDriver, type RnetOptions } from './driver.js';

export { RnetDriver, RNET_DEFAULTS, type RnetOptions } from './driver.js';
export { RnetEmulator, type EmulatorOptions, type EmulatedZone } from './emulator.js';
export * as rnetProtocol from './protocol.js';

export function createRnetDriver(options: RnetOptions): RnetDriver {
  return new RnetDriver(withSerialPort('rnet', options, " for the controller's RS-232 port, or tcp://host:port for a serial-to-IP adapter (ser2net, Global Caché)"));
}
