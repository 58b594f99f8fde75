// The audio capability's primitives under scenes, sleep timers and restore, without HTTP: the pop-free apply and its
// queue, zone states, sleep state, and reload.

import type { Test } from 'tap';
import t from 'tap';
import { Amplifiers, type ZoneTarget } from '../../daemon/domain/audio/index.js';
import { asWriter, type Caller, DomainError } from '../../daemon/domain/shared/index.js';
import type { ZoneState } from '../../drivers/driver.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { admin, audioRig } from '../helpers/audio-rig.js';

/** The tone a zone of the simulated amplifier starts with, which a capture includes. */
const FLAT = { bass: 0, treble: 0, balance: 0, loudness: false };

/** A simulated amplifier that records every command with the state commanded so far, to check what a zone heard. */
class RecordingDriver extends SimulatedDriver {
  readonly commanded = new Map<number, Partial<ZoneState>>();
  /** Source or volume commands sent to a zone that was on and not muted at that moment. */
  readonly audible: Array<{ channel: number; change: Partial<ZoneState> }> = [];
  recording = false;

  override setZone(channel: number, change: Partial<ZoneState>): void {
    const state = { ...this.commanded.get(channel), ...change };
    if (this.recording && (change.source !== undefined || change.volume !== undefined) && state.power && !state.muted)
      this.audible.push({ channel, change });
    this.commanded.set(channel, state);
    super.setZone(channel, change);
  }
}

async function setup(t: Test) {
  const { store, audio, driver, events } = await audioRig(t, {
    driver: new RecordingDriver({ applyDelayMs: 1 }),
    busCapacity: 256,
  });
  const zones = audio.zones.list(admin);
  const zone = (index: number) => audio.zones.get(admin, zones[index]!.id);
  // What the amplifier was last told, per zone, starts from the stored state.
  for (const z of zones) driver.commanded.set(z.output.channel, { power: z.power, muted: z.muted, volume: z.volume });
  return { store, audio, driver, events, zones, zone };
}

/** The kind of DomainError a call fails with ('none' when it does not). */
async function failure(done: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof done === 'function' ? done() : done);
    return 'none';
  } catch (err) {
    return err instanceof DomainError ? err.kind : String(err);
  }
}

const operator = (zoneIds: string[], role: Caller['role'] = 'Operator'): Caller => ({
  ...admin,
  userId: 'o',
  username: 'o',
  role,
  zoneIds: new Set(zoneIds),
});

t.test(
  'an apply changes zones without a source or volume command ever reaching a zone that plays unmuted',
  async (t) => {
    const { audio, driver, zones, zone } = await setup(t);
    const p1 = audio.players.create(admin, { name: 'One', input: { channel: 1 } });
    const p2 = audio.players.create(admin, { name: 'Two', input: { channel: 2 } });
    audio.players.attachZones(admin, p1.id, [zones[0]!.id, zones[2]!.id]);
    await audio.zones.setVolume(admin, zones[0]!.id, 0.2);
    await driver.settled();
    driver.recording = true;
    const targets: ZoneTarget[] = [
      { zoneId: zones[0]!.id, power: true, volume: 0.6, muted: false, playerId: p2.id },
      { zoneId: zones[1]!.id, power: true, volume: 0.4, muted: false, playerId: p2.id },
      { zoneId: zones[2]!.id, power: false, volume: 0.1, muted: false, playerId: null },
    ];
    const { changed } = await audio.zoneStates.apply(admin, targets);
    t.same(
      [...changed].sort(),
      zones
        .slice(0, 3)
        .map((z) => z.id)
        .sort(),
    );
    t.same(driver.audible, [], 'every source and volume command reached a muted (or off) zone');
    t.match(zone(0), { power: true, muted: false, volume: 0.6, playerId: p2.id });
    t.match(zone(1), { power: true, muted: false, volume: 0.4, playerId: p2.id });
    t.match(zone(2), { power: false, playerId: null });
    await driver.settled();
    t.match(driver.hardwareState(1), { power: true, muted: false, source: 2 });
    t.match(driver.hardwareState(2), { power: true, muted: false, source: 2 });
    t.match(driver.hardwareState(3), { power: false });
    t.same(audio.players.get(admin, p2.id).zoneIds.sort(), [zones[0]!.id, zones[1]!.id].sort());
  },
);

t.test('without the muting phase the recorder would catch an audible change', async (t) => {
  // The check above is only worth something if a plain change to a playing zone trips it.
  const { audio, driver, zones } = await setup(t);
  await audio.zones.setPower(admin, zones[0]!.id, true);
  await audio.zones.setMuted(admin, zones[0]!.id, false);
  driver.recording = true;
  await audio.zones.setVolume(admin, zones[0]!.id, 0.5);
  t.equal(driver.audible.length, 1);
});

t.test('applies run one at a time: the second starts only when the first has stored its result', async (t) => {
  const { audio, zones, events } = await setup(t);
  const order: string[] = [];
  const first = audio.zoneStates.apply(admin, [
    { zoneId: zones[0]!.id, power: true, volume: 0.3, muted: false, playerId: null },
  ]);
  const second = audio.zoneStates.apply(
    admin,
    [{ zoneId: zones[0]!.id, power: true, volume: 0.5, muted: true, playerId: null }],
    {
      beforeApply: (current) => {
        if (events.some((e) => e.type === 'zone.volumeChanged' && e.payload.volume === 0.3)) order.push('first stored');
        order.push('second starts');
        t.match(
          current,
          [{ zoneId: zones[0]!.id, power: true, volume: 0.3, muted: false }],
          'and sees what the first left',
        );
      },
    },
  );
  await Promise.all([first, second]);
  t.same(order, ['first stored', 'second starts']);
  t.match(audio.zones.get(admin, zones[0]!.id), { volume: 0.5, muted: true });
});

t.test('beforeApply gets the state being replaced, and throwing from it changes nothing', async (t) => {
  const { audio, zones, zone } = await setup(t);
  await audio.zones.setVolume(admin, zones[0]!.id, 0.25);
  let saved: ZoneTarget[] = [];
  await audio.zoneStates.apply(
    admin,
    [{ zoneId: zones[0]!.id, power: true, volume: 0.7, muted: false, playerId: null }],
    { beforeApply: (c) => (saved = c) },
  );
  t.same(saved, [{ zoneId: zones[0]!.id, power: false, volume: 0.25, muted: false, playerId: null, tone: FLAT }]);
  const aborted = audio.zoneStates.apply(
    admin,
    [{ zoneId: zones[0]!.id, power: false, volume: 0.1, muted: true, playerId: null }],
    {
      beforeApply: () => {
        throw new DomainError('conflict', 'nothing to undo');
      },
    },
  );
  t.equal(await failure(aborted), 'conflict');
  t.match(zone(0), { power: true, volume: 0.7, muted: false });
  // The queue goes on after a failed apply.
  t.same(
    (
      await audio.zoneStates.apply(admin, [
        { zoneId: zones[0]!.id, power: true, volume: 0.7, muted: false, playerId: null },
      ])
    ).changed,
    [],
  );
});

// A Viewer never reaches an apply: it takes a Writer, which the operation calling it checked (scenes; policy.test.ts).
t.test(
  'an apply is refused whole, before anything changes, for a zone the caller cannot see or a bad volume',
  async (t) => {
    const { audio, zones, zone } = await setup(t);
    const target = (index: number, volume = 0.5): ZoneTarget => ({
      zoneId: zones[index]!.id,
      power: true,
      volume,
      muted: false,
      playerId: null,
    });
    t.equal(
      await failure(audio.zoneStates.apply(asWriter(operator([zones[0]!.id])), [target(0), target(1)])),
      'not-found',
    );
    t.equal(await failure(audio.zoneStates.apply(admin, [target(0), target(1, 1.5)])), 'invalid');
    t.equal(await failure(audio.zoneStates.apply(admin, [target(0), target(0)])), 'invalid');
    t.match(zone(0), { power: false });
    t.match(zone(1), { power: false });
  },
);

t.test('a deleted player in a target means detached', async (t) => {
  const { audio, zones, zone } = await setup(t);
  const p = audio.players.create(admin, { name: 'Gone', input: { channel: 3 } });
  audio.players.attachZones(admin, p.id, [zones[0]!.id]);
  audio.players.remove(admin, p.id);
  await audio.zoneStates.apply(admin, [
    { zoneId: zones[0]!.id, power: true, volume: 0.5, muted: false, playerId: p.id },
  ]);
  t.match(zone(0), { playerId: null, power: true });
});

t.test('a capture reports every visible zone, or the ones named; unknown ids are a 400 naming them', async (t) => {
  const { audio, zones } = await setup(t);
  t.equal(audio.zoneStates.capture(admin).length, 6);
  t.same(
    audio.zoneStates.capture(operator([zones[1]!.id])).map((s) => s.zoneId),
    [zones[1]!.id],
  );
  t.same(audio.zoneStates.capture(admin, [zones[2]!.id]), [
    { zoneId: zones[2]!.id, power: false, volume: zones[2]!.volume, muted: false, playerId: null, tone: FLAT },
  ]);
  t.throws(
    () => audio.zoneStates.capture(operator([zones[1]!.id]), [zones[0]!.id]),
    new RegExp(`unknown zone ids: ${zones[0]!.id}`),
  );
});

t.test(
  'a sleep timer is set only on a zone that is on, ends when it fires or the zone goes off, and is listed',
  async (t) => {
    const { audio, zones, events, zone } = await setup(t);
    const id = zones[0]!.id;
    t.equal(
      await failure(() => audio.zoneSleep.set(admin, id, Date.now() + 60_000)),
      'conflict',
      'an off zone gets no timer',
    );
    await audio.zones.setPower(admin, id, true);
    const until = Date.now() + 60_000;
    t.equal(audio.zoneSleep.set(admin, id, until).sleepUntil, new Date(until).toISOString());
    t.same(audio.zoneSleep.timers(), [{ zoneId: id, sleepUntil: until }]);
    t.same(events.at(-1)?.payload, { zoneId: id, sleepUntil: new Date(until).toISOString() });
    audio.zoneSleep.expired(id, until - 1);
    t.equal(zone(0).power, true, 'not yet due');
    audio.zoneSleep.expired(id, until);
    t.match(zone(0), { power: false, sleepUntil: null });
    t.same(audio.zoneSleep.timers(), []);
    t.ok(events.some((e) => e.type === 'zone.sleepChanged' && e.payload.sleepUntil === null));
    await audio.zones.setPower(admin, id, true);
    audio.zoneSleep.set(admin, id, until);
    await audio.zones.setPower(admin, id, false);
    t.equal(zone(0).sleepUntil, null, 'powering off ends the timer');
    t.equal(await failure(() => audio.zoneSleep.set(operator([zones[1]!.id]), id, null)), 'not-found');
  },
);

t.test('reload rereads the zones and hands every stored state to the amplifier', async (t) => {
  const { store, audio, driver, zones } = await setup(t);
  // What a restore does underneath the service.
  store.db.prepare('UPDATE zones SET power = 1, volume = ?, max_volume = ? WHERE id = ?').run(0.5, 0.6, zones[3]!.id);
  audio.hardware.reload();
  t.match(audio.zones.get(admin, zones[3]!.id), { power: true, volume: 0.5, maxVolume: 0.6 });
  await driver.settled();
  t.match(driver.hardwareState(4), { power: true, volume: Math.round(0.5 * 38) / 38 });
});

t.test('reload lowers a stored volume above its limit before the amplifier plays it', async (t) => {
  const { store, audio, driver, zones } = await setup(t);
  store.db.prepare('UPDATE zones SET power = 1, volume = 0.9, max_volume = 0.4 WHERE id = ?').run(zones[2]!.id);
  audio.hardware.reload();
  t.equal(audio.zones.get(admin, zones[2]!.id).volume, 0.4);
  await driver.settled();
  t.equal(driver.hardwareState(3)!.volume, Math.round(0.4 * 38) / 38);
});

t.test('a target routing a zone to a player of another amplifier is a 400 that changes nothing', async (t) => {
  const amplifiers = new Amplifiers([
    { name: 'Main', key: 'main', driver: new SimulatedDriver({ applyDelayMs: 1 }) },
    { name: 'Attic', key: 'attic', driver: new SimulatedDriver({ applyDelayMs: 1 }) },
  ]);
  const { audio } = await audioRig(t, { amplifiers });
  const zone = audio.zones.list(admin).find((z) => z.output.amplifier === 'Main')!;
  const attic = audio.players.create(admin, { name: 'Attic streamer', input: { amplifier: 'Attic', channel: 1 } });
  t.equal(
    await failure(
      audio.zoneStates.apply(admin, [{ zoneId: zone.id, power: true, volume: 0.5, muted: false, playerId: attic.id }]),
    ),
    'invalid',
  );
  t.match(audio.zones.get(admin, zone.id), { power: false, playerId: null });
});
