// Playlists from outside: tracks, permutation reorder, favorites, the summary list, M3U download and export.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

// Every case makes its own playlist (deleted in teardown), so none depends on another having run.
t.test('playlists', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const exportDir = path.join(d.stateDir, 'exports');
  const tracks = ['One', 'Two', 'Three', 'Four'].map((title, i) => ({
    title,
    uri: `file:///music/${i}.flac`,
    durationMs: (i + 1) * 61_000,
  }));
  const newPlaylist = async (t: Test, body: { name: string; tracks?: unknown[] } = { name: 'Evening', tracks }) => {
    const res = await api.post('/api/playlists', body);
    if (res.status !== 201) throw new Error(`creating a playlist failed: ${res.status} ${res.text}`);
    t.teardown(() => api.del(`/api/playlists/${res.body.id}`));
    return res;
  };
  const titles = async (id: string) =>
    (await api.get(`/api/playlists/${id}`)).body.tracks.map((x: { title: string }) => x.title);
  const stored = () =>
    (d.daemon.services.store.db.prepare('SELECT COUNT(*) AS n FROM playlists').get() as { n: number }).n;

  t.test('create returns the playlist with generated track ids in order', async (t) => {
    const created = await newPlaylist(t);
    t.equal(created.status, 201);
    t.match(created.body, { name: 'Evening', isFavorite: false, createdAt: String });
    t.same(
      created.body.tracks.map((x: { title: string }) => x.title),
      ['One', 'Two', 'Three', 'Four'],
    );
    t.ok(created.body.tracks.every((x: { id: string }) => /^[0-9a-f-]{36}$/.test(x.id)));
    const { warnings, ...playlist } = created.body;
    t.equal(warnings.length, 4, 'with a warning for each file:/// track, which stream players refuse');
    t.same((await api.get(`/api/playlists/${created.body.id}`)).body, playlist, 'and it reads back the same');
  });

  t.test('the list gives each playlist as a summary: its track count and duration, not its tracks', async (t) => {
    const created = await newPlaylist(t);
    const res = await api.get('/api/playlists');
    t.equal(res.status, 200);
    t.same(
      res.body.find((p: { id: string }) => p.id === created.body.id),
      {
        id: created.body.id,
        name: 'Evening',
        isFavorite: false,
        trackCount: 4,
        durationMs: (1 + 2 + 3 + 4) * 61_000,
        createdAt: created.body.createdAt,
      },
    );
    t.ok(
      res.body.every((p: object) => !('tracks' in p)),
      'no tracks in any item',
    );
    t.equal(res.headers.get('x-total-count'), String(stored()));
    t.equal(res.headers.get('link'), null, 'one page only');
  });

  t.test('reorder: newOrder[i] is the current index of the track that moves to position i', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    t.equal((await api.post(`/api/playlists/${id}/reorder`, { newOrder: [3, 0, 1, 2] })).status, 204);
    t.same(await titles(id), ['Four', 'One', 'Two', 'Three']);
    t.equal((await api.post(`/api/playlists/${id}/reorder`, { newOrder: [1, 2, 3, 0] })).status, 204);
    t.same(await titles(id), ['One', 'Two', 'Three', 'Four']);
  });

  t.test('anything but a permutation of 0..n-1 is a 400 that changes nothing', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    for (const newOrder of [
      [0, 1, 2],
      [0, 1, 2, 3, 4],
      [0, 0, 1, 2],
      [0, 1, 2, 4],
      [-1, 0, 1, 2],
      [0.5, 1, 2, 3],
      ['0', 1, 2, 3],
      'x',
    ]) {
      const res = await api.post(`/api/playlists/${id}/reorder`, { newOrder });
      t.equal(res.status, 400, `newOrder ${JSON.stringify(newOrder)} is rejected`);
      t.ok(
        Object.keys(res.body.errors).some((f) => f.startsWith('newOrder')),
        'names the field',
      );
    }
    t.same(await titles(id), ['One', 'Two', 'Three', 'Four']);
  });

  t.test('appending tracks returns the playlist with new ids at the end', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    const res = await api.post(`/api/playlists/${id}/tracks`, {
      tracks: [{ title: 'Five', uri: 'http://radio.example/stream' }],
    });
    t.equal(res.status, 200);
    t.same(
      res.body.tracks.map((x: { title: string }) => x.title),
      ['One', 'Two', 'Three', 'Four', 'Five'],
    );
    t.equal(res.body.tracks[4].durationMs, null);
    t.equal((await api.post(`/api/playlists/${id}/tracks`, { tracks: [] })).status, 400);
    t.equal((await api.post(`/api/playlists/${id}/tracks`, { tracks: [{ title: 'no uri' }] })).status, 400);
    t.same(await titles(id), ['One', 'Two', 'Three', 'Four', 'Five'], 'the refused appends added nothing');
  });

  t.test('removing tracks by id; an unknown id fails the whole request', async (t) => {
    const created = (await newPlaylist(t)).body as { id: string; tracks: Array<{ id: string }> };
    const { id, tracks: list } = created;
    const bad = await api.del(`/api/playlists/${id}/tracks`, { trackIds: [list[3]!.id, UNKNOWN] });
    t.equal(bad.status, 400);
    t.match(bad.body.detail, UNKNOWN);
    t.equal((await titles(id)).length, 4, 'nothing removed');
    t.equal((await api.del(`/api/playlists/${id}/tracks`, { trackIds: [list[3]!.id, list[3]!.id] })).status, 204);
    t.same(await titles(id), ['One', 'Two', 'Three']);
    t.equal((await api.del(`/api/playlists/${id}/tracks`, { trackIds: [] })).status, 400);
    t.equal((await api.del(`/api/playlists/${id}/tracks`, { trackIds: ['nope'] })).status, 400);
  });

  t.test('positions stay dense after a removal, so reorder still works', async (t) => {
    const created = (await newPlaylist(t)).body as { id: string; tracks: Array<{ id: string }> };
    t.equal((await api.del(`/api/playlists/${created.id}/tracks`, { trackIds: [created.tracks[1]!.id] })).status, 204);
    t.equal((await api.post(`/api/playlists/${created.id}/reorder`, { newOrder: [1, 0, 2] })).status, 204);
    t.same(await titles(created.id), ['Three', 'One', 'Four']);
  });

  t.test('favorite is a boolean set directly', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    t.equal((await api.put(`/api/playlists/${id}/favorite`, { isFavorite: true })).status, 204);
    t.equal((await api.get(`/api/playlists/${id}`)).body.isFavorite, true);
    t.equal((await api.put(`/api/playlists/${id}/favorite`, { isFavorite: 'true' })).status, 400);
    t.equal((await api.get(`/api/playlists/${id}`)).body.isFavorite, true, 'the refused change changed nothing');
    t.equal((await api.put(`/api/playlists/${UNKNOWN}/favorite`, { isFavorite: true })).status, 404);
  });

  t.test('export writes extended M3U atomically inside the export directory', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    t.equal((await api.post(`/api/playlists/${id}/export`, { filePath: 'rooms/evening.m3u8' })).status, 204);
    const text = readFileSync(path.join(exportDir, 'rooms', 'evening.m3u8'), 'utf8');
    t.equal(
      text,
      '#EXTM3U\n#PLAYLIST:Evening\n#EXTINF:61,One\nfile:///music/0.flac\n#EXTINF:122,Two\nfile:///music/1.flac\n' +
        '#EXTINF:183,Three\nfile:///music/2.flac\n#EXTINF:244,Four\nfile:///music/3.flac\n',
    );
    t.same(readdirSync(path.join(exportDir, 'rooms')), ['evening.m3u8'], 'no temporary file left behind');
    t.equal(
      (await api.post(`/api/playlists/${id}/export`, { filePath: 'rooms/evening.m3u8' })).status,
      204,
      'an existing file is replaced',
    );
    t.equal((await api.post(`/api/playlists/${id}/export`, { filePath: 'plain.M3U' })).status, 204);
    t.ok(existsSync(path.join(exportDir, 'plain.M3U')));
  });

  t.test('export path attacks are 400 and write nothing outside', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    const outside = tempDir('azc-outside-');
    t.teardown(() => rmSync(outside, { recursive: true, force: true }));
    mkdirSync(exportDir, { recursive: true });
    symlinkSync(outside, path.join(exportDir, 'escape'));
    writeFileSync(path.join(outside, 'target.m3u8'), 'untouched');
    symlinkSync(path.join(outside, 'target.m3u8'), path.join(exportDir, 'link.m3u8'));
    mkdirSync(path.join(exportDir, 'folder.m3u8'));
    const attacks = [
      '../evil.m3u8',
      'a/../../evil.m3u8',
      '/tmp/evil.m3u8',
      'escape/evil.m3u8',
      'link.m3u8',
      'nul\u0000.m3u8',
      'line\nbreak.m3u8',
      `${'a'.repeat(260)}.m3u8`,
      'playlist.txt',
      'playlist.m3u8.sh',
      '',
      'folder.m3u8',
      '..\\evil.m3u8',
    ];
    for (const filePath of attacks) {
      const res = await api.post(`/api/playlists/${id}/export`, { filePath });
      t.equal(res.status, 400, `${JSON.stringify(filePath).slice(0, 40)} is rejected`);
      t.ok(res.body.errors?.filePath, 'names filePath');
    }
    t.equal((await api.post(`/api/playlists/${id}/export`, { filePath: 42 })).status, 400);
    t.same(readdirSync(outside), ['target.m3u8']);
    t.equal(readFileSync(path.join(outside, 'target.m3u8'), 'utf8'), 'untouched');
    t.notOk(existsSync(path.join(d.stateDir, 'evil.m3u8')));
  });

  t.test('any signed-in user can download the playlist as the same M3U an export writes', async (t) => {
    const id = (await newPlaylist(t)).body.id as string;
    t.equal((await api.post(`/api/playlists/${id}/export`, { filePath: 'download-check.m3u8' })).status, 204);
    const viewer = await createUser(api, 'listener', 'Viewer');
    const res = await api.get(`/api/playlists/${id}/m3u`, { key: viewer.apiKey });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'audio/x-mpegurl; charset=utf-8');
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="Evening.m3u8"');
    t.equal(res.text, readFileSync(path.join(exportDir, 'download-check.m3u8'), 'utf8'));
    t.match(res.text, /^#EXTM3U\n#PLAYLIST:Evening\n/);
    t.equal((await api.get(`/api/playlists/${UNKNOWN}/m3u`, { key: viewer.apiKey })).status, 404);
    t.equal((await api.get(`/api/playlists/${id}/m3u`, { key: '' })).status, 401);
  });

  t.test('the download file name keeps only safe characters', async (t) => {
    const odd = (await newPlaylist(t, { name: '../Café "Noir"; \\ x: .' })).body;
    const res = await api.get(`/api/playlists/${odd.id}/m3u`);
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="Cafe _Noir_ _ x.m3u8"');
    const bare = (await newPlaylist(t, { name: '...' })).body;
    t.equal(
      (await api.get(`/api/playlists/${bare.id}/m3u`)).headers.get('content-disposition'),
      'attachment; filename="playlist.m3u8"',
    );
  });

  t.test('export of an unknown playlist is 404', async (t) => {
    t.equal((await api.post(`/api/playlists/${UNKNOWN}/export`, { filePath: 'x.m3u' })).status, 404);
    t.notOk(existsSync(path.join(exportDir, 'x.m3u')));
  });

  t.test('delete removes the playlist and its tracks', async (t) => {
    const other = (await api.post('/api/playlists', { name: 'Temp', tracks: [{ title: 'a', uri: 'u:a' }] })).body;
    const tracksOf = () =>
      (
        d.daemon.services.store.db.prepare('SELECT COUNT(*) AS n FROM tracks WHERE playlist_id = ?').get(other.id) as {
          n: number;
        }
      ).n;
    t.equal(tracksOf(), 1);
    t.equal((await api.del(`/api/playlists/${other.id}`)).status, 204);
    t.equal((await api.get(`/api/playlists/${other.id}`)).status, 404);
    t.equal(tracksOf(), 0, 'its tracks are gone too');
    t.equal((await api.del(`/api/playlists/${other.id}`)).status, 404);
  });

  t.test('names and tracks are validated', async (t) => {
    const before = stored();
    t.equal((await api.post('/api/playlists', { name: '' })).status, 400);
    t.equal((await api.post('/api/playlists', {})).status, 400);
    t.equal(
      (await api.post('/api/playlists', { name: 'x', tracks: [{ title: 't', uri: 'u', durationMs: -5 }] })).status,
      400,
    );
    t.equal((await api.post('/api/playlists', { name: 'x', tracks: 'no' })).status, 400);
    t.equal(stored(), before, 'nothing was created');
  });
});

t.test('input devices', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const inputs = (await api.get('/api/input-devices')).body as Array<{ id: string; input: { channel: number } }>;

  t.test('lists the amplifier inputs with their fields', async (t) => {
    t.equal(inputs.length, 6);
    t.match(inputs[0], {
      id: String,
      name: 'Input 1',
      kind: 'line-in',
      input: { driver: 'simulated', channel: 1 },
      isFavorite: false,
    });
    t.same((await api.get(`/api/input-devices/${inputs[0]!.id}`)).body, inputs[0]);
  });

  t.test('favorite is set directly and validated', async (t) => {
    t.equal((await api.put(`/api/input-devices/${inputs[1]!.id}/favorite`, { isFavorite: true })).status, 204);
    t.equal((await api.get(`/api/input-devices/${inputs[1]!.id}`)).body.isFavorite, true);
    t.equal((await api.put(`/api/input-devices/${inputs[1]!.id}/favorite`, { isFavorite: 1 })).status, 400);
    t.equal((await api.put(`/api/input-devices/${UNKNOWN}/favorite`, { isFavorite: true })).status, 404);
    t.equal((await api.get(`/api/input-devices/${UNKNOWN}`)).status, 404);
    t.equal((await api.get('/api/input-devices/xyz')).status, 400);
  });

  t.test('admins delete and recreate input devices', async (t) => {
    t.equal((await api.del(`/api/input-devices/${inputs[5]!.id}`)).status, 204);
    const res = await api.post('/api/input-devices', { name: 'Turntable', kind: 'phono', input: { channel: 6 } });
    t.equal(res.status, 201);
    t.match(res.body, { name: 'Turntable', kind: 'phono', input: { channel: 6 } });
    t.equal((await api.post('/api/input-devices', { name: 'Again', input: { channel: 6 } })).status, 409);
  });
});
