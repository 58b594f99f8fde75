// Work kept small by what is stored: a playlist's size is kept in its row (the list never reads tracks), and a scene
// left without zones is deleted with its last zone, so every state has a backup that restores.
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

const track = (i: number, durationMs?: number) => ({ title: `T${i}`, uri: `file:///m/${i}.flac`, durationMs });

t.test(
  "the playlist list reports each playlist's size from its own row, kept by every change of its tracks",
  async (t) => {
    const d = await startTestDaemon(t);
    const api = injectClient(d.daemon, d.adminKey);
    const made = await api.post('/api/playlists', { name: 'Kept', tracks: [track(1, 1000), track(2), track(3, 2500)] });
    t.equal(made.status, 201);
    const id = made.body.id as string;
    const summary = async () =>
      ((await api.get('/api/playlists')).body as Array<{ id: string; trackCount: number; durationMs: number }>).find(
        (p) => p.id === id,
      );
    t.match(await summary(), { trackCount: 3, durationMs: 3500 }, 'created with tracks');
    t.equal((await api.post(`/api/playlists/${id}/tracks`, { tracks: [track(4, 500), track(5)] })).status, 200);
    t.match(await summary(), { trackCount: 5, durationMs: 4000 }, 'tracks appended');
    const tracks = (await api.get(`/api/playlists/${id}`)).body.tracks as Array<{ id: string }>;
    t.equal((await api.del(`/api/playlists/${id}/tracks`, { trackIds: [tracks[0]!.id, tracks[1]!.id] })).status, 204);
    t.match(await summary(), { trackCount: 3, durationMs: 3000 }, 'tracks removed');
    t.equal((await api.post(`/api/playlists/${id}/reorder`, { newOrder: [2, 1, 0] })).status, 204);
    t.match(await summary(), { trackCount: 3, durationMs: 3000 }, 'a reorder changes neither');

    // The tracks are taken away behind the service's back: the list still answers from the playlist's row.
    d.daemon.services.store.transaction(() =>
      d.daemon.services.store.db.prepare('DELETE FROM tracks WHERE playlist_id = ?').run(id),
    );
    t.match(await summary(), { trackCount: 3, durationMs: 3000 }, 'the list reads no track');
  },
);

t.test('a scene whose last zone is deleted is deleted with it; scenes with zones left keep the others', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((z) => z.id);
  const lone = await api.post('/api/scenes', { name: 'Lone', zoneIds: [zones[0]] });
  const pair = await api.post('/api/scenes', { name: 'Pair', zoneIds: [zones[0], zones[1]] });
  t.equal(lone.status, 201);
  t.equal(pair.status, 201);
  t.equal((await api.del(`/api/zones/${zones[0]}`)).status, 204);
  t.equal((await api.get(`/api/scenes/${lone.body.id}`)).status, 404, 'the scene of the deleted zone alone is gone');
  t.same(
    (await api.get(`/api/scenes/${pair.body.id}`)).body.zones.map((z: { zoneId: string }) => z.zoneId),
    [zones[1]],
    'the other keeps its other zone',
  );
  const backup = await api.get('/api/backup');
  t.equal((await api.post('/api/restore', { backup: backup.body })).status, 200, 'the backup of that state restores');
});
