// Xantech driver against the emulator on an in-memory line: wire commands, zone-activity reports, polling,
// coalescing, faults; production timings (reports a second after activity, a safety poll a minute) on a hand-driven
// clock.
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { createXantechDriver } from '../../drivers/xantech/index.js';
import { isStatus, isZoneEvent, nextEvent, zoneEvents } from './events.js';
import { ON, observed, type Rig, rig, setsSince } from './xantech-rig.js';

/** Pending zone-activity reports out and taken in. */
async function reportsIn(r: Rig): Promise<void> {
  await r.until(r.emulator.reportsSent(), 'the zone-activity reports');
  await r.time.flush();
}

t.test('connecting reads zone 1, switches zone-activity reports on, then reads every other zone', async (t) => {
  const r = await rig(t);
  await r.startWith();
  t.same(r.emulator.commands, ['?1ZD', '!ZA1', '?2ZD', '?3ZD', '?4ZD', '?5ZD', '?6ZD', '?7ZD', '?8ZD']);
  t.ok(r.driver.activityReports, 'the driver knows reports are on');
  t.ok(r.emulator.activityUpdates, 'and so does the amp');
});

t.test('routing a zone sends power on first, then a mute, then source and volume, as !/+ commands', async (t) => {
  const r = await rig(t);
  await r.startWith();
  const mark = r.mark();
  r.driver.setZone(3, { power: true, source: 2, volume: 0.5, muted: true });
  await r.settled();
  t.same(setsSince(r, mark), ['!3PR1', '!3MU1', '!3SS2', '!3VO19']);
  t.match(r.emulator.zone(3), { power: true, source: 2, volume: 19, mute: true });
  t.same(r.driver.hardwareState(3), { power: true, source: 2, volume: 19 / 38, muted: true });
});

// The amp reports zone 5 shortly after `!5PR1`: while the set's gap still holds the line, or once the OK has been
// taken in; either way the report is a read of the zone just powered on, not a keypad's change.
for (const [when, activityDelayMs] of [
  ["during the set's gap", 5],
  ['after the OK', 100],
] as const) {
  t.test(
    `a zone that comes on at volume 0 is read again and given the volume waiting for it, without an event (report ${when})`,
    async (t) => {
      const r = await rig(t, { emulator: { volumeZeroAtPowerOn: true, activityDelayMs } });
      await r.startWith();
      r.driver.setZone(5, { volume: 10 / 38 }); // the amp already holds 10 while off: nothing to send yet
      await r.settled();
      const mark = r.mark();
      r.driver.setZone(5, { power: true });
      await r.settled();
      t.same(r.since(mark), ['!5PR1', '?5ZD', '!5VO10'], 'read after power-on, then the volume');
      t.match(r.emulator.zone(5), { power: true, volume: 10 });
      await reportsIn(r);
      await r.settled();
      t.same(zoneEvents(r.events), [], 'the volume the amp started at was not reported as a keypad change');
    },
  );
}

t.test('a zone that comes on at volume 0 with nothing waiting for it is reported at the volume it holds', async (t) => {
  const r = await rig(t, { emulator: { volumeZeroAtPowerOn: true } });
  await r.startWith();
  const event = nextEvent(r.driver, isZoneEvent(5));
  r.driver.setZone(5, { power: true });
  t.same(
    (await r.until(event, 'the zone event')).state,
    { power: true, muted: false, volume: 0, source: 1 },
    'the truth about the present',
  );
});

t.test('turning a zone off sends its other changes first and power off last', async (t) => {
  const r = await rig(t);
  await r.startWith([[4, ON]]);
  const mark = r.mark();
  r.driver.setZone(4, { power: false, muted: true });
  await r.settled();
  t.same(setsSince(r, mark), ['!4MU1', '!4PR0']);
});

t.test('a keypad change arrives as a zone-activity report and becomes one zone event, without polling', async (t) => {
  const r = await rig(t);
  await r.startWith([[2, ON]]);
  const mark = r.mark();
  const event = nextEvent(r.driver, isZoneEvent(2));
  r.emulator.keypad(2, { volume: 30, source: 4, treble: 3 });
  t.same((await r.until(event, 'the keypad event')).state, { power: true, muted: false, volume: 30 / 38, source: 4 });
  t.same(r.since(mark), [], 'nothing was asked: the report carried the change');
  await observed(r);
  t.equal(zoneEvents(r.events).length, 1, 'exactly one event, after the polls too');
  t.same(r.driver.hardwareState(2), { power: true, muted: false, volume: 30 / 38, source: 4 });
});

t.test("the amp reporting the driver's own changes back does not make them events", async (t) => {
  const r = await rig(t);
  await r.startWith();
  let reports = 0;
  r.emulator.on('report', () => reports++);
  r.driver.setZone(5, { power: true, source: 6, volume: 0.75 });
  r.driver.setZone(6, { power: true, muted: true });
  await r.settled();
  await reportsIn(r);
  t.ok(reports >= 2, `the amp reported the changed zones (${reports} reports)`);
  t.same(zoneEvents(r.events), [], 'no zone events');
});

t.test('a keypad change whose activity report got lost is still found by the safety poll', async (t) => {
  const r = await rig(t);
  await r.startWith([[3, ON]]);
  r.emulator.activityUpdates = false; // the report for the next change never reaches the driver
  let reports = 0;
  r.emulator.on('report', () => reports++);
  const event = nextEvent(r.driver, isZoneEvent(3));
  const mark = r.mark();
  r.emulator.keypad(3, { volume: 5 });
  t.equal((await r.until(event, 'the zone event')).state.volume, 5 / 38);
  t.equal(reports, 0, 'no report went out');
  t.ok(r.since(mark).includes('?3ZD'), 'the poll read the zone');
});

for (const lineEnd of ['', '\r\n', '+\r']) {
  t.test(
    `replies ending in ${JSON.stringify(lineEnd)} and split across chunks drive and report the same`,
    async (t) => {
      const r = await rig(t, { emulator: { lineEnd, byteDelayMs: 0.05 } });
      await r.startWith([[1, ON]]);
      r.driver.setZone(1, { volume: 0.25 });
      await r.settled();
      t.match(r.emulator.zone(1), { power: true, volume: 10 }, 'a change applied');
      const event = nextEvent(r.driver, isZoneEvent(1));
      r.emulator.keypad(1, { volume: 30 });
      t.equal((await r.until(event, 'the keypad event')).state.volume, 30 / 38, 'a keypad change reported');
      t.same(
        r.logs.filter((l) => l.includes('timeout on')),
        [],
        'no command timed out',
      );
    },
  );
}

for (const refusal of ['error', 'silent'] as const) {
  t.test(
    `an amp that refuses zone-activity reports (${refusal}) is polled, and a keypad change is found`,
    async (t) => {
      const r = await rig(t, { emulator: { refuseActivityUpdates: refusal } });
      await r.startWith([[1, ON]]);
      t.notOk(r.driver.activityReports, 'the driver polls');
      t.notOk(r.emulator.activityUpdates);
      const event = nextEvent(r.driver, isZoneEvent(1));
      r.emulator.keypad(1, { mute: true });
      t.same((await r.until(event, 'the keypad event')).state, { ...ON, muted: true });
      await observed(r);
      t.equal(zoneEvents(r.events).length, 1, 'exactly one event');
      t.ok(r.driver.online, 'a silent refusal did not count as the amp being gone');
    },
  );
}

t.test('activityUpdates off switches reports off on the amp and polls', async (t) => {
  const r = await rig(t, { driver: { activityUpdates: 'off' } });
  r.emulator.activityUpdates = true; // left on by an earlier controller
  await r.startWith();
  t.ok(r.emulator.commands.includes('!ZA0'));
  t.notOk(r.emulator.activityUpdates);
  await observed(r);
  t.ok(r.emulator.commands.filter((c) => c === '?1ZD').length >= 3, 'zone 1 is polled');
});

t.test('a set the amp answers with ERROR is sent again after the zone is read', async (t) => {
  const r = await rig(t);
  await r.startWith([[2, ON]]);
  r.emulator.rejectNext((c) => c === '!2VO19');
  const mark = r.mark();
  r.driver.setZone(2, { volume: 0.5 });
  await r.settled();
  t.same(r.since(mark), ['!2VO19', '?2ZD', '!2VO19']);
  t.equal(r.emulator.zone(2).volume, 19);
});

t.test(
  'an amp power cycle is recovered without a restart: reports on again, and the change made meanwhile written',
  async (t) => {
    const r = await rig(t, { emulator: { bootMs: 100 } });
    await r.startWith([[1, ON]]);
    const offline = nextEvent(r.driver, isStatus(false));
    r.emulator.powerOff();
    t.match((await r.until(offline, 'offline')).detail, /unanswered/);
    t.notOk(r.emulator.activityUpdates, 'the amp forgot its zone-activity mode');
    r.driver.setZone(1, { source: 5, muted: true });
    const online = nextEvent(r.driver, isStatus(true));
    r.emulator.powerOn();
    await r.until(online, 'online again');
    await r.settled();
    t.match(r.emulator.zone(1), { power: true, source: 5, mute: true });
    t.ok(r.emulator.activityUpdates, 'reports are switched on again');
    t.ok(r.driver.activityReports);
  },
);

t.test('a slow-booting amp is waited for, then gets what was asked meanwhile', async (t) => {
  const r = await rig(t, { emulator: { bootMs: 4000 } });
  r.driver.setZone(7, { power: true, volume: 0.25, source: 3 });
  const online = nextEvent(r.driver, isStatus(true));
  await r.driver.start(new Map());
  await r.until(online, 'online after boot');
  await r.settled();
  t.ok(
    r.logs.some((l) => l.includes('not answering')),
    'the first attempts went unanswered',
  );
  t.match(r.emulator.zone(7), { power: true, volume: 10, source: 3 });
});

// Zones 9..16 driven and their keypads heard: the conformance suite's second-unit case.
t.test(
  'the 16-zone (expanded) model describes zones 1..16 before it connects, and reads zone 16 at connect',
  async (t) => {
    const r = await rig(t, { emulator: { zones: 16 }, driver: { zones: 16 } });
    t.same(
      r.driver.describe().zones.map((z) => z.channel),
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    await r.startWith();
    t.ok(r.emulator.commands.includes('?16ZD'), 'zone 16 read at connect');
  },
);

t.test(
  'set to 16 zones without an expansion amplifier, zones 9..16 are unavailable and zones 1..8 are driven',
  async (t) => {
    const r = await rig(t, { emulator: { zones: 8 }, driver: { zones: 16 } });
    await r.startWith();
    await r.until(() => !r.driver.availability(9).available, 'zone 9 unavailable');
    t.match(r.driver.availability(16).reason, /expansion amplifier \(zones 9-16\) does not answer/);
    r.driver.setZone(1, { power: true });
    await r.settled();
    t.equal(r.emulator.zone(1).power, true);
    t.ok(r.driver.online, 'the amplifier itself is online');
  },
);

t.test('the baud rate defaults per model, an explicit one wins, and bad options are refused by name', async (t) => {
  const baud = (options: ConstructorParameters<typeof XantechDriver>[0]): number => new XantechDriver(options).baudRate;
  t.equal(baud({ serialPort: '/dev/null' }), 9600, 'MRC88 by default');
  t.equal(baud({ serialPort: '/dev/null', model: 'mrc88m' }), 19200);
  t.equal(baud({ serialPort: '/dev/null', model: 'mx88' }), 57600);
  t.equal(baud({ serialPort: '/dev/null', model: 'mx88', baudRate: 9600 }), 9600);
  // The factory checks the options against the family's schema, as the daemon's configuration does.
  t.throws(() => createXantechDriver({ serialPort: '/dev/null', model: 'mrc99' as never }), {
    message: /^xantech driver option "model": must be one of mrc88, .*, got "mrc99"/,
  });
  t.throws(() => createXantechDriver({ serialPort: '/dev/null', zones: 12 as never }), {
    message: 'xantech driver option "zones": must be one of 8, 16, got 12',
  });
  t.throws(
    () => createXantechDriver({}),
    { message: /^xantech driver option "serialPort": is required: the amplifier's serial device/ },
    'the factory names the missing port',
  );
  t.throws(() => createXantechDriver({ serialPort: 'tcp://adapter' }), {
    message: /^xantech driver option "serialPort": "tcp:\/\/adapter" is not a valid network serial port/,
  });
  t.throws(() => createXantechDriver({ serialPort: '/dev/null', activityUpdates: 'on' as never }), {
    message: 'xantech driver option "activityUpdates": must be one of auto, off, got "on"',
  });
});
