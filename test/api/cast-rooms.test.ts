// Rooms that wake for a cast, through the daemon: an admin sets a stream player's cast settings (stored across a
// restart and in a backup, refused when they name what does not exist), and a real cast (Debian's squeezelite, a
// stand-in slimproto server, the real MPD) powers on the player's rooms at their turn-on volume, or the chosen ones.
// The power-off after a cast runs on the daemon's clock, which also paces the cast's PCM: test/unit/cast-rooms
// drives it on a hand-driven clock.

import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { ListedReceivers } from '../../daemon/domain/playback/index.js';
import { castRig } from '../helpers/cast-rig.js';
import { concurrently } from '../helpers/concurrency.js';
import { type StartOptions, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { MPD, TRACKS } from '../helpers/mpd-rig.js';

concurrently(t, 2);

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** A daemon whose stream players run the real MPD, their receivers only listed (no cast runs). */
async function settingsRig(t: Test, options: StartOptions = {}) {
  const musicDir = tempDir('azc-music-');
  t.teardown(() => rmSync(musicDir, { recursive: true, force: true }));
  const d = await startTestDaemon(t, {
    ...options,
    receiverRuntime: new ListedReceivers(),
    config: { playback: { ...defaultConfig().playback, mpdPath: MPD, musicDir }, ...options.config },
  });
  const api = injectClient(d.daemon, d.adminKey);
  const zones = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((zone) => zone.id);
  const streamPlayer = async (name: string, channel: number) => {
    const res = await api.post('/api/players', { name, input: { channel }, output: { kind: 'null' } });
    if (res.status !== 201) throw new Error(`creating ${name} failed: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  return { d, api, zones, streamPlayer };
}

t.test(
  'a stream player wakes the zones attached at the cast and never powers them off, until set otherwise',
  async (t) => {
    const { api, zones, streamPlayer } = await settingsRig(t);
    const id = await streamPlayer('Kitchen', 1);
    const settings = `/api/players/${id}/cast-settings`;
    t.same((await api.get(settings)).body, { wakeZoneIds: null, offAfterMinutes: null }, 'the defaults');
    const put = await api.put(settings, { wakeZoneIds: [zones[2], zones[0]], offAfterMinutes: 15 });
    t.equal(put.status, 200, put.text);
    t.same(put.body, { wakeZoneIds: [zones[0], zones[2]].sort(), offAfterMinutes: 15 }, 'answered as stored');
    t.same((await api.get(settings)).body, put.body, 'and read back');
    const back = await api.put(settings, { wakeZoneIds: null, offAfterMinutes: null });
    t.same(back.body, { wakeZoneIds: null, offAfterMinutes: null }, 'set back to the defaults');
  },
);

t.test('bad cast settings are refused, naming the field, and change nothing', async (t) => {
  const { api, d, zones, streamPlayer } = await settingsRig(t);
  const id = await streamPlayer('Kitchen', 1);
  const settings = `/api/players/${id}/cast-settings`;
  await api.put(settings, { wakeZoneIds: [zones[1]], offAfterMinutes: 30 });
  const cases: Array<[string, unknown, number, string, RegExp]> = [
    ['an unknown zone', { wakeZoneIds: [UNKNOWN], offAfterMinutes: null }, 400, 'wakeZoneIds.0', /names no zone/],
    ['a zone twice', { wakeZoneIds: [zones[0], zones[0]], offAfterMinutes: null }, 400, 'wakeZoneIds.1', /twice/],
    ['zero minutes', { wakeZoneIds: null, offAfterMinutes: 0 }, 400, 'offAfterMinutes', /1 to 720/],
    ['too many minutes', { wakeZoneIds: null, offAfterMinutes: 721 }, 400, 'offAfterMinutes', /1 to 720/],
    ['a fraction of a minute', { wakeZoneIds: null, offAfterMinutes: 1.5 }, 400, 'offAfterMinutes', /whole number/],
    ['a field left out', { wakeZoneIds: null }, 400, 'offAfterMinutes', /./],
  ];
  for (const [what, body, status, field, message] of cases) {
    const res = await api.put(settings, body);
    t.equal(res.status, status, what);
    t.match(res.body.errors?.[field], [message], `${what}: named by its field (${res.text})`);
  }
  t.same((await api.get(settings)).body, { wakeZoneIds: [zones[1]], offAfterMinutes: 30 }, 'nothing changed');

  const operator = await createUser(api, 'olive', 'Operator', { playerIds: [id], zoneIds: [] });
  const asOperator = injectClient(d.daemon, operator.apiKey);
  t.equal((await asOperator.get(settings)).status, 200, 'an assigned operator reads them');
  t.same((await asOperator.get(settings)).body.wakeZoneIds, [], 'without the zones it may not see');
  t.equal(
    (await asOperator.put(settings, { wakeZoneIds: null, offAfterMinutes: null })).status,
    403,
    'only admins set them',
  );
  t.equal((await api.get(`/api/players/${UNKNOWN}/cast-settings`)).status, 404, 'an unknown player');
  const wired = await api.post('/api/players', { name: 'Radio', input: { channel: 2 } });
  const notStream = await api.put(`/api/players/${wired.body.id}/cast-settings`, {
    wakeZoneIds: null,
    offAfterMinutes: 5,
  });
  t.equal(notStream.status, 409, 'a player the appliance does not play');
  t.match(notStream.body.detail, /give player "Radio" an output first/);
});

t.test('cast settings survive a restart; a zone deleted leaves the wake list', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await settingsRig(t, { stateDir });
  const id = await first.streamPlayer('Kitchen', 1);
  await first.api.put(`/api/players/${id}/cast-settings`, {
    wakeZoneIds: [first.zones[0], first.zones[1]],
    offAfterMinutes: 45,
  });
  await first.d.stop();
  const second = await settingsRig(t, { stateDir });
  const settings = `/api/players/${id}/cast-settings`;
  t.same((await second.api.get(settings)).body, {
    wakeZoneIds: [first.zones[0], first.zones[1]].sort(),
    offAfterMinutes: 45,
  });
  t.equal((await second.api.del(`/api/zones/${first.zones[0]}`)).status, 204);
  t.same((await second.api.get(settings)).body.wakeZoneIds, [first.zones[1]], 'the deleted zone is gone from it');
});

t.test('a backup carries the cast settings; a restore brings them back, an older backup the defaults', async (t) => {
  const { api, zones, streamPlayer } = await settingsRig(t);
  const id = await streamPlayer('Kitchen', 1);
  const settings = `/api/players/${id}/cast-settings`;
  await api.put(settings, { wakeZoneIds: [zones[3]], offAfterMinutes: 60 });
  const doc = (await api.get('/api/backup')).body;
  t.same(doc.players.find((p: { id: string }) => p.id === id).cast, { wakeZoneIds: [zones[3]], offAfterMinutes: 60 });
  await api.put(settings, { wakeZoneIds: null, offAfterMinutes: null });
  const restored = await api.post('/api/restore', { backup: doc });
  t.equal(restored.status, 200, restored.text);
  t.same((await api.get(settings)).body, { wakeZoneIds: [zones[3]], offAfterMinutes: 60 }, 'restored');

  const before = { ...doc, players: doc.players.map(({ cast: _none, ...player }: Record<string, unknown>) => player) };
  t.equal((await api.post('/api/restore', { backup: before })).status, 200);
  t.same(
    (await api.get(settings)).body,
    { wakeZoneIds: null, offAfterMinutes: null },
    'a backup without them: defaults',
  );

  const broken = {
    ...doc,
    players: doc.players.map((p: { id: string }) =>
      p.id === id ? { ...p, cast: { wakeZoneIds: [UNKNOWN], offAfterMinutes: 60 } } : p,
    ),
  };
  const refused = await api.post('/api/restore', { backup: broken });
  t.equal(refused.status, 400, 'a backup whose wake list names no zone of it');
  t.match(refused.body.errors['backup.players.0.cast.wakeZoneIds.0'], [/names no zone of the backup/]);
  t.same((await api.get(settings)).body, { wakeZoneIds: null, offAfterMinutes: null }, 'and nothing changed');
});

/** The cast rig, with the zones' ids and a zone as the API shows it. */
async function roomsRig(t: Test) {
  const rig = await castRig(t);
  const { api } = rig;
  const zones = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((zone) => zone.id);
  const zone = async (id: string) => (await api.get(`/api/zones/${id}`)).body;
  return { ...rig, zones, zone };
}

t.test('a cast powers on the zones attached to the player, one at its turn-on volume', async (t) => {
  const rig = await roomsRig(t);
  const { api, kitchen, zones, zone } = rig;
  const attached = [zones[0]!, zones[1]!];
  t.equal((await api.post(`/api/players/${kitchen.id}/attach-zones`, { zoneIds: attached })).status, 204);
  for (const id of attached) t.equal((await api.put(`/api/zones/${id}/power`, { power: false })).status, 204);
  t.equal((await api.put(`/api/zones/${zones[0]}`, { turnOnVolume: 0.15 })).status, 200);
  const from = rig.events.length;
  await rig.cast();
  await rig.next('zone.powerChanged', (e) => e.payload.zoneId === zones[1] && e.payload.power, from);
  t.match(
    await zone(zones[0]!),
    { power: true, playerId: kitchen.id, volume: 0.15 },
    'the first at its turn-on volume',
  );
  t.match(await zone(zones[1]!), { power: true, playerId: kitchen.id }, 'and the second on');
  t.equal((await zone(zones[2]!)).playerId, null, 'a zone not attached is left');
});

t.test("a cast attaches and powers on the player's chosen wake zones", async (t) => {
  const rig = await roomsRig(t);
  const { api, kitchen, zones, zone } = rig;
  const put = await api.put(`/api/players/${kitchen.id}/cast-settings`, {
    wakeZoneIds: [zones[3]],
    offAfterMinutes: null,
  });
  t.equal(put.status, 200, put.text);
  const from = rig.events.length;
  await rig.cast();
  await rig.next('player.zonesChanged', (e) => e.payload.playerId === kitchen.id, from);
  t.match(await zone(zones[3]!), { power: true, muted: false, playerId: kitchen.id });
});

t.test("a person's Pause that ends the cast starts the power-off, and their Play cancels it", async (t) => {
  const rig = await roomsRig(t);
  const { api, d, kitchen, zones, zone } = rig;
  const rooms = d.daemon.services.castRooms;
  t.equal((await api.post(`/api/players/${kitchen.id}/attach-zones`, { zoneIds: [zones[0]] })).status, 204);
  t.equal((await api.put(`/api/zones/${zones[0]}/power`, { power: false })).status, 204);
  await api.put(`/api/players/${kitchen.id}/cast-settings`, { wakeZoneIds: null, offAfterMinutes: 30 });
  t.equal((await api.post(`/api/players/${kitchen.id}/play`, { uri: `file:${TRACKS.long}` })).status, 200);
  await rig.until(kitchen.id, (p) => p.state === 'playing', 'the playlist to play');
  const from = rig.events.length;
  await rig.cast();
  await rig.next('zone.powerChanged', (e) => e.payload.zoneId === zones[0] && e.payload.power, from);
  t.notOk(rooms.pending(kitchen.id), 'nothing is pending while the cast plays');
  t.equal((await api.post(`/api/players/${kitchen.id}/pause`)).status, 200);
  t.ok(rooms.pending(kitchen.id), 'the pause ended the cast: the power-off waits');
  t.equal((await api.post(`/api/players/${kitchen.id}/resume`)).status, 200);
  t.notOk(rooms.pending(kitchen.id), 'Play on the player cancelled it');
  t.equal((await zone(zones[0]!)).power, true, 'and the room stays on');
});
