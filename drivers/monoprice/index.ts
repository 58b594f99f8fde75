// The Monoprice MPR-6ZHMAUT / Dayton DAX66 family: factory plus the pieces tests and tools reuse.
import type { DriverOptions } from '../driver.js';
import { MonopriceDriver, type MonopriceOptions } from './driver.js';

export { MonopriceDriver, MONOPRICE_DEFAULTS, type MonopriceOptions } from './driver.js';
export { MonopriceEmulator, type EmulatorOptions, type KeypadChange } from './emulator.js';
export * as monopriceProtocol from './protocol.js';

export function createMonopriceDriver(options: DriverOptions | MonopriceOptions): MonopriceDriver {
  const serialPort = options.serialPort;
  if (typeof serialPort !== 'string' || serialPort === '') {
    throw new Error(
      'the monoprice driver needs "serialPort": pass --serial-port /dev/serial/by-id/<adapter> ' +
        '(a by-id path survives the adapter being renumbered)',
    );
  }
  return new MonopriceDriver({ ...options, serialPort });
}
