// Roles and assignment lists: what an Operator and a Viewer may see and change.
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

// Cases that change shared state put it back in teardown, so none depends on another having run.
t.test('roles and assignments', async (t) => {
  const d = await startTestDaemon(t);
  const admin = injectClient(d.daemon, d.adminKey);
  const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
  const mine = (await admin.post('/api/players', { name: 'Mine', input: { channel: 1 } })).body;
  const theirs = (await admin.post('/api/players', { name: 'Theirs', input: { channel: 2 } })).body;
  await admin.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  const opUser = await createUser(admin, 'operator1', 'Operator', {
    playerIds: [mine.id],
    zoneIds: [zones[0]!.id, zones[2]!.id],
  });
  const viewerUser = await createUser(admin, 'viewer1', 'Viewer', { playerIds: [mine.id], zoneIds: [zones[0]!.id] });
  const op = injectClient(d.daemon, opUser.apiKey);
  const viewer = injectClient(d.daemon, viewerUser.apiKey);

  t.test('an operator lists only its assigned players and zones', async (t) => {
    t.same(
      (await op.get('/api/players')).body.map((p: { id: string }) => p.id),
      [mine.id],
    );
    t.same(
      (await op.get('/api/zones')).body.map((z: { id: string }) => z.id).sort(),
      [zones[0]!.id, zones[2]!.id].sort(),
    );
  });

  t.test('a player shows an operator only the attached zones it may see', async (t) => {
    t.same((await op.get(`/api/players/${mine.id}`)).body.zoneIds, [zones[0]!.id]);
  });

  t.test('an operator cannot see a player outside its assignments: 404, not 403', async (t) => {
    const before = (await admin.get(`/api/players/${theirs.id}`)).body.volume;
    t.equal((await op.get(`/api/players/${theirs.id}`)).status, 404);
    t.equal((await op.put(`/api/players/${theirs.id}/volume`, { volume: before === 0.4 ? 0.5 : 0.4 })).status, 404);
    t.equal((await op.get(`/api/zones/${zones[3]!.id}`)).status, 404);
    t.equal((await op.put(`/api/zones/${zones[3]!.id}/mute`, { muted: true })).status, 404);
    t.equal((await admin.get(`/api/players/${theirs.id}`)).body.volume, before, 'nothing changed');
  });

  t.test('an operator changes its assigned player and zones', async (t) => {
    t.equal((await op.put(`/api/players/${mine.id}/volume`, { volume: 0.6 })).status, 204);
    // The group change moves only its assigned zone (zones[1] is not assigned to it).
    t.equal((await admin.get(`/api/zones/${zones[0]!.id}`)).body.volume, 0.6);
    const power = (await admin.get(`/api/zones/${zones[2]!.id}`)).body.power as boolean;
    t.equal((await op.put(`/api/zones/${zones[2]!.id}/power`, { power: !power })).status, 204);
    t.equal((await admin.get(`/api/zones/${zones[2]!.id}`)).body.power, !power);
  });

  t.test('attach needs every zone in the body assigned; an invisible one is a 400 that changes nothing', async (t) => {
    t.teardown(() => admin.post(`/api/players/${mine.id}/detach-zones`, { zoneIds: [zones[2]!.id] }));
    const res = await op.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[2]!.id, zones[3]!.id] });
    t.equal(res.status, 400);
    t.match(res.body.detail, zones[3]!.id);
    t.equal((await admin.get(`/api/zones/${zones[2]!.id}`)).body.playerId, null);
    t.equal((await op.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[2]!.id] })).status, 204);
  });

  t.test('an operator cannot create or delete players and zones, nor manage users', async (t) => {
    t.equal((await op.post('/api/players', { name: 'x', input: { channel: 3 } })).status, 403);
    t.equal((await op.del(`/api/players/${mine.id}`)).status, 403);
    t.equal((await op.post('/api/zones', { name: 'x', output: { channel: 1 } })).status, 403);
    t.equal((await op.del(`/api/zones/${zones[0]!.id}`)).status, 403);
    t.equal((await op.get('/api/users')).status, 403);
    t.equal((await op.get(`/api/users/${viewerUser.id}/api-key`)).status, 403);
    t.equal((await op.put(`/api/users/${viewerUser.id}`, { role: 'Admin' })).status, 403);
  });

  t.test('an operator reads and changes playlists and input devices', async (t) => {
    const pl = await op.post('/api/playlists', {
      name: 'Operator mix',
      tracks: [{ title: 'a', uri: 'file:///a.flac' }],
    });
    t.equal(pl.status, 201);
    const input = (await op.get('/api/input-devices')).body[0];
    t.equal((await op.put(`/api/input-devices/${input.id}/favorite`, { isFavorite: true })).status, 204);
    t.equal((await op.put(`/api/playlists/${pl.body.id}/favorite`, { isFavorite: true })).status, 204);
  });

  t.test('a viewer reads what is assigned but any change is 403', async (t) => {
    const before = (await admin.get(`/api/players/${mine.id}`)).body;
    t.same(
      (await viewer.get('/api/players')).body.map((p: { id: string }) => p.id),
      [mine.id],
    );
    t.equal((await viewer.put(`/api/players/${mine.id}/volume`, { volume: 0.1 })).status, 403);
    t.equal((await viewer.put(`/api/zones/${zones[0]!.id}/mute`, { muted: true })).status, 403);
    t.equal((await viewer.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 403);
    t.equal((await viewer.post('/api/playlists', { name: 'nope' })).status, 403);
    const input = (await viewer.get('/api/input-devices')).body[0];
    t.equal((await viewer.put(`/api/input-devices/${input.id}/favorite`, { isFavorite: false })).status, 403);
    t.same((await admin.get(`/api/players/${mine.id}`)).body, before, 'nothing changed');
    t.equal((await viewer.get('/api/playlists')).status, 200);
  });

  t.test('an assignment change applies to the very next request', async (t) => {
    t.teardown(async () => {
      await admin.put(`/api/users/${opUser.id}`, { role: 'Operator' });
      await admin.put(`/api/users/${opUser.id}/assignments`, {
        playerIds: [mine.id],
        zoneIds: [zones[0]!.id, zones[2]!.id],
      });
    });
    await admin.put(`/api/users/${opUser.id}/assignments`, { playerIds: [theirs.id], zoneIds: [] });
    t.same(
      (await op.get('/api/players')).body.map((p: { id: string }) => p.id),
      [theirs.id],
    );
    t.equal((await op.get(`/api/players/${mine.id}`)).status, 404);
    await admin.put(`/api/users/${opUser.id}`, { role: 'Viewer' });
    t.equal((await op.put(`/api/players/${theirs.id}/volume`, { volume: 0.2 })).status, 403);
  });

  t.test('an admin sees everything without assignments', async (t) => {
    t.equal((await admin.get('/api/players')).body.length, 2);
    t.equal((await admin.get('/api/zones')).body.length, 6);
  });
});
