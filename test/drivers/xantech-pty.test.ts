// The Xantech driver end to end through the real serialport on a socat pseudo-terminal, in real time: a zone driven
// and a keypad's activity report heard, the adapter unplugged and plugged back. Everything else about the driver runs
// on the in-memory line (xantech-driver.test.ts and the others).
import t from 'tap';
import { within } from '../helpers/wait-for.js';
import { isStatus, isZoneEvent, nextEventWithin } from './events.js';
import { ON, ptyRig, toKeypad } from './xantech-rig.js';
import { startOnline } from './serial-rig.js';

t.test('over a real serial port, a zone is routed power first and a keypad change arrives as one event', async (t) => {
  const r = await ptyRig(t);
  await startOnline(r);
  const mark = r.emulator.commands.length;
  r.driver.setZone(3, { power: true, source: 2, volume: 0.5 });
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.same(r.emulator.commands.slice(mark).filter((c) => c.startsWith('!')), ['!3PR1', '!3SS2', '!3VO19']);
  const event = nextEventWithin(r.driver, isZoneEvent(3), 'the keypad event');
  r.emulator.keypad(3, { volume: 30 });
  t.equal((await event).state.volume, 30 / 38);
});

t.test('over a real serial port, the adapter unplugged goes offline and, plugged back, gets the change made meanwhile', async (t) => {
  const r = await ptyRig(t);
  r.emulator.keypad(1, toKeypad(ON));
  await startOnline(r, new Map([[1, ON]]));
  const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
  await r.unplug();
  t.match((await offline).detail, /closed|unplugged|EIO/); // a write may fail before the close is seen
  r.driver.setZone(1, { volume: 0.5, source: 6 });
  const online = nextEventWithin(r.driver, isStatus(true), 'status online after replug');
  await r.replug();
  await online;
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.match(r.emulator.zone(1), { power: true, volume: 19, source: 6 });
  t.ok(r.emulator.activityUpdates, 'reports are switched on again');
});
