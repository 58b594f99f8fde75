// Monoprice driver against the emulator over a real pty: wire commands, polling, coalescing and every fault.
import t from 'tap';
import type { DriverEvent } from '../../drivers/driver.js';
import { ALONE, concurrently } from '../helpers/concurrency.js';
import { isStatus, isZoneEvent, nextEvent, settledWithin } from './conformance.js';
import { ON, rig, startOnline } from './monoprice-rig.js';
import { sameSets } from './serial-rig.js';

// Every test builds its own pty, emulator and driver and mostly waits on the emulated line: a few run at once.
// ALONE: tests paced against the emulated baud rate, and one that counts the process's timers.
concurrently(t);

t.test('routing a zone sends power on first, then source and volume', async (t) => {
  const r = await rig(t);
  await startOnline(r);
  const mark = r.emulator.commands.length;
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await settledWithin(r.driver);
  const sent = r.emulator.commands.slice(mark).filter((c) => c.startsWith('<'));
  sameSets(t, r, sent, ['<11PR01', '<11CH02', '<11VO19'], 'PR01 before the sets an off zone would ignore');
  t.match(r.emulator.state(11), { power: true, source: 2, volume: 19 });
});

t.test('a change to a zone that stays off waits until the zone is powered on', async (t) => {
  const r = await rig(t);
  await startOnline(r);
  r.driver.setZone(12, { volume: 0.5 });
  await settledWithin(r.driver);
  t.notOk(r.emulator.commands.some((c) => c.startsWith('<12VO')), 'no volume command to an off zone');
  r.driver.setZone(12, { power: true });
  await settledWithin(r.driver);
  const sent = r.emulator.commands.filter((c) => c.startsWith('<12'));
  sameSets(t, r, sent, ['<12PR01', '<12VO19'], 'the deferred volume follows power on');
  t.equal(r.emulator.state(12).volume, 19);
});

t.test('turning a zone off sends its other changes first and PR00 last', async (t) => {
  const r = await rig(t);
  await startOnline(r, new Map([[13, ON]]));
  const mark = r.emulator.commands.length;
  r.driver.setZone(13, { power: false, muted: true });
  await settledWithin(r.driver);
  t.same(r.emulator.commands.slice(mark).filter((c) => c.startsWith('<')), ['<13MU01', '<13PR00']);
  t.match(r.emulator.state(13), { power: false, mute: true });
});

t.test('a keypad change becomes one zone event; LS flapping, PA, DND, treble and bass do not', async (t) => {
  const r = await rig(t, { emulator: { flapKeypadConnected: true } });
  await startOnline(r, new Map([[11, ON]]));
  r.emulator.keypad(11, { treble: 3, bass: 9, balance: 2, pa: true, dnd: true });
  await r.observed();
  t.same(r.events.filter((e) => e.type === 'zone'), [], 'no events for fields a ZoneState does not carry');
  const event = nextEvent(r.driver, isZoneEvent(11), 'zone event for 11');
  r.emulator.keypad(11, { volume: 30, mute: true });
  t.same((await event).state, { power: true, muted: true, volume: 30 / 38, source: 1 });
  await r.observed();
  t.equal(r.events.filter((e) => e.type === 'zone').length, 1, 'exactly one event');
});

t.test('a burst of 100 volume changes sends far fewer volume commands and the last value wins', ALONE, async (t) => {
  const r = await rig(t, { emulator: { byteDelayMs: 1.04 }, driver: { commandTimeoutMs: 500 } });
  await startOnline(r, new Map([[11, ON]]));
  const mark = r.emulator.commands.length;
  // A slider drag: one change every ~2 ms, so the driver writes while the drag is still going on.
  for (let i = 1; i <= 100; i++) {
    r.driver.setZone(11, { volume: i / 100 });
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
  }
  await settledWithin(r.driver);
  const volumeCommands = r.emulator.commands.slice(mark).filter((c) => c.startsWith('<11VO'));
  t.ok(volumeCommands.length >= 1 && volumeCommands.length < 50, `${volumeCommands.length} volume commands for 100 changes`);
  t.equal(volumeCommands.at(-1), '<11VO38', 'the last command carries the last value');
  t.equal(r.emulator.state(11).volume, 38);
});

t.test('a poll on the wire while a set is pending neither reverts the set nor reports it', ALONE, async (t) => {
  // 1.04 ms per byte: the ?10 reply takes ~170 ms to arrive, so the set is recorded while the poll is in flight.
  const r = await rig(t, { emulator: { byteDelayMs: 1.04 }, driver: { commandTimeoutMs: 500 } });
  await startOnline(r, new Map([[11, ON]]));
  r.emulator.keypad(11, { volume: 25 }); // the poll now carries 25, which differs from what the driver knows (13)
  await r.emulator.waitForCommand((c) => c === '?10');
  r.driver.setZone(11, { volume: 0.5 });
  await settledWithin(r.driver);
  await r.observed();
  t.equal(r.emulator.state(11).volume, 19, 'the user\'s newer value reached the amp');
  t.equal(r.driver.hardwareState(11)?.volume, 19 / 38, 'and the driver knows it');
  const reported = r.events.filter((e) => e.type === 'zone' && e.state.volume === 25 / 38);
  t.same(reported, [], 'the stale 25 was never reported');
});

t.test('unplugging the adapter goes offline; a change made meanwhile is applied after replug', async (t) => {
  const r = await rig(t);
  await startOnline(r, new Map([[11, ON]]));
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  await r.unplug();
  t.match(await offline, { type: 'status', online: false });
  r.driver.setZone(11, { volume: 0.5, source: 6 });
  await settledWithin(r.driver, 1000); // offline: settles at once rather than waiting for the port
  t.equal(r.driver.online, false);

  const online = nextEvent(r.driver, isStatus(true), 'status online after replug');
  await r.replug();
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.state(11), { power: true, volume: 19, source: 6 });
});

t.test('a port missing at start is reported offline and used once it appears', async (t) => {
  const r = await rig(t, { deferredPort: true });
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  await r.driver.start(new Map([[14, { power: true, muted: false, volume: 0.25, source: 3 }]]));
  t.match((await offline).detail, /cannot open/);
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  await r.replug();
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.state(14), { power: true, volume: 10, source: 3 });
});

t.test('stopping while waiting to reconnect leaves no timers', ALONE, async (t) => {
  const r = await rig(t, { deferredPort: true });
  const before = process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  await r.driver.start(new Map());
  await offline;
  await r.driver.stop();
  t.ok(process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length <= before);
});

t.test('absent slave units are probed once and never polled', async (t) => {
  const r = await rig(t, { emulator: { units: 1 } });
  await startOnline(r);
  await r.observed();
  await r.observed();
  const slaves = r.emulator.commands.filter((c) => /^[?<][23]/.test(c));
  t.same(slaves, ['?20', '?30'], 'one probe each, then silence');
  t.equal(r.driver.describe().zones.length, 6);
  t.same(r.events.filter((e) => e.type === 'described'), [], 'the description did not change');
});

t.test('a fitted slave unit is described, polled and driven', async (t) => {
  const r = await rig(t, { emulator: { units: 2 } });
  const described = nextEvent(r.driver, (e): e is Extract<DriverEvent, { type: 'described' }> => e.type === 'described', 'described');
  await startOnline(r);
  t.same((await described).description.zones.map((z) => z.channel), [11, 12, 13, 14, 15, 16, 21, 22, 23, 24, 25, 26]);
  r.driver.setZone(23, { power: true, source: 5 });
  await settledWithin(r.driver);
  t.match(r.emulator.state(23), { power: true, source: 5 });
  await r.emulator.waitForCommand((c) => c === '?20');
  t.equal(r.emulator.commands.filter((c) => c === '?30').length, 1, 'unit 3 only probed');
});

t.test('a silent amplifier goes offline after timeouts and comes back with the desired state', async (t) => {
  const r = await rig(t);
  await startOnline(r, new Map([[11, ON]]));
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  r.emulator.setSilent(true);
  t.match((await offline).detail, /unanswered|not answering/);
  r.driver.setZone(11, { source: 5, muted: true });
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  r.emulator.setSilent(false);
  await online;
  await settledWithin(r.driver);
  t.match(r.emulator.state(11), { power: true, source: 5, mute: true });
});

t.test('garbage on the line does not stop the driver', async (t) => {
  // Offline detection is not under test here: keep the link up through the noise and check it recovers.
  const r = await rig(t, { emulator: { garbleRate: 0.03, dropRate: 0.01, seed: 42 }, driver: { offlineAfterTimeouts: 1000 } });
  await r.driver.start(new Map([[11, ON]]));
  await nextEvent(r.driver, isStatus(true), 'status online through the noise');
  r.emulator.injectNoise(Buffer.from([0x00, 0xff, 0x0a, 0x23, 0x3e, 0x31, 0x31, 0x0d, 0x0a, 0x23]));
  r.emulator.injectNoise('\r\nCommand Error.\r\n#>1100010000131112100401\r\n#');
  r.driver.setZone(12, { power: true });
  await r.observed();
  await r.observed();
  r.emulator.garbleRate = 0;
  r.emulator.dropRate = 0;
  r.emulator.injectNoise('\x1b[2J garbage without a prompt');
  // A garbled digit can still form a valid-looking line, which the driver must take for a keypad change.
  // Two clean polls replace whatever it learned during the noise before the change under test.
  await r.observed();
  await r.observed();
  r.driver.setZone(11, { power: true, volume: 0.5, source: 4 });
  await settledWithin(r.driver);
  t.ok(r.driver.online, 'still online');
  t.match(r.emulator.state(11), { power: true, volume: 19, source: 4 });
});
