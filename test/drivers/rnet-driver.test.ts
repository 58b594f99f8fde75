// RNET driver against the emulator on an in-memory line: wire commands, mute, keypads, bus traffic, coalescing,
// faults; production timings (100 ms pacing, 0.5 s request timeout) on a hand-driven clock.
import t from 'tap';
import { keypadKeyFrame } from '../../drivers/rnet/emulator-bus.js';
import { encodeVolume, encodeZonePower, KEY } from '../../drivers/rnet/protocol.js';
import { isAvailability, isStatus, isZoneEvent, nextEvent, zoneEvents } from './events.js';
import { ON, observed, rig, setsSince } from './rnet-rig.js';

/** Polls so rare they never happen during a test: whatever the driver learns then came from the bus. */
const NO_POLL = { pollIntervalMs: 600_000 };

t.test('routing a zone sends power on first, then source and volume, byte for byte', async (t) => {
  const r = await rig(t);
  await r.startWith();
  const mark = r.mark();
  const frames = r.emulator.frames.length;
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await r.settled();
  t.same(setsSince(r, mark), ['power 11 on', 'source 11 2', 'volume 11 25']);
  const sent = r.emulator.frames.slice(frames).filter((f) => f[7] === 0x05); // events, not the reads between them
  t.same(sent[0], encodeZonePower(1, 1, true), 'zone on/off frame as documented');
  t.same(sent[2], encodeVolume(1, 1, 25), 'volume frame as documented');
  t.match(r.emulator.state(11), { power: true, source: 2, volume: 25 });
});

t.test('the mute no read can show is set again at start from what the daemon remembers', async (t) => {
  const r = await rig(t);
  await r.startWith([
    [11, { ...ON, muted: true }],
    [12, ON],
  ]);
  t.same(setsSince(r), ['volume 11 20', 'mute 11', 'volume 12 20'], 'a volume set makes each known, then the toggle');
  t.equal(r.emulator.state(11).muted, true);
  t.same(zoneEvents(r.events), [], 'nothing reported: the controller holds what the daemon remembered');
});

t.test(
  'muting sends the toggle once the mute is known to be off; un-muting sends the volume, never a toggle',
  async (t) => {
    const r = await rig(t);
    await r.startWith([[11, ON]]);
    let mark = r.mark();
    r.driver.setZone(11, { muted: true });
    await r.settled();
    t.same(setsSince(r, mark), ['mute 11'], 'one toggle');
    t.equal(r.emulator.state(11).muted, true);
    mark = r.mark();
    r.driver.setZone(11, { muted: false });
    await r.settled();
    t.same(setsSince(r, mark), ['volume 11 20'], 'the volume set un-mutes');
    t.equal(r.emulator.state(11).muted, false);
  },
);

t.test('a volume change while muted waits for the un-mute instead of un-muting', async (t) => {
  const r = await rig(t);
  await r.startWith([[11, { ...ON, muted: true }]]);
  t.equal(r.emulator.state(11).muted, true);
  const mark = r.mark();
  r.driver.setZone(11, { volume: 0.8 });
  await r.settled();
  t.same(setsSince(r, mark), [], 'still muted: nothing sent');
  t.same(r.driver.hardwareState(11), { ...ON, muted: true });
  r.driver.setZone(11, { muted: false });
  await r.settled();
  t.same(setsSince(r, mark), ['volume 11 40']);
  t.match(r.emulator.state(11), { muted: false, volume: 40 });
});

t.test('after a power cycle the mute the controller forgot is set again', async (t) => {
  const r = await rig(t);
  await r.startWith([[11, { ...ON, muted: true }]]);
  const offline = nextEvent(r.driver, isStatus(false));
  r.emulator.powerOn(10_000); // silent while it boots (longer than a poll and three timeouts), every mute lost
  await r.until(offline, 'offline');
  const mark = r.mark();
  const online = nextEvent(r.driver, isStatus(true));
  await r.until(online, 'online again');
  await r.settled();
  t.same(setsSince(r, mark), ['volume 11 20', 'mute 11'], 'a volume set makes the mute known, then the toggle');
  t.equal(r.emulator.state(11).muted, true);
});

t.test('a wall keypad key heard on the bus becomes a zone event without waiting for a poll', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await r.startWith([[12, ON]]);
  const event = nextEvent(r.driver, isZoneEvent(12));
  r.emulator.press(12, 'volume-up');
  t.same((await r.until(event, 'the keypad event')).state, { ...ON, volume: 21 / 50 });
  t.equal(r.driver.hardwareState(12)?.volume, 21 / 50);
});

t.test('a wall keypad switching a zone on is adopted, and the zone is never switched back off', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await r.startWith([[12, { ...ON, power: false }]]);
  const event = nextEvent(r.driver, isZoneEvent(12));
  r.emulator.keypad(12, { power: true, volume: 40 });
  t.same((await r.until(event, 'the keypad event')).state, { ...ON, volume: 40 / 50 });
  await r.settled();
  await r.time.advance(60_000);
  t.same(setsSince(r), [], 'nothing written');
  t.match(r.emulator.state(12), { power: true, volume: 40 });
});

t.test('a mute toggled at a wall keypad is reported, and a later keypad volume change un-mutes', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await r.startWith([[13, ON]]);
  const muted = nextEvent(r.driver, isZoneEvent(13));
  r.emulator.press(13, 'mute');
  t.same((await r.until(muted, 'the mute event')).state, { ...ON, muted: true });
  const unmuted = nextEvent(r.driver, isZoneEvent(13));
  r.emulator.press(13, 'volume-down');
  t.same((await r.until(unmuted, 'the volume event')).state, { ...ON, muted: false, volume: 19 / 50 });
  t.equal(r.emulator.state(13).muted, false);
});

t.test('a keypad change made just after a write is reported, not taken for a lost write and overwritten', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await r.startWith([[11, ON]]);
  r.emulator.on('command', (c: string) => {
    if (c === 'volume 11 30') r.emulator.press(11, 'volume-up'); // before the driver's read-back of its write
  });
  const mark = r.mark();
  const event = nextEvent(r.driver, isZoneEvent(11));
  r.driver.setZone(11, { volume: 0.6 });
  t.same((await r.until(event, 'the keypad event')).state, { ...ON, volume: 31 / 50 });
  await r.settled();
  t.equal(r.emulator.state(11).volume, 31, 'the keypad value stays');
  t.same(setsSince(r, mark), ['volume 11 30'], 'no second write');
});

t.test('a keypad change the bus did not show is found by the poll', async (t) => {
  const r = await rig(t);
  await r.startWith([[14, ON]]);
  const event = nextEvent(r.driver, isZoneEvent(14));
  r.emulator.keypad(14, { source: 5, volume: 33 }, false);
  t.same((await r.until(event, 'the zone event')).state, { ...ON, source: 5, volume: 33 / 50 });
});

t.test('unsolicited bus traffic is neither taken as a reply nor reported', async (t) => {
  const r = await rig(t, { emulator: { chatterIntervalMs: 30, trafficBeforeReplies: true } });
  await r.startWith([[11, ON]]);
  r.driver.setZone(11, { source: 3, volume: 0.6 });
  r.driver.setZone(12, { power: true, source: 2 });
  await r.settled();
  r.emulator.busTraffic(30);
  await observed(r);
  await observed(r);
  t.match(r.emulator.state(11), { power: true, source: 3, volume: 30 });
  t.match(r.emulator.state(12), { power: true, source: 2 });
  t.same(zoneEvents(r.events), [], 'the replies to another keypad (volume 49) were not taken');
  t.same(r.driver.hardwareState(11), { ...ON, source: 3, volume: 0.6 });
  t.ok(r.driver.online, 'and the driver stayed online');
});

t.test('a set lost on the line is found by the read-back after it and sent again', async (t) => {
  const r = await rig(t, { driver: NO_POLL });
  await r.startWith([[11, ON]]);
  const mark = r.mark();
  r.emulator.loseNext(1);
  r.driver.setZone(11, { volume: 0.7 });
  await r.settled();
  t.same(setsSince(r, mark), ['lost', 'volume 11 35']);
  t.equal(r.emulator.state(11).volume, 35);
  t.same(zoneEvents(r.events), []);
});

t.test(
  'a set the controller keeps losing is given up after three read-backs, reporting the value the zone kept',
  async (t) => {
    const r = await rig(t, { driver: NO_POLL });
    await r.startWith([[11, ON]]);
    r.emulator.loseNext(100);
    const event = nextEvent(r.driver, isZoneEvent(11));
    r.driver.setZone(11, { source: 4 });
    t.equal((await r.until(event, 'the zone event')).state.source, 1, 'the zone kept source 1');
    await r.settled();
    t.equal(setsSince(r).filter((c) => c === 'lost').length, 3, 'three tries');
    t.ok(r.logs.some((l) => l.startsWith('warn') && l.includes('ignored the same change 3 times')));
  },
);

t.test('a controller that goes silent is reported offline and gets the changes made meanwhile once back', async (t) => {
  const r = await rig(t);
  await r.startWith([[11, ON]]);
  const offline = nextEvent(r.driver, isStatus(false));
  r.emulator.setSilent(true);
  t.match((await r.until(offline, 'offline')).detail, /unanswered/);
  r.driver.setZone(11, { source: 5, volume: 0.9 });
  const online = nextEvent(r.driver, isStatus(true));
  r.emulator.setSilent(false);
  await r.until(online, 'online again');
  await r.settled();
  t.match(r.emulator.state(11), { power: true, source: 5, volume: 45 });
});

t.test('a slow-booting controller keeps the driver offline, then receives what was asked meanwhile', async (t) => {
  const r = await rig(t, { emulator: { bootMs: 5000 } });
  const seen: boolean[] = [];
  r.driver.onEvent((e) => {
    if (e.type === 'status') seen.push(e.online);
  });
  r.driver.setZone(15, { power: true, volume: 0.4, source: 4 });
  const online = nextEvent(r.driver, isStatus(true));
  await r.driver.start(new Map());
  await r.until(online, 'online after boot');
  await r.settled();
  t.same(seen, [false, true], 'offline while booting, then online');
  t.match(r.emulator.state(15), { power: true, volume: 20, source: 4 });
});

// A second controller described, driven and its keypads heard: the conformance suite's second-unit case.
t.test('with two controllers, the absent ones after them are asked once', async (t) => {
  const r = await rig(t, { emulator: { controllers: 2 } });
  await r.startWith();
  await r.until(() => r.driver.describe().zones.length === 12, 'controller 2 found');
  await observed(r);
  for (const c of [3, 4, 5, 6])
    t.same(
      r.emulator.commands.filter((x) => x.startsWith(`info ${c}`)),
      [`info ${c}1`],
      `controller ${c} asked once`,
    );
});

t.test(
  'a second controller that stops answering makes its zones unavailable, and holds up neither the line nor controller 1',
  async (t) => {
    const r = await rig(t, { emulator: { controllers: 2 } });
    await r.startWith();
    await r.until(() => r.driver.describe().zones.length === 12, 'controller 2 found');
    r.emulator.controllers = 1; // controller 2 powered off
    await r.until(nextEvent(r.driver, isAvailability(22, false)), 'zone 22 unavailable');
    const mark = r.mark();
    r.driver.setZone(22, { power: true, source: 2 });
    r.driver.setZone(11, { power: true, source: 3 });
    await r.settled();
    t.match(r.emulator.state(11), { power: true, source: 3 }, 'controller 1 is driven');
    t.same(
      setsSince(r, mark).filter((c) => / 2\d( |$)/.test(c)),
      [],
      'nothing was sent to controller 2',
    );
    t.ok(r.driver.online, 'the driver stays online');
    r.emulator.controllers = 2; // back: the poll finds it and reads it
    await r.until(nextEvent(r.driver, isAvailability(22, true)), 'zone 22 available again');
    r.driver.setZone(22, { power: true, source: 2 });
    await r.settled();
    t.match(r.emulator.state(22), { power: true, source: 2 });
  },
);

t.test(
  'a controller whose checksums never match the documented formula is still driven, and its keypads heard',
  async (t) => {
    const r = await rig(t, { emulator: { wrongChecksums: true }, driver: NO_POLL });
    await r.startWith([[11, ON]]);
    r.driver.setZone(11, { source: 3 });
    await r.settled();
    t.equal(r.emulator.state(11).source, 3, 'driven: the replies to its reads were taken');
    const event = nextEvent(r.driver, isZoneEvent(11));
    r.emulator.press(11, 'volume-up');
    t.equal((await r.until(event, 'the keypad event')).state.volume, 21 / 50);
    t.ok(
      r.logs.some((l) => l.includes('checksums that do not match')),
      'and the driver said so once',
    );
  },
);

t.test(
  'once the controller has sent a right checksum, a frame with a wrong one is dropped as line noise',
  async (t) => {
    const r = await rig(t, { driver: NO_POLL });
    await r.startWith([[12, ON]]);
    const key = keypadKeyFrame(12, KEY.volumeUp);
    const garbled = Buffer.from(key);
    garbled[garbled.length - 2] = (garbled[garbled.length - 2]! + 1) & 0x7f;
    const reads = () => r.emulator.commands.filter((c) => c === 'info 12').length;
    const before = reads();
    r.emulator.injectNoise(garbled);
    await r.time.advance(1000);
    t.equal(reads(), before, 'the keypad frame with a wrong checksum made no read');
    r.emulator.injectNoise(key);
    await r.until(() => reads() > before, 'the read the right frame asks for');
    t.ok(r.logs.some((l) => l.includes('dropped a frame with a bad checksum')));
  },
);
