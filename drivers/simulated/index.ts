// The simulated amplifier family (the default driver).
export { SimulatedDriver, createSimulatedDriver, SIMULATED_ZONES, SIMULATED_SOURCES, type SimulatedOptions } from './driver.js';
