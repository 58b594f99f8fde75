// The simulated amplifier family (the default driver): factory plus the pieces tests reuse.
import { checkedOptions } from '../family.js';
import { SimulatedDriver, type SimulatedOptions } from './driver.js';
import { SIMULATED_OPTIONS } from './options.js';

export {
  SIMULATED_SOUND,
  SIMULATED_SOURCES,
  SIMULATED_ZONES,
  type SimulatedChange,
  SimulatedDriver,
  type SimulatedOptions,
} from './driver.js';

export function createSimulatedDriver(options: SimulatedOptions = {}): SimulatedDriver {
  return new SimulatedDriver(checkedOptions('simulated', SIMULATED_OPTIONS, options));
}
