// Monoprice polling by attention: three units at 9600 baud on a hand-driven clock. Watched (or just after a write or a
// keypad change), every zone is read on its own about every WATCHED_POLL_MS; nobody watching, each unit is read whole
// at the idle interval; a write waits behind one short read at most while watched.
import t, { type Test } from 'tap';
import { ACTIVITY_MS } from '../../drivers/core/work-loop.js';
import type { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MONOPRICE_DEFAULTS, WATCHED_POLL_MS } from '../../drivers/monoprice/driver.js';
import type { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { isZoneEvent, nextEvent } from './events.js';
import { type MemoryRig, onNextCommand } from './memory-rig.js';
import { ON, rig } from './monoprice-rig.js';

type Rig = MemoryRig<MonopriceDriver, MonopriceEmulator>;

const ZONES = [11, 12, 13, 14, 15, 16, 21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36];
/** One exchange at 9600 baud: a whole unit's reply (~180 bytes) and the gap, with room to spare. */
const ONE_UNIT_READ_MS = 250;

async function threeUnits(t: Test): Promise<Rig> {
  const r = await rig(t, { emulator: { units: 3, byteDelayMs: 1.04 }, driver: { ...MONOPRICE_DEFAULTS } });
  await r.startWith(ZONES.map((zone) => [zone, ON]));
  return r;
}

const isRead = (command: string): boolean => command.startsWith('?');
const now = (r: Rig): number => r.time.clock.now();

t.test(
  'watched, a keypad change made just after its zone was read is reported within the watched interval',
  async (t) => {
    const r = await threeUnits(t);
    r.driver.watching(true);
    // The worst moment: the zone's reply is already on its way, so only the next read of it can show the change.
    let changedAt = 0;
    onNextCommand(
      r.emulator,
      (c) => c === '?25' || c === '?20',
      () => {
        changedAt = now(r);
        r.emulator.keypad(25, { volume: 30 });
      },
    );
    const event = await r.until(nextEvent(r.driver, isZoneEvent(25)), 'the keypad change of zone 25');
    t.equal(event.state.volume, 30 / 38, 'the new volume');
    const waited = now(r) - changedAt;
    t.ok(
      waited <= WATCHED_POLL_MS + ONE_UNIT_READ_MS,
      `reported ${waited} ms after the change (watched interval ${WATCHED_POLL_MS} ms)`,
    );
  },
);

t.test('a client that starts watching brings a poll waiting for the idle interval forward', async (t) => {
  const r = await threeUnits(t);
  const from = now(r);
  r.driver.watching(true);
  await r.commands((c) => c === '?11', 1, 'a watched read of zone 11');
  const waited = now(r) - from;
  t.ok(
    waited <= WATCHED_POLL_MS,
    `zone 11 read ${waited} ms after watching began (idle interval ${MONOPRICE_DEFAULTS.pollIntervalMs} ms)`,
  );
});

t.test('nobody watching, each unit is read whole, the idle interval after the last poll ended', async (t) => {
  const r = await threeUnits(t);
  r.driver.watching(true);
  await r.commands((c) => c === '?11', 1, 'a watched read of zone 11');
  r.driver.watching(false);
  // The watched poll under way ends; from the next one on the poll is idle.
  await r.commands((c) => c === '?30', 1, 'an idle poll of unit 3');
  const mark = r.mark();
  const from = now(r);
  // A poll of three units takes about 0.6 s of line time: three polls fit in three intervals and three seconds, not four.
  await r.time.advance(3 * (MONOPRICE_DEFAULTS.pollIntervalMs + 1000));
  const reads = r.since(mark).filter(isRead);
  t.same(
    reads,
    ['?10', '?20', '?30', '?10', '?20', '?30', '?10', '?20', '?30'],
    `three whole-unit polls in ${now(r) - from} ms`,
  );
});

t.test('a write keeps the watched rate for a while, then the poll slows to the idle interval', async (t) => {
  const r = await threeUnits(t);
  r.driver.setZone(14, { volume: 0.5 });
  await r.settled();
  await r.commands((c) => c === '?36', 2, 'zone by zone polls');
  const mark = r.mark();
  await r.time.advance(ACTIVITY_MS + 2 * MONOPRICE_DEFAULTS.pollIntervalMs);
  const reads = r.since(mark).filter(isRead);
  const lastZoneRead = reads.findLastIndex((c) => !c.endsWith('0'));
  t.ok(lastZoneRead > 0, 'zones read one by one after the write');
  t.same(reads.slice(lastZoneRead + 1).slice(-6), ['?10', '?20', '?30', '?10', '?20', '?30'], 'then whole units again');
  const watchedPolls = reads.filter((c) => c === '?36').length;
  t.ok(
    watchedPolls <= Math.ceil(ACTIVITY_MS / WATCHED_POLL_MS) + 1,
    `${watchedPolls} watched polls in the ${ACTIVITY_MS} ms after the write`,
  );
});

t.test(
  'watched, a write asked for as a read goes out reaches the wire before the rest of that poll, within 150 ms',
  async (t) => {
    const r = await threeUnits(t);
    r.driver.watching(true);
    await r.commands((c) => c === '?36', 1, 'a watched poll');
    let askedAt = 0;
    const mark = r.mark();
    // Asked for just as a read of unit 2 went out, the worst moment: that whole exchange is still ahead.
    onNextCommand(
      r.emulator,
      (c) => c.startsWith('?2'),
      () => {
        askedAt = now(r);
        r.driver.setZone(31, { volume: 0.25 });
      },
    );
    await r.commands((c) => c.startsWith('<31VO'), 1, 'the write');
    const waited = now(r) - askedAt;
    const after = r.since(mark);
    const read = after.find((c) => c.startsWith('?2'))!;
    t.equal(
      after[after.indexOf(read) + 1]!.slice(0, 5),
      '<31VO',
      `the write follows the read ${read} that was on the line`,
    );
    t.ok(waited <= 150, `on the wire ${waited} ms after it was asked for`);
  },
);
