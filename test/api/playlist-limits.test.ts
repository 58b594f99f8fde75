// Caps on playlists, tracks and exports (config.limits), and the paged summary list of GET /api/playlists.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { startDaemon, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

const limits = (overrides: Partial<ReturnType<typeof defaultConfig>['limits']>) => ({
  config: { limits: { ...defaultConfig().limits, ...overrides } },
});
const track = (i: number, durationMs?: number) => ({ title: `T${i}`, uri: `file:///m/${i}.flac`, durationMs });

t.test('playlist and track caps', async (t) => {
  const d = await startTestDaemon(t, limits({ playlists: 3, tracksPerPlaylist: 4 }));
  const admin = injectClient(d.daemon, d.adminKey);
  const operator = injectClient(d.daemon, (await createUser(admin, 'operator', 'Operator')).apiKey);
  const total = async () => (await operator.get('/api/playlists')).headers.get('x-total-count');

  t.test('an operator cannot create more playlists than the cap', async (t) => {
    const ids: string[] = [];
    t.teardown(async () => {
      for (const id of ids) await operator.del(`/api/playlists/${id}`);
    });
    for (const name of ['A', 'B', 'C']) ids.push((await operator.post('/api/playlists', { name })).body.id);
    const refused = await operator.post('/api/playlists', { name: 'D' });
    t.equal(refused.status, 409);
    t.match(refused.headers.get('content-type'), /problem\+json/);
    t.match(refused.body.detail, /at most 3 playlists/);
    t.equal(await total(), '3', 'nothing was created');
    t.equal((await operator.del(`/api/playlists/${ids.pop()}`)).status, 204);
    const made = await operator.post('/api/playlists', { name: 'D' });
    t.equal(made.status, 201, 'deleting one makes room');
    ids.push(made.body.id);
  });

  t.test('a playlist cannot be created with more tracks than the cap', async (t) => {
    const before = await total();
    const refused = await operator.post('/api/playlists', {
      name: 'Long',
      tracks: [0, 1, 2, 3, 4].map((i) => track(i)),
    });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /at most 4 tracks/);
    t.equal(await total(), before, 'nothing was created');
  });

  t.test('appending past the track cap is refused and adds nothing', async (t) => {
    const list = (await operator.post('/api/playlists', { name: 'Grow', tracks: [0, 1, 2].map((i) => track(i)) })).body;
    t.teardown(() => operator.del(`/api/playlists/${list.id}`));
    const refused = await operator.post(`/api/playlists/${list.id}/tracks`, { tracks: [track(3), track(4)] });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /at most 4 tracks; this one has 3/);
    t.equal((await operator.get(`/api/playlists/${list.id}`)).body.tracks.length, 3);
    const filled = await operator.post(`/api/playlists/${list.id}/tracks`, { tracks: [track(3)] });
    t.equal(filled.status, 200);
    t.equal(filled.body.tracks.length, 4, 'up to the cap is fine');
    t.equal((await operator.post(`/api/playlists/${list.id}/tracks`, { tracks: [track(5)] })).status, 409);
  });
});

t.test('the playlist list is paged', async (t) => {
  const d = await startTestDaemon(t, limits({ playlistPageDefault: 2, playlistPageMax: 3 }));
  const admin = injectClient(d.daemon, d.adminKey);
  const viewer = injectClient(d.daemon, (await createUser(admin, 'viewer', 'Viewer')).apiKey);
  const names = ['P1', 'P2', 'P3', 'P4', 'P5'];
  const ids: string[] = [];
  for (const name of names)
    ids.push((await admin.post('/api/playlists', { name, tracks: [track(1, 1000), track(2)] })).body.id);

  t.test('each item is a summary with exactly these fields', async (t) => {
    const [first] = (await viewer.get('/api/playlists')).body;
    t.same(Object.keys(first).sort(), ['createdAt', 'durationMs', 'id', 'isFavorite', 'name', 'trackCount']);
    t.match(first, { id: ids[0], name: 'P1', isFavorite: false, trackCount: 2, durationMs: 1000 });
  });

  t.test('pages follow creation order, with the total and a link to the next page', async (t) => {
    const first = await viewer.get('/api/playlists');
    t.same(
      first.body.map((p: { name: string }) => p.name),
      ['P1', 'P2'],
      'the default page size comes from the config',
    );
    t.equal(first.headers.get('x-total-count'), '5');
    t.equal(first.headers.get('link'), '</api/playlists?offset=2&limit=2>; rel="next"');
    const second = await viewer.get('/api/playlists?offset=2&limit=2');
    t.same(
      second.body.map((p: { name: string }) => p.name),
      ['P3', 'P4'],
    );
    t.equal(second.headers.get('link'), '</api/playlists?offset=4&limit=2>; rel="next"');
    const last = await viewer.get('/api/playlists?offset=4&limit=2');
    t.same(
      last.body.map((p: { name: string }) => p.name),
      ['P5'],
    );
    t.equal(last.headers.get('link'), null, 'no next page after the last');
    const max = await viewer.get('/api/playlists?limit=3&offset=1');
    t.same(
      max.body.map((p: { name: string }) => p.name),
      ['P2', 'P3', 'P4'],
    );
    const beyond = await viewer.get('/api/playlists?offset=9');
    t.same(beyond.body, []);
    t.equal(beyond.headers.get('x-total-count'), '5');
  });

  t.test('a bad limit or offset is a 400 naming the parameter', async (t) => {
    const bad = [
      'limit=0',
      'limit=4',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'offset=-1',
      'offset=2.5',
      'offset=x',
      'limit=1&limit=2',
      'offset=1e3',
    ];
    for (const query of bad) {
      const res = await viewer.get(`/api/playlists?${query}`);
      t.equal(res.status, 400, `${query} is refused`);
      t.match(res.headers.get('content-type'), /problem\+json/);
      t.ok(res.body.errors?.limit || res.body.errors?.offset, `${query}: names the parameter`);
    }
  });

  t.test('one playlist still comes with all its tracks', async (t) => {
    const full = await viewer.get(`/api/playlists/${ids[0]}`);
    t.same(
      full.body.tracks.map((x: { title: string }) => x.title),
      ['T1', 'T2'],
    );
  });

  t.test('the OpenAPI document describes the summary list, its paging and the download', async (t) => {
    const doc = (await admin.get('/api/openapi.json')).body;
    const list = doc.paths['/api/playlists'].get;
    t.equal(list.responses['200'].content['application/json'].schema.items.title, 'PlaylistSummary');
    t.notOk(list.responses['200'].content['application/json'].schema.items.properties.tracks, 'no tracks in the list');
    t.same(list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), [
      'query:limit',
      'query:offset',
    ]);
    t.ok(list.responses['400'], 'documents the 400 for bad paging');
    t.ok(doc.paths['/api/playlists/{id}/m3u'].get.responses['200'].content['audio/x-mpegurl']);
  });
});

// Each case has a daemon of its own: the export totals are counted once and kept, so cases sharing a directory
// would depend on the files the others left.
t.test('export caps', async (t) => {
  const setup = async (t: Test) => {
    const d = await startTestDaemon(t, limits({ exportFiles: 3, exportBytes: 100 }));
    const api = injectClient(d.daemon, d.adminKey);
    const exportDir = path.join(d.stateDir, 'exports');
    const small = (await api.post('/api/playlists', { name: 'S' })).body.id as string;
    const big = (await api.post('/api/playlists', { name: 'B', tracks: [{ title: 't', uri: `u:${'x'.repeat(60)}` }] }))
      .body.id as string;
    return {
      exportDir,
      small,
      big,
      smallText: (await api.get(`/api/playlists/${small}/m3u`)).text,
      bigText: (await api.get(`/api/playlists/${big}/m3u`)).text,
      exportTo: (id: string, filePath: string) => api.post(`/api/playlists/${id}/export`, { filePath }),
      read: (name: string) => readFileSync(path.join(exportDir, name), 'utf8'),
    };
  };

  t.test('the sizes this test relies on', async (t) => {
    const { smallText, bigText } = await setup(t);
    t.equal(Buffer.byteLength(smallText), 20);
    t.equal(Buffer.byteLength(bigText), 96);
  });

  t.test('a new file that would pass the byte cap is refused and not written', async (t) => {
    const { exportTo, small, big, exportDir } = await setup(t);
    t.equal((await exportTo(small, 'a.m3u8')).status, 204);
    t.equal((await exportTo(small, 'b.m3u8')).status, 204);
    const refused = await exportTo(big, 'c.m3u8');
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /at most 100 bytes/);
    t.notOk(existsSync(path.join(exportDir, 'c.m3u8')));
  });

  t.test('a new file past the file cap is refused, and so are the folders it would need', async (t) => {
    const { exportTo, small, exportDir } = await setup(t);
    for (const name of ['a.m3u8', 'b.m3u8', 'c.m3u8']) t.equal((await exportTo(small, name)).status, 204);
    const refused = await exportTo(small, 'd.m3u8');
    t.equal(refused.status, 409);
    t.match(refused.body.detail, /at most 3 files/);
    t.equal((await exportTo(small, 'new/deeper/d.m3u8')).status, 409);
    t.same(readdirSync(exportDir).sort(), ['a.m3u8', 'b.m3u8', 'c.m3u8'], 'no file, folder or temporary file left');
  });

  t.test('replacing an existing file is allowed at the file cap while the bytes stay under the cap', async (t) => {
    const { exportTo, small, big, read, smallText } = await setup(t);
    for (const name of ['a.m3u8', 'b.m3u8', 'c.m3u8']) t.equal((await exportTo(small, name)).status, 204);
    const tooBig = await exportTo(big, 'a.m3u8');
    t.equal(tooBig.status, 409, '20 + 20 + 96 bytes would pass 100');
    t.equal(read('a.m3u8'), smallText, 'the old file is untouched');
    t.equal((await exportTo(small, 'a.m3u8')).status, 204);
    t.equal((await exportTo(small, 'd.m3u8')).status, 409, 'while a new file is still refused');
  });

  t.test('files already in the export directory count toward the caps', async (t) => {
    const stateDir = tempDir();
    mkdirSync(path.join(stateDir, 'exports', 'old'), { recursive: true });
    writeFileSync(path.join(stateDir, 'exports', 'old', 'one.m3u8'), '#EXTM3U\n');
    writeFileSync(path.join(stateDir, 'exports', 'two.m3u'), '#EXTM3U\n');
    const again = await startDaemon({ stateDir, ...limits({ exportFiles: 3 }) });
    t.teardown(async () => {
      await again.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });
    const api2 = injectClient(again.daemon, again.adminKey);
    const id = (await api2.post('/api/playlists', { name: 'S' })).body.id;
    t.equal((await api2.post(`/api/playlists/${id}/export`, { filePath: 'three.m3u8' })).status, 204);
    t.equal((await api2.post(`/api/playlists/${id}/export`, { filePath: 'four.m3u8' })).status, 409);
    t.equal(
      (await api2.post(`/api/playlists/${id}/export`, { filePath: 'old/one.m3u8' })).status,
      204,
      'replacing is fine',
    );
  });
});
