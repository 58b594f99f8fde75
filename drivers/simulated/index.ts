// The simulated amplifier family (the default driver): factory plus the pieces tests reuse.
import { checkedOptions } from '../family.js';
import { SimulatedDriver, type SimulatedOptions } from './driver.js';
import { SIMULATED_OPTIONS } from './options.js';

export {
  SimulatedDriver,
  SIMULATED_SOUND,
  SIMULATED_ZONES,
  SIMULATED_SOURCES,
  type SimulatedChange,
  type SimulatedOptions,
} from './driver.js';

export function createSimulatedDriver(options: SimulatedOptions = {}): SimulatedDriver {
  return new SimulatedDriver(checkedOptions('simulated', SIMULATED_OPTIONS, options));
}
