// Ids in any letter case: each REST front door (path, body) and a restored backup hand the domain the canonical,
// lower-case id, so an id typed in upper case reaches the same object. The MQTT front door: test/mqtt/id-case.test.ts.
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

const UUID_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

t.test('a zone id in upper case in the path reaches that zone', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zone = ((await api.get('/api/zones')).body as Array<{ id: string }>)[1]!;
  const read = await api.get(`/api/zones/${zone.id.toUpperCase()}`);
  t.equal(read.status, 200, read.text);
  t.equal(read.body.id, zone.id, 'the zone answers with its id as stored');
  t.equal((await api.put(`/api/zones/${zone.id.toUpperCase()}/volume`, { volume: 0.3 })).status, 204);
  t.equal((await api.get(`/api/zones/${zone.id}`)).body.volume, 0.3, 'the write reached the same zone');
});

t.test('zone ids in upper case in a body reach those zones', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const player = await api.post('/api/players', { name: 'Kitchen radio', input: { channel: 2 } });
  t.equal(player.status, 201, player.text);
  const attached = await api.post(`/api/players/${player.body.id}/attach-zones`, {
    zoneIds: [zones[0]!.id.toUpperCase(), zones[2]!.id.toUpperCase()],
  });
  t.equal(attached.status, 204, attached.text);
  t.same((await api.get(`/api/players/${player.body.id}`)).body.zoneIds.sort(), [zones[0]!.id, zones[2]!.id].sort());
  t.equal((await api.get(`/api/zones/${zones[2]!.id}`)).body.playerId, player.body.id, 'each zone names its player');
});

t.test('a backup whose ids are written in upper case restores the same configuration', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 2 } })).body as { id: string };
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
  const user = await api.post('/api/users', {
    username: 'operator1',
    password: 'operator1-password',
    role: 'Operator',
    assignments: { playerIds: [player.id], zoneIds: [zones[0]!.id] },
  });
  t.equal(user.status, 201, user.text);
  const playlist = await api.post('/api/playlists', {
    name: 'Dinner',
    tracks: [{ title: 'One', uri: 'http://example.invalid/1.mp3', durationMs: 1000 }],
  });
  t.equal(playlist.status, 201, playlist.text);
  t.equal((await api.post('/api/scenes', { name: 'Evening', zoneIds: [zones[0]!.id] })).status, 201);
  const state = async () => ({
    users: (await api.get('/api/users')).body,
    // A player's state is not configuration: a restore leaves its zones powered off.
    players: ((await api.get('/api/players')).body as Array<Record<string, unknown>>).map(
      ({ state: _s, ...rest }) => rest,
    ),
    zone: (await api.get(`/api/zones/${zones[0]!.id}`)).body.playerId,
    playlist: (await api.get(`/api/playlists/${playlist.body.id}`)).body,
    scenes: (await api.get('/api/scenes')).body,
  });
  const before = await state();
  const text = JSON.stringify((await api.get('/api/backup')).body);
  const upper = text.replace(UUID_TEXT, (id) => id.toUpperCase());
  t.not(upper, text, 'the document names its ids in upper case');

  const res = await api.post('/api/restore', { backup: JSON.parse(upper) });
  t.equal(res.status, 200, res.text);
  t.same(res.body.usersWithoutPassword, [], 'every user is matched to its account here, the restoring admin too');
  t.same(
    await state(),
    before,
    'players, zones, users, the playlist and its tracks, and scenes under their stored ids',
  );
});
