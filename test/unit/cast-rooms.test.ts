// The rooms that wake for a cast, on the audio services with a simulated amplifier and a hand-driven clock: which
// zones a cast wakes and how, and when the zones it woke power off after it ends.
import type { Test } from 'tap';
import t from 'tap';
import { CastRooms } from '../../daemon/domain/playback/cast-rooms.js';
import type { Caller } from '../../daemon/domain/shared/index.js';
import { CastSettingsRepo } from '../../daemon/store/cast-settings-repo.js';
import { admin, audioRig } from '../helpers/audio-rig.js';
import { ManualClock } from '../helpers/manual-clock.js';

const MINUTE = 60_000;

const silent = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};

async function roomsRig(t: Test) {
  const rig = await audioRig(t);
  const { audio, store, repo, bus } = rig;
  const clock = new ManualClock();
  const player = audio.players.create(admin, {
    name: 'Kitchen',
    input: { channel: 1 },
    output: { kind: 'null' },
  });
  const zones = audio.zones.list(admin).map((zone) => zone.id);
  const caller = (playerId: string): Caller => ({ ...admin, userId: 'cast', playerIds: new Set([playerId]) });
  const rooms = new CastRooms({
    store,
    repo: new CastSettingsRepo(store.db),
    rows: repo,
    players: audio.players,
    zones: audio.zones,
    caller,
    bus,
    clock,
    log: silent as never,
  });
  rooms.start();
  t.teardown(() => rooms.stop());
  const zone = (id: string) => audio.zones.get(admin, id);
  /** Every zone off and on no player, then `attached` attached to the player and switched off. */
  const setUp = async (attached: string[]) => {
    for (const id of zones) await audio.zones.setPower(admin, id, false);
    if (attached.length > 0) audio.players.attachZones(admin, player.id, attached);
    for (const id of attached) await audio.zones.setPower(admin, id, false);
  };
  return { ...rig, clock, player, zones, rooms, zone, setUp };
}

t.test('a cast powers on the zones attached to the player, at their turn-on volume', async (t) => {
  const { audio, rooms, player, zones, zone, setUp } = await roomsRig(t);
  await setUp([zones[0]!, zones[1]!]);
  await audio.zones.setVolume(admin, zones[0]!, 0.7);
  await audio.zones.setVolume(admin, zones[1]!, 0.35);
  audio.zones.update(admin, zones[0]!, { turnOnVolume: 0.25 });
  rooms.holderChanged(player.id, 'squeezelite');
  t.match(zone(zones[0]!), { power: true, volume: 0.25, playerId: player.id }, 'the first at its turn-on volume');
  t.match(zone(zones[1]!), { power: true, volume: 0.35 }, 'the second, without one, at its volume');
  t.equal(zone(zones[2]!).power, false, 'a zone not attached stays off');
});

t.test('the chosen wake zones are attached to the player and powered on; the others are left', async (t) => {
  const { rooms, player, zones, zone, setUp } = await roomsRig(t);
  await setUp([zones[0]!]);
  rooms.set(admin, player.id, { wakeZoneIds: [zones[2]!, zones[3]!], offAfterMinutes: null });
  rooms.holderChanged(player.id, 'airplay');
  t.match(zone(zones[2]!), { power: true, muted: false, playerId: player.id });
  t.match(zone(zones[3]!), { power: true, muted: false, playerId: player.id });
  t.equal(zone(zones[0]!).power, false, 'an attached zone that is not chosen stays off');
});

t.test('after the cast ends, the zones it woke power off when the delay has passed', async (t) => {
  const { audio, rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!, zones[1]!]);
  await audio.zones.setPower(admin, zones[1]!, true);
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 10 });
  rooms.holderChanged(player.id, 'squeezelite');
  rooms.holderChanged(player.id, null);
  clock.advance(10 * MINUTE - 1);
  t.equal(zone(zones[0]!).power, true, 'still on just before the delay');
  clock.advance(1);
  t.equal(zone(zones[0]!).power, false, 'the zone the cast woke is off');
  t.equal(zone(zones[1]!).power, true, 'the zone that was on before the cast stays on');
});

t.test('without a delay the woken zones stay on after the cast', async (t) => {
  const { rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!]);
  rooms.holderChanged(player.id, 'squeezelite');
  rooms.holderChanged(player.id, null);
  t.equal(clock.pending, 0, 'no power-off is pending');
  t.equal(zone(zones[0]!).power, true);
});

t.test("a person's Play on the player cancels the power-off", async (t) => {
  const { rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!]);
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 5 });
  rooms.holderChanged(player.id, 'upnp');
  rooms.holderChanged(player.id, null);
  t.ok(rooms.pending(player.id), 'a power-off is pending');
  rooms.holderChanged(player.id, 'mpd');
  clock.advance(60 * MINUTE);
  t.equal(zone(zones[0]!).power, true);
});

t.test('zones attached to or detached from the player by a person cancel the power-off', async (t) => {
  const { audio, rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!]);
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 5 });
  rooms.holderChanged(player.id, 'upnp');
  rooms.holderChanged(player.id, null);
  audio.players.attachZones(admin, player.id, [zones[4]!]);
  clock.advance(60 * MINUTE);
  t.equal(zone(zones[0]!).power, true);
});

t.test('a new cast cancels the power-off of the one before', async (t) => {
  const { rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!]);
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 5 });
  rooms.holderChanged(player.id, 'upnp');
  rooms.holderChanged(player.id, null);
  clock.advance(4 * MINUTE);
  rooms.holderChanged(player.id, 'airplay');
  clock.advance(60 * MINUTE);
  t.equal(zone(zones[0]!).power, true, 'the second cast plays on in the room');
});

t.test('a woken zone changed at its keypad after the cast is left to the keypad', async (t) => {
  const { rooms, player, zones, zone, setUp, clock, driver } = await roomsRig(t);
  await setUp([zones[0]!, zones[1]!]);
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 5 });
  rooms.holderChanged(player.id, 'squeezelite');
  rooms.holderChanged(player.id, null);
  const channel = zone(zones[1]!).output.channel;
  const before = zone(zones[1]!).volume;
  driver.simulateKeypad(channel, { volume: 0.6 });
  t.not(zone(zones[1]!).volume, before, 'the keypad turned the second zone');
  clock.advance(5 * MINUTE);
  t.equal(zone(zones[0]!).power, false, 'the untouched zone powers off');
  t.equal(zone(zones[1]!).power, true, 'the zone turned at its keypad stays on');
});

t.test('a woken zone moved to another player is not powered off', async (t) => {
  const { audio, rooms, player, zones, zone, setUp, clock } = await roomsRig(t);
  await setUp([zones[0]!]);
  const other = audio.players.create(admin, { name: 'Den', input: { channel: 2 } });
  rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 5 });
  rooms.holderChanged(player.id, 'squeezelite');
  audio.players.attachZones(admin, other.id, [zones[0]!]);
  rooms.holderChanged(player.id, null);
  clock.advance(5 * MINUTE);
  t.match(zone(zones[0]!), { power: true, playerId: other.id });
});

t.test('settings that name an unknown zone, a zone twice or a bad delay are refused and change nothing', async (t) => {
  const { rooms, player, zones } = await roomsRig(t);
  rooms.set(admin, player.id, { wakeZoneIds: [zones[0]!], offAfterMinutes: 30 });
  const unknown = '00000000-0000-4000-8000-000000000000';
  t.throws(() => rooms.set(admin, player.id, { wakeZoneIds: [unknown], offAfterMinutes: null }), {
    kind: 'invalid',
    message: /"wakeZoneIds.0" names no zone/,
  });
  t.throws(() => rooms.set(admin, player.id, { wakeZoneIds: [zones[1]!, zones[1]!], offAfterMinutes: null }), {
    kind: 'invalid',
    message: /twice/,
  });
  t.throws(() => rooms.set(admin, player.id, { wakeZoneIds: null, offAfterMinutes: 721 }), {
    kind: 'invalid',
    message: /"offAfterMinutes" must be null \(never\) or a whole number from 1 to 720, got 721/,
  });
  t.same(rooms.get(admin, player.id), { wakeZoneIds: [zones[0]!], offAfterMinutes: 30 }, 'as set before');
});
