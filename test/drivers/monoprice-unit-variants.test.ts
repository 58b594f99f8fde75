// The Monoprice driver against amps that differ in what they answer: absent units, Command Error., garbled lines, off zones.
import t from 'tap';
import type { DriverEvent } from '../../drivers/driver.js';
import { MONOPRICE_DEFAULTS } from '../../drivers/monoprice/driver.js';
import { concurrently } from '../helpers/concurrency.js';
import { isZoneEvent, nextEvent, settledWithin } from './conformance.js';
import { ON, rig, setsSince, startOnline, timeouts } from './monoprice-rig.js';

// Every test builds its own pty, emulator and driver and mostly waits on the emulated line: a few run at once.
concurrently(t);

/**
 * For tests that assert no command timed out: the real timeout, so only a reply the driver truly missed counts,
 * never a reply that a busy machine delayed past the rig's fast one.
 */
const REAL_TIMEOUT = { commandTimeoutMs: MONOPRICE_DEFAULTS.commandTimeoutMs };

const isDescribed = (e: DriverEvent): e is Extract<DriverEvent, { type: 'described' }> => e.type === 'described';

for (const absentUnits of ['silent', 'prompt'] as const) {
  const how = absentUnits === 'silent' ? 'completely silent' : 'echoed and prompted by the master, with no data';
  t.test(`absent slave units that are ${how} are probed once, after the master's writes`, async (t) => {
    const r = await rig(t, { emulator: { units: 1, absentUnits } });
    await startOnline(r, new Map([[11, ON]]));
    const commands = r.emulator.commands;
    t.ok(commands.indexOf('<11PR01') < commands.indexOf('?20'), 'the master was driven before the slaves were probed');
    t.match(r.emulator.state(11), { power: true, volume: 13 });
    await r.observed();
    r.driver.setZone(12, { power: true });
    await settledWithin(r.driver);
    await r.observed();
    t.same(commands.filter((c) => /^[?<][23]/.test(c)), ['?20', '?30'], 'one probe each, then never again');
    t.equal(r.driver.describe().zones.length, 6);
    t.same(r.events.filter(isDescribed), [], 'the description did not change');
    t.equal(r.emulator.state(12).power, true, 'the master is driven as usual');
    t.ok(r.driver.online);
  });
}

for (const [mode, how] of [
  ['prompt', 'the master still echoes and prompts, but ?20 gets no data'],
  ['silent', 'this amp says nothing at all for it'],
] as const) {
  t.test(`a fitted slave unit that stops answering (${mode}) does not hold up the master, and catches up`, async (t) => {
    const r = await rig(t, { emulator: { units: 2, absentUnits: mode } });
    await startOnline(r, new Map([[21, ON]]));
    r.emulator.units = 1; // unit 2 powered off
    await r.emulator.waitForCommand((c) => c === '?20');
    await r.observed();
    r.driver.setZone(21, { source: 6 });
    r.driver.setZone(11, { power: true, source: 2 });
    await settledWithin(r.driver);
    t.ok(r.driver.online, 'still online');
    t.match(r.emulator.state(11), { power: true, source: 2 }, `the master was driven (${how})`);
    t.equal(r.emulator.state(21).source, 1, 'unit 2 has not changed');
    r.emulator.units = 2;
    await r.emulator.waitForCommand((c) => c === '<21CH06');
    t.equal(r.emulator.state(21).source, 6, 'the change reached unit 2 once it answered');
  });
}

t.test("Command Error. answering one unit's poll neither stops the round nor marks the unit absent", async (t) => {
  const r = await rig(t, { emulator: { units: 3 }, driver: REAL_TIMEOUT });
  await startOnline(r, new Map([[21, ON]]));
  const mark = r.emulator.commands.length;
  r.emulator.rejectNext((c) => c === '?20');
  await r.emulator.waitForCommand((c) => c === '?30');
  const round = r.emulator.commands.slice(mark);
  t.ok(round.indexOf('?20') < round.indexOf('?30'), 'the poll went on to unit 3 after the refused ?20');
  r.driver.setZone(21, { source: 6 });
  await settledWithin(r.driver);
  t.equal(r.emulator.state(21).source, 6, 'unit 2 is still driven');
  t.notOk(r.logs.some((l) => l.includes('stopped answering')), 'unit 2 was never taken for silent');
  t.same(timeouts(r), []);
});

t.test('Command Error. to a start probe or to the first ?10 is asked again, not taken for an absent unit', async (t) => {
  const r = await rig(t, { emulator: { units: 2 } });
  r.emulator.rejectNext((c) => c === '?10');
  r.emulator.rejectNext((c) => c === '?20', 2);
  const described = nextEvent(r.driver, isDescribed, 'described');
  await startOnline(r, new Map([[11, ON], [22, ON]]));
  t.equal((await described).description.zones.length, 12, 'unit 2 found');
  t.match(r.emulator.state(11), { power: true, volume: 13 });
  t.match(r.emulator.state(22), { power: true, volume: 13 });
});

t.test('a set answered with Command Error. is sent again after its unit has been read', async (t) => {
  const r = await rig(t, { emulator: { units: 3 } });
  await startOnline(r, new Map([[11, ON]]));
  const mark = r.emulator.commands.length;
  r.emulator.rejectNext((c) => c === '<11VO19');
  r.driver.setZone(11, { volume: 0.5 });
  await settledWithin(r.driver);
  t.equal(r.emulator.state(11).volume, 19);
  const sent = r.emulator.commands.slice(mark);
  const [first, second] = [sent.indexOf('<11VO19'), sent.lastIndexOf('<11VO19')];
  t.ok(first < second, 'sent twice');
  t.ok(sent.slice(first, second).includes('?10'), 'with a read of the unit in between');
  t.same(r.events.filter((e) => e.type === 'zone'), [], 'and nothing reported');
});

t.test('a set the amp keeps refusing is given up after three tries, reporting the value the zone kept', async (t) => {
  const r = await rig(t, { emulator: { units: 3 } });
  await startOnline(r, new Map([[11, ON]]));
  r.emulator.rejectNext((c) => c === '<11CH03', 100);
  const event = nextEvent(r.driver, isZoneEvent(11), 'zone event for 11');
  r.driver.setZone(11, { source: 3 });
  t.equal((await event).state.source, 1, 'the zone kept source 1');
  await settledWithin(r.driver);
  t.equal(setsSince(r).filter((c) => c === '<11CH03').length, 3);
  t.ok(r.logs.some((l) => l.startsWith('warn') && l.includes('refused CH3')));
});

t.test('a whole-unit reply with some lines garbled keeps the good lines and reads the others one zone at a time', async (t) => {
  const r = await rig(t, { emulator: { units: 3 }, driver: REAL_TIMEOUT });
  r.emulator.garbledZones.add(12).add(14);
  await startOnline(r, new Map([[11, ON], [12, { ...ON, source: 2 }]]));
  t.ok(r.emulator.commands.includes('?12'), 'zone 12 read on its own');
  t.match(r.emulator.state(12), { power: true, source: 2 }, 'and driven');
  t.notOk(r.emulator.commands.includes('?14'), 'zone 14 has no desired state: it waits for a clean poll');
  const event = nextEvent(r.driver, isZoneEvent(11), 'zone event for 11');
  r.emulator.keypad(11, { mute: true });
  t.equal((await event).state.muted, true, 'keypad changes on the good lines are still seen');
  await r.observed();
  t.equal(r.events.filter((e) => e.type === 'zone').length, 1, 'and nothing else reported');
  t.same(timeouts(r), [], 'the garbled lines cost no timeout');
});

for (const ignoreSetsWhileOff of [true, false]) {
  const amp = ignoreSetsWhileOff ? 'an amp that ignores sets to an off zone' : 'an amp that takes sets while off';
  t.test(`${amp}: changes to an off zone land once it is on, and switching off lands every change`, async (t) => {
    const r = await rig(t, { emulator: { units: 3, ignoreSetsWhileOff } });
    await startOnline(r, new Map([[13, ON]]));
    r.driver.setZone(12, { volume: 0.5, source: 4 });
    await settledWithin(r.driver);
    r.driver.setZone(12, { power: true });
    await settledWithin(r.driver);
    t.match(r.emulator.state(12), { power: true, volume: 19, source: 4 });
    r.driver.setZone(13, { power: false, muted: true, volume: 0.25 });
    await settledWithin(r.driver);
    t.match(r.emulator.state(13), { power: false, mute: true, volume: 10 });
    t.same(r.events.filter((e) => e.type === 'zone'), [], 'nothing reported back');
  });

  t.test(`${amp}: a set racing a keypad that switches the zone off still converges`, async (t) => {
    // No poll on the wire while the race is set up: the next one comes 200 ms after start settled.
    const r = await rig(t, { emulator: { units: 3, ignoreSetsWhileOff }, driver: { pollIntervalMs: 200 } });
    await startOnline(r, new Map([[14, ON]]));
    const mark = r.emulator.commands.length;
    const off = nextEvent(r.driver, isZoneEvent(14), 'zone event for 14');
    r.emulator.keypad(14, { power: false }); // the driver still believes the zone is on, so it sends the volume
    r.driver.setZone(14, { volume: 0.5 });
    t.equal((await off).state.power, false, 'the keypad switching it off is reported');
    await settledWithin(r.driver);
    r.driver.setZone(14, { power: true });
    await settledWithin(r.driver);
    const sets = setsSince(r, mark);
    t.equal(sets[0], '<14VO19', 'the volume did go out while the zone was off');
    t.ok(sets.includes('<14PR01'));
    t.match(r.emulator.state(14), { power: true, volume: 19 }, 'on again with the volume asked for');
  });
}
