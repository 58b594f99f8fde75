// The RNET driver end to end through the real serialport on a socat pseudo-terminal, in real time: a zone driven and
// a wall keypad heard on the bus, the adapter unplugged and plugged back. Everything else about the driver runs on the
// in-memory line (rnet-driver.test.ts and the others).
import t from 'tap';
import { within } from '../helpers/wait-for.js';
import { isStatus, isZoneEvent, nextEventWithin } from './events.js';
import { ON, ptyRig, toEmulated } from './rnet-rig.js';
import { startOnline } from './serial-rig.js';

// Every controller on the bus answers, so no probe waits for a timeout.
const CONTROLLERS = { controllers: 6 };

t.test('over a real serial port, a zone is routed power first and a wall keypad key becomes one event', async (t) => {
  const r = await ptyRig(t, { emulator: CONTROLLERS });
  await startOnline(r);
  const mark = r.emulator.commands.length;
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.same(r.emulator.commands.slice(mark).filter((c) => !c.startsWith('info')), ['power 11 on', 'source 11 2', 'volume 11 25']);
  const event = nextEventWithin(r.driver, isZoneEvent(11), 'the keypad event');
  r.emulator.press(11, 'volume-up');
  t.equal((await event).state.volume, 26 / 50);
});

t.test('over a real serial port, the adapter unplugged goes offline and, plugged back, gets the change made meanwhile', async (t) => {
  const r = await ptyRig(t, { emulator: CONTROLLERS });
  r.emulator.keypad(11, toEmulated(ON));
  await startOnline(r, new Map([[11, ON]]));
  const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
  await r.unplug();
  t.match((await offline).detail, /closed|unplugged|EIO/); // a write may fail before the close is seen
  r.driver.setZone(11, { volume: 0.9, source: 5 });
  const online = nextEventWithin(r.driver, isStatus(true), 'status online after replug');
  await r.replug();
  await online;
  await within(r.driver.settled(), undefined, 'the driver to settle');
  t.match(r.emulator.state(11), { power: true, volume: 45, source: 5 });
});
