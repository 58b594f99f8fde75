// The Monoprice driver end to end through the real serialport on a socat pseudo-terminal, in real time: wire commands,
// a keypad change, the adapter unplugged and plugged back, and a port that appears after start. Everything else about
// the driver runs on the in-memory line (monoprice-driver.test.ts and the others).
import t from 'tap';
import { within } from '../helpers/wait-for.js';
import { isStatus, isZoneEvent, nextEventWithin } from './events.js';
import { ON, ptyRig, toKeypad } from './monoprice-rig.js';
import { startOnline } from './serial-rig.js';

// Three units: every probe is answered, so no test waits for a timeout.
const UNITS = { units: 3 };

t.test('over a real serial port, a zone is routed power first and a keypad change becomes one event', async (t) => {
  const r = await ptyRig(t, { emulator: UNITS });
  r.emulator.keypad(12, toKeypad(ON));
  await startOnline(r, new Map([[12, ON]]));
  const mark = r.emulator.commands.length;
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.same(r.emulator.commands.slice(mark).filter((c) => c.startsWith('<')), ['<11PR01', '<11CH02', '<11VO19']);
  const event = nextEventWithin(r.driver, isZoneEvent(12), 'the keypad event');
  r.emulator.keypad(12, { volume: 30 });
  t.equal((await event).state.volume, 30 / 38);
});

t.test('over a real serial port, the adapter unplugged goes offline and, plugged back, gets the change made meanwhile', async (t) => {
  const r = await ptyRig(t, { emulator: UNITS });
  r.emulator.keypad(11, toKeypad(ON));
  await startOnline(r, new Map([[11, ON]]));
  const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
  await r.unplug();
  t.match((await offline).detail, /closed|unplugged|EIO/); // a write may fail before the close is seen
  r.driver.setZone(11, { volume: 0.5, source: 6 });
  const online = nextEventWithin(r.driver, isStatus(true), 'status online after replug');
  await r.replug();
  await online;
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.match(r.emulator.state(11), { power: true, volume: 19, source: 6 });
});

t.test('over a real serial port, a port missing at start is reported offline and used once it appears', async (t) => {
  const r = await ptyRig(t, { emulator: UNITS, deferredPort: true });
  const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
  await r.driver.start(new Map());
  t.match((await offline).detail, /cannot open/);
  r.driver.setZone(14, { power: true, volume: 0.25, source: 3 });
  const online = nextEventWithin(r.driver, isStatus(true), 'status online');
  await r.replug();
  await online;
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.match(r.emulator.state(14), { power: true, volume: 10, source: 3 });
});
