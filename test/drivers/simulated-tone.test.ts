// The simulated amplifier's tone: its hardware does not outlive the process, so the tone the daemon remembers
// becomes the hardware's at start, unreported; a value the store kept that is no number is left out.
import t, { type Test } from 'tap';
import type { DriverEvent } from '../../drivers/driver.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { isZoneEvent, zoneEvents } from './events.js';

const ON = { power: true, muted: false, volume: 0.5, source: 2 };

function started(t: Test) {
  const time = new VirtualTime();
  const driver = new SimulatedDriver({ clock: time.clock.view() });
  t.teardown(() => driver.stop());
  return { driver };
}

t.test('a remembered tone becomes what the simulated amplifier holds, and is not reported', async (t) => {
  const { driver } = started(t);
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  await driver.start(new Map([[1, { ...ON, tone: { bass: 3 / 7, treble: -1, balance: 0.5, loudness: true } }]]));
  t.same(driver.amplifierTone(1), { bass: 3 / 7, treble: -1, balance: 0.5, loudness: true }, 'the hardware holds it');
  t.same(driver.hardwareTone(1), { bass: 3 / 7, treble: -1, balance: 0.5, loudness: true }, 'hardwareTone() agrees');
  t.same(zoneEvents(events, 1), [], 'no event');
});

t.test('a remembered tone value that is no number is left out, the hardware keeping its own', async (t) => {
  const { driver } = started(t);
  await driver.start(new Map([[1, { ...ON, tone: { bass: Number.NaN, treble: 'loud' as unknown as number } }]]));
  t.same(driver.amplifierTone(1), { bass: 0, treble: 0, balance: 0, loudness: false }, 'flat, as it was');
});

t.test('a keypad tone change on the simulated amplifier is one zone event with the new tone', async (t) => {
  const { driver } = started(t);
  await driver.start(new Map([[1, ON]]));
  const seen = new Promise<DriverEvent>((resolve) => driver.onEvent((e) => isZoneEvent(1)(e) && resolve(e)));
  driver.simulateKeypad(1, { treble: 2 / 7, party: true });
  t.match(await seen, { state: ON, tone: { treble: 2 / 7 }, flags: { party: true } });
});
