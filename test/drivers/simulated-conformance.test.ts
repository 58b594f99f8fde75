// The simulated driver passes the shared driver conformance suite.
import t from 'tap';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { driverConformance } from './conformance.js';

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: 38 },
  async create(t) {
    const driver = new SimulatedDriver();
    t.teardown(() => driver.stop());
    return {
      driver,
      keypad: (channel, change) => driver.simulateKeypad(channel, change),
      // The simulated driver's memory is its hardware.
      hardware: (channel) => driver.hardwareState(channel)!,
      // It learns of keypad changes the moment they happen: there is no poll to wait for.
      observed: async () => undefined,
    };
  },
  skip: {
    'a volume burst reaches the wire as fewer writes than changes': 'no wire: changes are applied in memory',
    'a driver that loses the hardware and gets it back re-applies the desired state and goes online again, applying changes made while offline':
      'no hardware to lose: the simulated amplifier is the driver\'s own memory, always reachable',
  },
});
