// Xantech driver against the emulator over a real pty: wire commands, activity reports, polling, coalescing, faults.
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { createXantechDriver } from '../../drivers/xantech/index.js';
import { ALONE, concurrently } from '../helpers/concurrency.js';
import { isStatus, isZoneEvent, nextEvent, settledWithin } from './conformance.js';
import { ON, rig, setsSince, startOnline, zoneEvents, type Rig } from './xantech-rig.js';
import { sameSets } from './serial-rig.js';

// Every test builds its own pty, emulator and driver and mostly waits on the emulated line: a few run at once.
// ALONE: tests paced against the emulated baud rate, and the volume-0-at-power-on cases, which set the order of a
// report and an OK by the gap after each command and check the exact commands sent.
concurrently(t);

/** The safety poll pushed out of the way, so anything the driver learns must come from an activity report. */
const NO_POLL = { activityPollIntervalMs: 60_000 };

/** A command whose OK is written after everything the amp sent before, so once settled the driver has read all that. */
async function syncPoint(r: Rig, zone = 8): Promise<void> {
  r.driver.setZone(zone, { power: !r.emulator.zone(zone).power });
  await settledWithin(r.driver);
}

t.test('connecting reads zone 1, switches zone-activity reports on, then reads every other zone', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r);
  t.same(r.emulator.commands, ['?1ZD', '!ZA1', '?2ZD', '?3ZD', '?4ZD', '?5ZD', '?6ZD', '?7ZD', '?8ZD']);
  t.ok(r.driver.activityReports, 'the driver knows reports are on');
  t.ok(r.emulator.activityUpdates, 'and so does the amp');
});

t.test('routing a zone sends power on first, then a mute, then source and volume, as !/+ commands', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r);
  const mark = r.emulator.commands.length;
  r.driver.setZone(3, { power: true, source: 2, volume: 0.5, muted: true });
  await settledWithin(r.driver);
  sameSets(t, r, setsSince(r, mark), ['!3PR1', '!3MU1', '!3SS2', '!3VO19']);
  t.match(r.emulator.zone(3), { power: true, source: 2, volume: 19, mute: true });
  t.same(r.driver.hardwareState(3), { power: true, source: 2, volume: 19 / 38, muted: true });
});

// The amp reports zone 5 a few milliseconds after `!5PR1`: after its OK has been taken in, or (a longer gap after each
// command) while the set is still on the line; either way the report is a read of the zone just powered on.
for (const [when, gapMs] of [['after the OK', 2], ['during the set\'s gap', 30]] as const) {
  t.test(`a zone that comes on at volume 0 is read again and given its desired volume, without an event (report ${when})`, ALONE, async (t) => {
    const r = await rig(t, { emulator: { volumeZeroAtPowerOn: true }, driver: { ...NO_POLL, interCommandGapMs: gapMs } });
    await startOnline(r);
    r.driver.setZone(5, { volume: 10 / 38 }); // the amp already holds 10 while off: nothing to send yet
    await settledWithin(r.driver);
    const mark = r.emulator.commands.length;
    r.driver.setZone(5, { power: true });
    await settledWithin(r.driver);
    t.same(r.emulator.commands.slice(mark), ['!5PR1', '?5ZD', '!5VO10'], 'read after power-on, then the volume');
    t.match(r.emulator.zone(5), { power: true, volume: 10 });
    await r.emulator.reportsSent();
    await syncPoint(r);
    t.same(zoneEvents(r), [], 'the volume the amp started at was not reported as a keypad change');
  });
}

t.test('turning a zone off sends its other changes first and power off last', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r, new Map([[4, ON]]));
  const mark = r.emulator.commands.length;
  r.driver.setZone(4, { power: false, muted: true });
  await settledWithin(r.driver);
  sameSets(t, r, setsSince(r, mark), ['!4MU1', '!4PR0']);
});

t.test('a keypad change arrives as a zone-activity report and becomes one zone event, without polling', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r, new Map([[2, ON]]));
  const mark = r.emulator.commands.length;
  const event = nextEvent(r.driver, isZoneEvent(2), 'zone event for 2');
  r.emulator.keypad(2, { volume: 30, source: 4, treble: 3 });
  t.same((await event).state, { power: true, muted: false, volume: 30 / 38, source: 4 });
  await syncPoint(r);
  t.notOk(r.emulator.commands.slice(mark).includes('?2ZD'), 'zone 2 was never queried: the report carried the change');
  t.equal(zoneEvents(r).length, 1, 'exactly one event');
  t.same(r.driver.hardwareState(2), { power: true, muted: false, volume: 30 / 38, source: 4 });
});

t.test('the amp reporting the driver\'s own changes back does not make them events', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r);
  let reports = 0;
  r.emulator.on('report', () => reports++);
  r.driver.setZone(5, { power: true, source: 6, volume: 0.75 });
  r.driver.setZone(6, { power: true, muted: true });
  await settledWithin(r.driver);
  await r.emulator.reportsSent();
  await syncPoint(r);
  t.ok(reports >= 2, `the amp reported the changed zones (${reports} reports)`);
  t.same(zoneEvents(r), [], 'no zone events');
});

t.test('a keypad change whose activity report got lost is still found by the slow safety poll', async (t) => {
  const r = await rig(t);
  await startOnline(r, new Map([[3, ON]]));
  t.ok(r.driver.activityReports);
  r.emulator.activityUpdates = false; // the report for the next change never reaches the driver
  let reports = 0;
  r.emulator.on('report', () => reports++);
  const event = nextEvent(r.driver, isZoneEvent(3), 'zone event for 3');
  const mark = r.emulator.commands.length;
  r.emulator.keypad(3, { volume: 5 });
  t.equal((await event).state.volume, 5 / 38);
  t.equal(reports, 0, 'no report went out');
  t.ok(r.emulator.commands.slice(mark).includes('?3ZD'), 'the poll read the zone');
});

for (const lineEnd of ['', '\r\n', '+\r']) {
  t.test(`replies ending in ${JSON.stringify(lineEnd)} and split across chunks drive and report the same`, async (t) => {
    const r = await rig(t, { emulator: { lineEnd, byteDelayMs: 0.05 }, driver: { ...NO_POLL, commandTimeoutMs: 500 } });
    await startOnline(r, new Map([[1, ON]]));
    t.match(r.emulator.zone(1), { power: true, volume: 13 }, 'desired state applied');
    const event = nextEvent(r.driver, isZoneEvent(1), 'zone event for 1');
    r.emulator.keypad(1, { volume: 30 });
    t.equal((await event).state.volume, 30 / 38, 'a keypad change reported');
    t.same(r.logs.filter((l) => l.includes('timeout on')), [], 'no command timed out');
  });
}

for (const refusal of ['error', 'silent'] as const) {
  t.test(`an amp that refuses zone-activity reports (${refusal}) is polled, and a keypad change is found`, async (t) => {
    const r = await rig(t, { emulator: { refuseActivityUpdates: refusal } });
    await startOnline(r, new Map([[1, ON]]));
    t.notOk(r.driver.activityReports, 'the driver polls');
    t.notOk(r.emulator.activityUpdates);
    const event = nextEvent(r.driver, isZoneEvent(1), 'zone event for 1');
    r.emulator.keypad(1, { mute: true });
    t.same((await event).state, { ...ON, muted: true });
    await r.observed();
    t.equal(zoneEvents(r).length, 1, 'exactly one event');
    t.ok(r.driver.online, 'a silent refusal did not count as the amp being gone');
  });
}

t.test('activityUpdates off switches reports off on the amp and polls', async (t) => {
  const r = await rig(t, { driver: { activityUpdates: 'off' } });
  r.emulator.activityUpdates = true; // left on by an earlier controller
  await startOnline(r);
  t.ok(r.emulator.commands.includes('!ZA0'));
  t.notOk(r.emulator.activityUpdates);
  await r.observed();
  t.ok(r.emulator.commands.filter((c) => c === '?1ZD').length >= 3, 'zone 1 is polled');
});

t.test('a burst of 100 volume changes sends far fewer volume commands and the last value wins', ALONE, async (t) => {
  const r = await rig(t, { emulator: { byteDelayMs: 1.04 }, driver: { ...NO_POLL, commandTimeoutMs: 500 } });
  await startOnline(r, new Map([[1, ON]]));
  const mark = r.emulator.commands.length;
  for (let i = 1; i <= 100; i++) {
    r.driver.setZone(1, { volume: i / 100 });
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
  }
  await settledWithin(r.driver);
  const volume = r.emulator.commands.slice(mark).filter((c) => c.startsWith('!1VO'));
  t.ok(volume.length >= 1 && volume.length < 50, `${volume.length} volume commands for 100 changes`);
  t.equal(volume.at(-1), '!1VO38', 'the last command carries the last value');
  t.equal(r.emulator.zone(1).volume, 38);
});

t.test('a report on the wire while a set is pending neither reverts the set nor reports the stale value', ALONE, async (t) => {
  // 1.04 ms per byte: the ?1ZD reply takes ~45 ms to arrive, so the set is recorded while the poll is in flight.
  const r = await rig(t, { emulator: { byteDelayMs: 1.04 }, driver: { activityUpdates: 'off', commandTimeoutMs: 500 } });
  await startOnline(r, new Map([[1, ON]]));
  r.emulator.keypad(1, { volume: 25 }); // the next poll carries 25, which differs from what the driver knows (13)
  await r.emulator.waitForCommand((c) => c === '?1ZD');
  r.driver.setZone(1, { volume: 0.5 });
  await settledWithin(r.driver);
  await r.observed();
  t.equal(r.emulator.zone(1).volume, 19, "the user's newer value reached the amp");
  t.equal(r.driver.hardwareState(1)?.volume, 19 / 38, 'and the driver knows it');
  t.same(zoneEvents(r), [], 'the stale 25 was never reported');
});

t.test('a set the amp answers with ERROR is sent again after the zone is read', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await startOnline(r, new Map([[2, ON]]));
  r.emulator.rejectNext((c) => c === '!2VO19');
  const mark = r.emulator.commands.length;
  r.driver.setZone(2, { volume: 0.5 });
  await settledWithin(r.driver);
  t.same(r.emulator.commands.slice(mark), ['!2VO19', '?2ZD', '!2VO19']);
  t.equal(r.emulator.zone(2).volume, 19);
});

t.test('unplugging the adapter goes offline; a change made meanwhile is applied after replug', async (t) => {
  const r = await rig(t);
  await startOnline(r, new Map([[1, ON]]));
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  await r.unplug();
  t.match(await offline, { type: 'status', online: false });
  r.driver.setZone(1, { volume: 0.5, source: 6 });
  await settledWithin(r.driver, 1000);
  t.equal(r.driver.online, false);

  const online = nextEvent(r.driver, isStatus(true), 'status online after replug');
  await r.replug();
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.zone(1), { power: true, volume: 19, source: 6 });
  t.ok(r.emulator.activityUpdates, 'reports are switched on again');
});

t.test('an amp power cycle is recovered without a restart, desired state and reports restored', async (t) => {
  const r = await rig(t, { emulator: { bootMs: 100 } });
  await startOnline(r, new Map([[1, ON]]));
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  r.emulator.powerOff();
  t.match((await offline).detail, /unanswered|not answering/);
  t.notOk(r.emulator.activityUpdates, 'the amp forgot its zone-activity mode');
  r.driver.setZone(1, { source: 5, muted: true });
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  r.emulator.powerOn();
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.zone(1), { power: true, source: 5, mute: true });
  t.ok(r.emulator.activityUpdates, 'reports are switched on again');
  t.ok(r.driver.activityReports);
});

t.test('a slow-booting amp is waited for, then gets the desired state', async (t) => {
  const r = await rig(t, { emulator: { bootMs: 400 } });
  const online = nextEvent(r.driver, isStatus(true), 'status online after boot');
  await r.driver.start(new Map([[7, { power: true, muted: false, volume: 0.25, source: 3 }]]));
  await online;
  await settledWithin(r.driver);
  t.ok(r.logs.some((l) => l.includes('not answering')), 'the first attempts went unanswered');
  t.match(r.emulator.zone(7), { power: true, volume: 10, source: 3 });
});

t.test('a port missing at start is reported offline and used once it appears', async (t) => {
  const r = await rig(t, { deferredPort: true });
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  await r.driver.start(new Map([[4, { power: true, muted: false, volume: 0.25, source: 3 }]]));
  t.match((await offline).detail, /cannot open/);
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  await r.replug();
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.zone(4), { power: true, volume: 10, source: 3 });
});

t.test('the 16-zone (expanded) model describes, reads and drives zones 9..16', async (t) => {
  const r = await rig(t, { emulator: { zones: 16 }, driver: { ...NO_POLL, zones: 16 } });
  t.same(r.driver.describe().zones.map((z) => z.channel), Array.from({ length: 16 }, (_, i) => i + 1));
  await startOnline(r);
  t.ok(r.emulator.commands.includes('?16ZD'), 'zone 16 read at connect');
  r.driver.setZone(16, { power: true, source: 8 });
  await settledWithin(r.driver);
  t.match(r.emulator.zone(16), { power: true, source: 8 });
  const event = nextEvent(r.driver, isZoneEvent(12), 'zone event for 12');
  r.emulator.keypad(12, { power: true });
  t.equal((await event).state.power, true);
});

t.test('the baud rate defaults per model, an explicit one wins, and bad options are refused by name', async (t) => {
  const baud = (options: ConstructorParameters<typeof XantechDriver>[0]): number => new XantechDriver(options).baudRate;
  t.equal(baud({ serialPort: '/dev/null' }), 9600, 'MRC88 by default');
  t.equal(baud({ serialPort: '/dev/null', model: 'mrc88m' }), 19200);
  t.equal(baud({ serialPort: '/dev/null', model: 'mx88' }), 57600);
  t.equal(baud({ serialPort: '/dev/null', model: 'mx88', baudRate: 9600 }), 9600);
  t.throws(() => new XantechDriver({ serialPort: '/dev/null', model: 'mrc99' as never }), /unknown xantech model "mrc99"/);
  t.throws(() => new XantechDriver({ serialPort: '/dev/null', zones: 12 as never }), /must be 8 or 16/);
  t.throws(() => createXantechDriver({}), /needs "serialPort"/, 'the factory names the missing port');
  t.throws(() => new XantechDriver({ serialPort: 'tcp://adapter' }), /not a valid network serial port/);
  t.throws(() => new XantechDriver({ serialPort: '/dev/null', activityUpdates: 'on' as never }), /"auto" or "off"/);
});

t.test('garbage on the line does not stop the driver', async (t) => {
  const r = await rig(t, {
    emulator: { garbleRate: 0.03, dropRate: 0.01, seed: 42 },
    driver: { offlineAfterTimeouts: 1000, activityUpdates: 'off' },
  });
  await r.driver.start(new Map([[1, ON]]));
  await nextEvent(r.driver, isStatus(true), 'status online through the noise');
  r.emulator.injectNoise(Buffer.from([0x00, 0xff, 0x0a, 0x23, 0x3f, 0x2b, 0x0d]));
  r.emulator.injectNoise('ERROR\rOK\r#1ZS PR1 SS1 VO1');
  r.driver.setZone(2, { power: true });
  await r.observed();
  await r.observed();
  r.emulator.garbleRate = 0;
  r.emulator.dropRate = 0;
  // A garbled digit can still form a valid-looking report; two clean polls replace whatever was learned from it.
  await r.observed();
  await r.observed();
  r.driver.setZone(1, { power: true, volume: 0.5, source: 4 });
  await settledWithin(r.driver);
  t.ok(r.driver.online, 'still online');
  t.match(r.emulator.zone(1), { power: true, volume: 19, source: 4 });
});
