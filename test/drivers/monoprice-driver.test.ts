// Monoprice driver against the emulator on an in-memory line: wire commands, polling, coalescing, faults and the
// ownership rule as the wire shows it; production timings on a hand-driven clock.
import t from 'tap';
import { SILENT_PROBE_MAX_MS } from '../../drivers/core/work-loop.js';
import { MONOPRICE_DEFAULTS } from '../../drivers/monoprice/driver.js';
import { isAvailability, isDescribed, isStatus, isZoneEvent, nextEvent, zoneEvents } from './events.js';
import { onNextCommand } from './memory-rig.js';
import { ON, observed, rig, STEPS, setsSince } from './monoprice-rig.js';

t.test('routing a zone sends power on first, then source and volume', async (t) => {
  const r = await rig(t);
  await r.startWith();
  const mark = r.mark();
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await r.settled();
  t.same(setsSince(r, mark), ['<11PR01', '<11CH02', '<11VO19'], 'PR01 before the sets an off zone would ignore');
  t.match(r.emulator.state(11), { power: true, source: 2, volume: 19 });
});

t.test('turning a zone off sends its other changes first and PR00 last', async (t) => {
  const r = await rig(t);
  await r.startWith([[13, ON]]);
  const mark = r.mark();
  r.driver.setZone(13, { power: false, muted: true });
  await r.settled();
  t.same(setsSince(r, mark), ['<13MU01', '<13PR00']);
  t.match(r.emulator.state(13), { power: false, mute: true });
});

t.test(
  'a change asked for while a zone is on is dropped when the zone is seen off: it does not wait for the next power-on',
  async (t) => {
    const r = await rig(t);
    await r.startWith([[14, ON]]);
    r.emulator.keypad(14, { power: false });
    // Asked for while the poll that will show the zone off is on the wire: the driver still believes it on.
    onNextCommand(
      r.emulator,
      (c) => c === '?10',
      () => r.driver.setZone(14, { source: 5 }),
    );
    const off = nextEvent(r.driver, isZoneEvent(14));
    t.match(
      (await r.until(off, "the keypad's power-off of 14")).state,
      { power: false, source: 1 },
      'reported with the source it kept',
    );
    await r.settled();
    r.driver.setZone(14, { power: true });
    await r.settled();
    t.same(
      setsSince(r).filter((c) => c.startsWith('<14')),
      ['<14PR01'],
      'only the power-on was written',
    );
    t.match(r.emulator.state(14), { power: true, source: 1 });
  },
);

t.test(
  'a keypad change becomes one zone event, with the tone and the PA and DT flags; LS flapping does not',
  async (t) => {
    const r = await rig(t, { emulator: { flapKeypadConnected: true } });
    await r.startWith([[11, ON]]);
    await observed(r);
    t.same(zoneEvents(r.events), [], 'no events while only the keypad-connected bit flaps');
    const event = nextEvent(r.driver, isZoneEvent(11));
    r.emulator.keypad(11, { volume: 30, mute: true, treble: 3, bass: 9, balance: 2, pa: true, dnd: true });
    const seen = await r.until(event, 'the keypad event');
    t.same(seen.state, { power: true, muted: true, volume: 30 / STEPS, source: 1 }, 'the state');
    t.same(seen.tone, { bass: 2 / 7, treble: -4 / 7, balance: -8 / 10 }, 'the tone, on the shared scale');
    t.same(seen.flags, { paging: true, doNotDisturb: true }, 'PA and DT');
    await observed(r);
    t.equal(zoneEvents(r.events).length, 1, 'exactly one event');
  },
);

t.test(
  'a port missing at start is reported offline and used once it appears, adopting what the amp holds',
  async (t) => {
    const r = await rig(t, { plugged: false });
    r.emulator.keypad(14, { power: true, volume: 10, source: 3 });
    const offline = nextEvent(r.driver, isStatus(false));
    await r.driver.start(new Map([[14, { power: false, muted: false, volume: 0.25, source: 1 }]]));
    t.match((await r.until(offline, 'offline')).detail, /cannot open/);
    const event = nextEvent(r.driver, isZoneEvent(14));
    r.serial.replug();
    t.match((await r.until(event, 'the zone the daemon remembered differently')).state, {
      power: true,
      volume: 10 / STEPS,
      source: 3,
    });
    t.ok(r.driver.online);
    t.same(setsSince(r), [], 'nothing written');
  },
);

t.test('absent slave units are probed once and never polled', async (t) => {
  const r = await rig(t, { emulator: { units: 1 } });
  await r.startWith();
  await observed(r);
  await observed(r);
  t.same(
    r.emulator.commands.filter((c) => /^[?<][23]/.test(c)),
    ['?20', '?30'],
    'one probe each, then silence',
  );
  t.equal(r.driver.describe().zones.length, 6);
  t.same(r.events.filter(isDescribed), [], 'the description did not change');
});

// A fitted slave unit described, driven and its keypads heard: the conformance suite's second-unit case.
t.test('with a slave unit fitted, it is polled and the unit after it only probed', async (t) => {
  const r = await rig(t, { emulator: { units: 2 } });
  await r.startWith();
  await r.commands((c) => c === '?20', 1, 'a poll of unit 2');
  await observed(r);
  t.equal(r.emulator.commands.filter((c) => c === '?30').length, 1, 'unit 3 only probed');
});

t.test(
  'a slave unit that stays silent is asked less and less often, at least once a minute, and is found when it answers',
  async (t) => {
    const r = await rig(t, { emulator: { units: 2 } });
    const described = nextEvent(r.driver, isDescribed);
    await r.startWith();
    await r.until(described, 'unit 2 described');
    r.emulator.units = 1;
    const lost = nextEvent(r.driver, isAvailability(21, false));
    await r.until(lost, 'unit 2 unavailable');
    const mark = r.mark();
    const polls = 40;
    await r.commands((c) => c === '?10', polls, 'polls of unit 1');
    // For each probe of unit 2, how many polls of unit 1 came before it since the previous one.
    const gaps: number[] = [];
    let since = 0;
    for (const command of r.since(mark)) {
      if (command === '?10') since++;
      if (command === '?20') {
        gaps.push(since);
        since = 0;
      }
    }
    const maxGap = Math.ceil(SILENT_PROBE_MAX_MS / MONOPRICE_DEFAULTS.pollIntervalMs);
    // The first probe at the next poll, then 1, 3, 7, ... polls left out, up to a minute's worth.
    const expected = [1];
    for (let n = 1, total = 1; total + Math.min(2 ** n, maxGap) <= polls; n++) {
      expected.push(Math.min(2 ** n, maxGap));
      total += expected.at(-1)!;
    }
    t.same(gaps, expected, `probes ${gaps.length} times in ${polls} polls (at every poll before)`);
    r.emulator.units = 2;
    const back = nextEvent(r.driver, isAvailability(21, true));
    const before = r.mark();
    await r.until(back, 'unit 2 available again');
    const waited = r.since(before).filter((c) => c === '?10').length;
    t.ok(waited <= maxGap, `found again within a minute of polls (${waited} polls of unit 1)`);
    t.ok(r.driver.availability(26).available, 'all its zones available');
    r.driver.setZone(23, { power: true });
    await r.settled();
    t.match(r.emulator.state(23), { power: true }, 'and driven');
  },
);

t.test('a silent amplifier goes offline after three timeouts and, back, gets what was asked meanwhile', async (t) => {
  const r = await rig(t);
  await r.startWith([[11, ON]]);
  const offline = nextEvent(r.driver, isStatus(false));
  const logged = r.logs.length;
  r.emulator.setSilent(true);
  t.match((await r.until(offline, 'offline')).detail, /3 requests to unit 1 unanswered/);
  const timeouts = r.logs.slice(logged).filter((l) => l.includes('timeout on'));
  t.equal(timeouts.length, MONOPRICE_DEFAULTS.offlineAfterTimeouts, 'after exactly three timeouts');
  r.driver.setZone(11, { source: 5, muted: true });
  const online = nextEvent(r.driver, isStatus(true));
  r.emulator.setSilent(false);
  await r.until(online, 'online again');
  await r.settled();
  t.match(r.emulator.state(11), { power: true, source: 5, mute: true });
});
