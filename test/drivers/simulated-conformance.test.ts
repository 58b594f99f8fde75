// The simulated amplifier passes the shared driver conformance suite, on a hand-driven clock.
import t from 'tap';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { driverConformance } from './conformance.js';

const SECOND_UNIT = [4, 5, 6];

driverConformance(t, {
  expect: { zones: 6, inputs: 6, volumeSteps: 38 },
  async create(t, options = {}) {
    const time = new VirtualTime();
    const clock = time.clock.view();
    // 'absent': an amplifier of three zones, started by a daemon that remembers six.
    const driver = new SimulatedDriver({ clock, zones: options.secondUnit === 'absent' ? 3 : 6 });
    t.teardown(() => driver.stop());
    return {
      driver,
      keypad: (channel, change) => driver.simulateKeypad(channel, change),
      hardware: (channel) => driver.amplifierState(channel)!,
      hardwareTone: (channel) => driver.amplifierTone(channel)!,
      hardwareFlags: (channel) => driver.amplifierFlags(channel)!,
      // It learns of keypad changes the moment they happen: there is no poll to wait for.
      observed: async () => undefined,
      until: (goal, what) => time.until(goal, what),
      advance: (ms) => time.advance(ms),
      timers: () => clock.pending,
      // No read on a wire: the change is reported as it happens, and the write follows it.
      keypadSeenThen(channel, change, then) {
        driver.simulateKeypad(channel, change);
        then();
      },
      unplug: () => driver.simulateOffline(true),
      replug: () => driver.simulateOffline(false),
      secondUnit: {
        channels: SECOND_UNIT,
        remove: () => driver.simulateUnit(SECOND_UNIT, false),
        restore: () => driver.simulateUnit(SECOND_UNIT, true),
      },
    };
  },
  skip: {
    'starting adopts what the amplifier holds and reports each zone that differs from what the daemon remembered':
      "its hardware does not outlive the process: start() makes what the daemon remembers the hardware's state",
    'a volume burst reaches the wire as fewer writes than changes': 'no wire: changes are applied in memory',
    'line noise and garbage do not stop the driver': 'no line to garble: the hardware is in memory',
    'a tone control the family lacks is refused with the reason': 'the simulated amplifier has every tone control',
    'stop while the amplifier is unreachable at start leaves no timers behind':
      'no line to reopen: start() brings its in-memory hardware up, and it never schedules a retry',
    'starting reports a zone whose tone differs from the tone the daemon remembered, and writes none of it':
      "its hardware does not outlive the process: start() makes the remembered tone the hardware's",
  },
});
