// The routing rules of the players and zones services, without HTTP: attach moves, detach mutes, group volume, keypad wins.

import type { Test } from 'tap';
import t from 'tap';
import { admin, audioRig } from '../helpers/audio-rig.js';

async function setup(t: Test) {
  const { audio, driver, events } = await audioRig(t);
  return { audio, driver, events, zones: audio.zones.list(admin) };
}

t.test('attaching moves a zone from its old player and announces both players', async (t) => {
  const { audio, events, zones } = await setup(t);
  const a = audio.players.create(admin, { name: 'A', input: { channel: 1 } });
  const b = audio.players.create(admin, { name: 'B', input: { channel: 2 } });
  audio.players.attachZones(admin, a.id, [zones[0]!.id]);
  events.length = 0;
  audio.players.attachZones(admin, b.id, [zones[0]!.id]);
  const changed = events.filter((e) => e.type === 'player.zonesChanged').map((e) => e.payload);
  t.same(changed, [
    { playerId: a.id, zoneIds: [] },
    { playerId: b.id, zoneIds: [zones[0]!.id] },
  ]);
});

t.test('attaching a zone already attached changes nothing and says nothing', async (t) => {
  const { audio, events, zones } = await setup(t);
  const a = audio.players.create(admin, { name: 'A', input: { channel: 1 } });
  audio.players.attachZones(admin, a.id, [zones[1]!.id]);
  events.length = 0;
  audio.players.attachZones(admin, a.id, [zones[1]!.id]);
  t.same(events, []);
});

t.test('detach mutes and frees only zones of that player', async (t) => {
  const { audio, driver, zones } = await setup(t);
  const a = audio.players.create(admin, { name: 'A', input: { channel: 1 } });
  const b = audio.players.create(admin, { name: 'B', input: { channel: 2 } });
  audio.players.attachZones(admin, a.id, [zones[0]!.id]);
  audio.players.attachZones(admin, b.id, [zones[1]!.id]);
  audio.players.detachZones(admin, a.id, [zones[0]!.id, zones[1]!.id]);
  await driver.settled();
  t.match(audio.zones.get(admin, zones[0]!.id), { playerId: null, muted: true });
  t.match(audio.zones.get(admin, zones[1]!.id), { playerId: b.id, muted: false });
});

t.test('group volume sets every attached zone and only those', async (t) => {
  const { audio, driver, zones } = await setup(t);
  const a = audio.players.create(admin, { name: 'A', input: { channel: 3 } });
  audio.players.attachZones(admin, a.id, [zones[2]!.id, zones[3]!.id]);
  await audio.zones.setVolume(admin, zones[4]!.id, 0.1);
  await audio.players.setVolume(admin, a.id, 0.8);
  await driver.settled();
  t.equal(audio.zones.get(admin, zones[2]!.id).volume, 0.8);
  t.equal(audio.zones.get(admin, zones[3]!.id).volume, 0.8);
  t.equal(audio.zones.get(admin, zones[4]!.id).volume, 0.1);
  t.equal(driver.hardwareState(3)!.volume, Math.round(0.8 * 38) / 38);
});

t.test('a keypad volume within the same step keeps the client value; another step replaces it', async (t) => {
  const { audio, driver, zones } = await setup(t);
  await audio.zones.setVolume(admin, zones[0]!.id, 0.5);
  driver.simulateKeypad(1, { volume: 0.5 });
  t.equal(audio.zones.get(admin, zones[0]!.id).volume, 0.5);
  driver.simulateKeypad(1, { volume: 0.9 });
  t.equal(audio.zones.get(admin, zones[0]!.id).volume, Math.round(0.9 * 38) / 38);
});

t.test('a keypad source with no player on it leaves the zone without a player', async (t) => {
  const { audio, driver, zones } = await setup(t);
  const a = audio.players.create(admin, { name: 'A', input: { channel: 1 } });
  audio.players.attachZones(admin, a.id, [zones[0]!.id]);
  driver.simulateKeypad(1, { source: 6 });
  t.equal(audio.zones.get(admin, zones[0]!.id).playerId, null);
  t.same(audio.players.get(admin, a.id).zoneIds, []);
});
