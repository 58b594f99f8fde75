// The Monoprice driver against emulators that format replies differently: echo, prompts, line breaks, split chunks,
// pacing; on an in-memory line with production timings on a hand-driven clock.

import type { Test } from 'tap';
import t from 'tap';
import { MONOPRICE_DEFAULTS } from '../../drivers/monoprice/driver.js';
import type { EmulatorOptions } from '../../drivers/monoprice/emulator.js';
import { isStatus, isZoneEvent, nextEvent, zoneEvents } from './events.js';
import { ON, observed, type Rig, rig, timeouts } from './monoprice-rig.js';

/** Three units, so no probe is meant to time out; a little pacing splits replies, prompts included, across chunks. */
const UNITS = 3;
const SPLIT = { byteDelayMs: 0.05 };

/** What every variant must support: a change applied on two units, a keypad change reported once, no timeout. */
async function drivesAndPolls(t: Test, r: Rig): Promise<void> {
  await r.startWith([
    [11, ON],
    [21, { ...ON, source: 4 }],
  ]);
  r.driver.setZone(12, { power: true, source: 3, volume: 0.5 });
  r.driver.setZone(21, { volume: 0.25 });
  await r.settled();
  t.match(r.emulator.state(12), { power: true, source: 3, volume: 19 }, 'a change applied');
  t.match(r.emulator.state(21), { power: true, volume: 10, source: 4 }, 'on a slave unit too');
  const event = nextEvent(r.driver, isZoneEvent(11));
  r.emulator.keypad(11, { volume: 30 });
  t.equal((await r.until(event, 'the keypad event')).state.volume, 30 / 38, 'a keypad change reported');
  await observed(r);
  t.equal(zoneEvents(r.events).length, 1, 'exactly once');
  t.same(timeouts(r), [], 'no command timed out');
}

const variants: Array<[string, EmulatorOptions]> = [
  ['whole-unit lines without the extra CR', { wholeUnitExtraCr: false }],
  ['the extra CR on single-zone replies too', { extraCr: true }],
  ['LF-only line breaks', { newline: '\n' }],
  ['LF CR line breaks', { newline: '\n\r' }],
  ['a blank line before each prompt', { newline: '\r\n\r\n' }],
  ['an echo of the whole line at the CR', { echo: 'line' }],
  ['no echo: replies start with the prompt', { echo: 'none' }],
  [
    'no echo and no prompt after a command: replies start with the data line, sets get nothing',
    { echo: 'none', promptAfterCommand: false },
  ],
];

for (const [name, variant] of variants) {
  t.test(`an amp sending ${name} is driven and polled`, async (t) => {
    await drivesAndPolls(t, await rig(t, { emulator: { units: UNITS, ...SPLIT, ...variant } }));
  });
}

t.test('an amp that never prompts is still found offline when it goes silent', async (t) => {
  const r = await rig(t, { emulator: { units: UNITS, echo: 'none', promptAfterCommand: false } });
  await r.startWith([[11, ON]]);
  t.ok(
    r.logs.some((l) => l.includes('sends no prompt')),
    'the driver noticed the amp sends no prompt',
  );
  const offline = nextEvent(r.driver, isStatus(false));
  r.emulator.setSilent(true);
  r.driver.setZone(11, { volume: 0.5 }); // a set gets no answer from this amp anyway: the polls must notice
  t.match((await r.until(offline, 'offline')).detail, /unanswered/);
  const online = nextEvent(r.driver, isStatus(true));
  r.emulator.setSilent(false);
  await r.until(online, 'online again');
  await r.settled();
  t.equal(r.emulator.state(11).volume, 19, 'the change made while it was silent landed');
});

t.test(
  'at 9600 baud with the default timings, three units are probed, driven and polled without a timeout',
  async (t) => {
    // ?x0 replies are 168 bytes, ~175 ms each at 1.04 ms per byte, against the default 1 s command timeout.
    const r = await rig(t, { emulator: { units: UNITS, byteDelayMs: 1.04 }, driver: { ...MONOPRICE_DEFAULTS } });
    await r.startWith([
      [11, ON],
      [21, ON],
      [36, ON],
    ]);
    for (let i = 1; i <= 20; i++) r.driver.setZone(11, { volume: i / 20 });
    r.driver.setZone(36, { volume: 0.5 });
    await r.settled();
    t.equal(r.emulator.state(11).volume, 38);
    t.equal(r.emulator.state(36).volume, 19);
    await r.commands((c) => c === '?30', 2, 'two polls of unit 3 after the writes');
    t.same(timeouts(r), [], 'no command timed out');
    t.ok(r.driver.online);
  },
);
