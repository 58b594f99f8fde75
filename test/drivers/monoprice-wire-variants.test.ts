// The Monoprice driver against emulators that format replies differently: echo, prompts, line breaks, split chunks, pacing.
import t from 'tap';
import type { Test } from 'tap';
import { MONOPRICE_DEFAULTS } from '../../drivers/monoprice/driver.js';
import type { EmulatorOptions } from '../../drivers/monoprice/emulator.js';
import { ALONE, concurrently } from '../helpers/concurrency.js';
import { isStatus, isZoneEvent, nextEvent, settledWithin } from './conformance.js';
import { ON, rig, startOnline, timeouts, type Rig } from './monoprice-rig.js';

// Every test builds its own pty, emulator and driver and mostly waits on the emulated line: a few run at once.
// ALONE: the test at the real baud rate that asserts no command timed out.
concurrently(t);

/** Three units, so no probe is meant to time out; a little pacing splits replies, prompts included, across chunks. */
const UNITS = 3;
const SPLIT = { byteDelayMs: 0.05 };

/**
 * What every variant must support: the desired state applied at start, a change applied, a keypad change reported
 * once, all without a single timeout.
 */
async function drivesAndPolls(t: Test, r: Rig): Promise<void> {
  await startOnline(r, new Map([[11, ON], [21, { ...ON, source: 4 }]]));
  t.match(r.emulator.state(11), { power: true, volume: 13, source: 1 }, 'desired state applied at start');
  t.match(r.emulator.state(21), { power: true, volume: 13, source: 4 }, 'on a slave unit too');
  r.driver.setZone(12, { power: true, source: 3, volume: 0.5 });
  await settledWithin(r.driver);
  t.match(r.emulator.state(12), { power: true, source: 3, volume: 19 }, 'a change applied');
  const event = nextEvent(r.driver, isZoneEvent(11), 'zone event for 11');
  r.emulator.keypad(11, { volume: 30 });
  t.equal((await event).state.volume, 30 / 38, 'a keypad change reported');
  await r.observed();
  t.equal(r.events.filter((e) => e.type === 'zone').length, 1, 'exactly once');
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
  ['no echo and no prompt after a command: replies start with the data line, sets get nothing', { echo: 'none', promptAfterCommand: false }],
];

for (const [name, variant] of variants) {
  t.test(`an amp sending ${name} is driven and polled`, async (t) => {
    // The real command timeout, not the rig's fast one: a reply the parser misses still times out, while a busy
    // machine that delays a reply by a few hundred milliseconds does not fail the test.
    const driver = { commandTimeoutMs: MONOPRICE_DEFAULTS.commandTimeoutMs };
    await drivesAndPolls(t, await rig(t, { emulator: { units: UNITS, ...SPLIT, ...variant }, driver }));
  });
}

t.test('an amp that never prompts is still found offline when it goes silent', async (t) => {
  const r = await rig(t, { emulator: { units: UNITS, echo: 'none', promptAfterCommand: false } });
  await startOnline(r, new Map([[11, ON]]));
  t.ok(r.logs.some((l) => l.includes('sends no prompt')), 'the driver noticed the amp sends no prompt');
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  r.emulator.setSilent(true);
  r.driver.setZone(11, { volume: 0.5 }); // a set gets no answer from this amp anyway: the polls must notice
  t.match((await offline).detail, /unanswered/);
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  r.emulator.setSilent(false);
  await online;
  await settledWithin(r.driver);
  t.equal(r.emulator.state(11).volume, 19, 'the change made while it was silent landed');
});

t.test('at 9600 baud with the default timeouts, three units are probed, driven and polled without a timeout', ALONE, async (t) => {
  // ?x0 replies are 168 bytes, ~175 ms each at 1.04 ms per byte, against the default 1 s command timeout.
  const r = await rig(t, {
    emulator: { units: UNITS, byteDelayMs: 1.04 },
    driver: { ...MONOPRICE_DEFAULTS, pollIntervalMs: 20 },
  });
  await startOnline(r, new Map([[11, ON], [21, ON], [36, ON]]));
  t.match(r.emulator.state(36), { power: true, volume: 13 });
  for (let i = 1; i <= 20; i++) r.driver.setZone(11, { volume: i / 20 });
  await settledWithin(r.driver);
  t.equal(r.emulator.state(11).volume, 38);
  await r.emulator.waitForCommand((c) => c === '?30');
  await r.emulator.waitForCommand((c) => c === '?30'); // a whole poll round after the writes
  t.same(timeouts(r), [], 'no command timed out');
  t.ok(r.driver.online);
});
