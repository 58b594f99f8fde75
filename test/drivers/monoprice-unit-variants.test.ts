// The Monoprice driver against amps that differ in what they answer: absent units, Command Error., garbled lines, off
// zones; on an in-memory line with production timings on a hand-driven clock.
import t from 'tap';
import { isAvailability, isDescribed, isZoneEvent, nextEvent, zoneEvents } from './events.js';
import { ON, observed, rig, setsSince, timeouts } from './monoprice-rig.js';

for (const absentUnits of ['silent', 'prompt'] as const) {
  const how = absentUnits === 'silent' ? 'completely silent' : 'echoed and prompted by the master, with no data';
  t.test(`absent slave units that are ${how} are probed once, after the master's writes`, async (t) => {
    const r = await rig(t, { emulator: { units: 1, absentUnits } });
    r.driver.setZone(11, { power: true }); // asked for before the link is up
    await r.startWith();
    const commands = r.emulator.commands;
    t.ok(commands.indexOf('<11PR01') < commands.indexOf('?20'), 'the master was driven before the slaves were probed');
    await observed(r);
    r.driver.setZone(12, { power: true });
    await r.settled();
    await observed(r);
    t.same(
      commands.filter((c) => /^[?<][23]/.test(c)),
      ['?20', '?30'],
      'one probe each, then never again',
    );
    t.equal(r.driver.describe().zones.length, 6);
    t.same(r.events.filter(isDescribed), [], 'the description did not change');
    t.equal(r.emulator.state(12).power, true, 'the master is driven as usual');
    t.notOk(r.driver.availability(21).available, 'zones of an absent unit are unavailable');
  });
}

for (const mode of ['prompt', 'silent'] as const) {
  t.test(
    `a slave unit that stops answering (${mode}) makes its zones unavailable without holding up the master`,
    async (t) => {
      const r = await rig(t, { emulator: { units: 2, absentUnits: mode } });
      await r.startWith([[21, ON]]);
      r.emulator.units = 1; // unit 2 powered off
      await r.until(nextEvent(r.driver, isAvailability(21, false)), 'zone 21 unavailable');
      const mark = r.mark();
      r.driver.setZone(21, { source: 6 });
      r.driver.setZone(11, { power: true, source: 2 });
      await r.settled();
      t.ok(r.driver.online, 'still online');
      t.match(r.emulator.state(11), { power: true, source: 2 }, 'the master was driven');
      t.same(
        setsSince(r, mark).filter((c) => c.startsWith('<2')),
        [],
        'nothing was sent to unit 2',
      );
      t.match(r.driver.availability(21).reason, /unit 2 does not answer/);
      r.emulator.units = 2;
      await r.until(nextEvent(r.driver, isAvailability(21, true)), 'zone 21 available again');
      r.driver.setZone(21, { source: 6 });
      await r.settled();
      t.equal(r.emulator.state(21).source, 6, 'a change made once it answers reaches unit 2');
    },
  );
}

t.test("Command Error. answering one unit's poll neither stops the round nor marks the unit absent", async (t) => {
  const r = await rig(t, { emulator: { units: 3 } });
  await r.startWith([[21, ON]]);
  const mark = r.mark();
  r.emulator.rejectNext((c) => c === '?20');
  await r.commands((c) => c === '?30', 1, 'the poll of unit 3');
  const round = r.since(mark);
  t.ok(round.indexOf('?20') < round.indexOf('?30'), 'the poll went on to unit 3 after the refused ?20');
  r.driver.setZone(21, { source: 6 });
  await r.settled();
  t.equal(r.emulator.state(21).source, 6, 'unit 2 is still driven');
  t.ok(r.driver.availability(21).available, 'unit 2 was never taken for silent');
  t.same(timeouts(r), []);
});

t.test(
  'Command Error. to a start probe or to the first ?10 is asked again, not taken for an absent unit',
  async (t) => {
    const r = await rig(t, { emulator: { units: 2 } });
    r.emulator.rejectNext((c) => c === '?10');
    r.emulator.rejectNext((c) => c === '?20', 2);
    const described = nextEvent(r.driver, isDescribed);
    await r.startWith();
    t.equal((await r.until(described, 'described')).description.zones.length, 12, 'unit 2 found');
    t.ok(r.driver.availability(22).available);
  },
);

t.test('a set answered with Command Error. is sent again after the zone has been read', async (t) => {
  const r = await rig(t, { emulator: { units: 3 } });
  await r.startWith([[11, ON]]);
  const mark = r.mark();
  r.emulator.rejectNext((c) => c === '<11VO19');
  r.driver.setZone(11, { volume: 0.5 });
  await r.settled();
  t.equal(r.emulator.state(11).volume, 19);
  t.same(r.since(mark), ['<11VO19', '?11', '<11VO19'], 'refused, the zone read, sent again');
  t.same(zoneEvents(r.events), [], 'and nothing reported');
});

t.test('a set the amp keeps refusing is given up after three tries, reporting the value the zone kept', async (t) => {
  const r = await rig(t, { emulator: { units: 3 } });
  await r.startWith([[11, ON]]);
  r.emulator.rejectNext((c) => c === '<11CH03', 100);
  const event = nextEvent(r.driver, isZoneEvent(11));
  r.driver.setZone(11, { source: 3 });
  t.equal((await r.until(event, 'the zone event')).state.source, 1, 'the zone kept source 1');
  await r.settled();
  t.equal(setsSince(r).filter((c) => c === '<11CH03').length, 3);
  t.ok(r.logs.some((l) => l.startsWith('warn') && l.includes('refused source 3 3 times')));
});

t.test(
  'a whole-unit reply with some lines garbled keeps the good lines and reads the others one zone at a time',
  async (t) => {
    const r = await rig(t, { emulator: { units: 3 } });
    r.emulator.garbledZones.add(12).add(14);
    r.driver.setZone(12, { power: true, source: 2 }); // asked for before the link is up: it waits for zone 12's read
    await r.startWith([[11, ON]]);
    t.ok(r.emulator.commands.includes('?12'), 'zone 12 read on its own');
    t.match(r.emulator.state(12), { power: true, source: 2 }, 'and driven');
    t.notOk(r.emulator.commands.includes('?14'), 'zone 14 has nothing waiting: it waits for a clean poll');
    const event = nextEvent(r.driver, isZoneEvent(11));
    r.emulator.keypad(11, { mute: true });
    t.equal(
      (await r.until(event, 'the keypad event')).state.muted,
      true,
      'keypad changes on the good lines are still seen',
    );
    await observed(r);
    t.equal(zoneEvents(r.events).length, 1, 'and nothing else reported');
    t.same(timeouts(r), [], 'the garbled lines cost no timeout');
  },
);

for (const ignoreSetsWhileOff of [true, false]) {
  const amp = ignoreSetsWhileOff ? 'an amp that ignores sets to an off zone' : 'an amp that takes sets while off';
  t.test(`${amp}: changes to an off zone land once it is on, and switching off lands every change`, async (t) => {
    const r = await rig(t, { emulator: { units: 3, ignoreSetsWhileOff } });
    await r.startWith([[13, ON]]);
    r.driver.setZone(12, { volume: 0.5, source: 4 });
    await r.settled();
    r.driver.setZone(12, { power: true });
    await r.settled();
    t.match(r.emulator.state(12), { power: true, volume: 19, source: 4 });
    r.driver.setZone(13, { power: false, muted: true, volume: 0.25 });
    await r.settled();
    t.match(r.emulator.state(13), { power: false, mute: true, volume: 10 });
    t.same(zoneEvents(r.events), [], 'nothing reported back');
  });

  t.test(
    `${amp}: a write that reached a zone the keypad had just switched off is reported as what the zone kept`,
    async (t) => {
      const r = await rig(t, { emulator: { units: 3, ignoreSetsWhileOff } });
      await r.startWith([[14, ON]]);
      const mark = r.mark();
      const off = nextEvent(r.driver, isZoneEvent(14));
      r.emulator.keypad(14, { power: false }); // the driver still believes the zone is on, so it sends the volume
      r.driver.setZone(14, { volume: 0.5 });
      const kept = ignoreSetsWhileOff ? 13 : 19;
      t.match(
        (await r.until(off, 'the power-off reported')).state,
        { power: false, volume: kept / 38 },
        'the power-off, with the volume the zone kept',
      );
      await r.settled();
      r.driver.setZone(14, { power: true });
      await r.settled();
      t.same(
        setsSince(r, mark),
        ['<14VO19', '<14PR01'],
        'the volume did go out while the zone was off, and was not sent again',
      );
      t.match(r.emulator.state(14), { power: true, volume: kept }, 'on again at what it kept');
      t.equal(r.driver.hardwareState(14)?.volume, kept / 38, 'as the driver knows');
    },
  );
}
