// The music library through the API, read by a stream player's real MPD: folders and tracks with their tags a page
// at a time, tracks added to a playlist from it, a rescan that finds a new file, and the refusals.

import path from 'node:path';
import t from 'tap';
import { createUser, injectClient } from '../helpers/inject.js';
import { musicFolder, TRACKS, tone } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

t.test('the library lists folders first, then tracks with their tags, a page at a time', async (t) => {
  const rig = await startStreamDaemon(t);
  await rig.fifoPlayer('Reader', 1);
  const top = await rig.api.get('/api/library');
  t.equal(top.status, 200);
  t.same(
    top.body.map((e: { kind: string; uri: string }) => [e.kind, e.uri]),
    [
      ['folder', 'long'],
      ['folder', 'tones'],
    ],
  );
  t.equal(top.headers.get('x-total-count'), '2');
  const first = await rig.api.get('/api/library?folder=tones&limit=2');
  t.equal(first.headers.get('x-total-count'), '4');
  t.match(first.body, [
    {
      kind: 'track',
      uri: `file:${TRACKS.a}`,
      name: 'a.flac',
      title: 'Tone A',
      artist: 'Sine Band',
      album: 'Tones',
      durationMs: 3000,
    },
    { kind: 'track', uri: `file:${TRACKS.b}`, title: 'Tone B' },
  ]);
  t.equal(first.headers.get('link'), '</api/library?folder=tones&offset=2&limit=2>; rel="next"');
  const second = await rig.api.get('/api/library?folder=tones&offset=2&limit=2');
  t.match(second.body, [
    { uri: `file:${TRACKS.c}`, title: null },
    { uri: `file:${TRACKS.d}`, title: 'Tone D', artist: 'Mp3 Band' },
  ]);
  t.equal(second.headers.get('link'), null, 'no next page after the last');

  // What a dashboard does: add a listed track to a playlist, and play it.
  const entry = first.body[0];
  const list = (
    await rig.api.post('/api/playlists', {
      name: 'From the library',
      tracks: [{ title: entry.title, uri: entry.uri, durationMs: entry.durationMs }],
    })
  ).body;
  t.match(list.tracks, [{ title: 'Tone A', uri: `file:${TRACKS.a}`, durationMs: 3000 }]);
});

t.test('a rescan finds a file added to the music folder, with scan events at both ends', async (t) => {
  const music = musicFolder(t);
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Scanner', 1);
  tone(path.join(music, 'new', 'fresh.flac'), 1, 880, { title: 'Fresh' });
  const from = rig.events.length;
  const res = await rig.api.post('/api/library/rescan');
  t.equal(res.status, 202);
  t.same(res.body, { scanning: true });
  await rig.next('library.scanChanged', (e) => e.payload.scanning === true, from);
  await rig.next('library.scanChanged', (e) => e.payload.scanning === false, from);
  t.match((await rig.api.get('/api/library?folder=new')).body, [
    { kind: 'track', uri: 'file:new/fresh.flac', title: 'Fresh' },
  ]);
  t.equal((await rig.api.post(`/api/players/${player.id}/play`, { uri: 'file:new/fresh.flac' })).body.title, 'Fresh');
});

t.test('the library refuses what is not in it, bad pages, and a viewer’s rescan; everyone may browse', async (t) => {
  const rig = await startStreamDaemon(t);
  const viewer = injectClient(rig.d.daemon, (await createUser(rig.api, 'listener', 'Viewer')).apiKey);
  t.equal((await viewer.get('/api/library')).status, 409, 'no stream player to read it with yet');
  await rig.fifoPlayer('Reader', 1);
  t.equal((await viewer.get('/api/library?folder=tones')).status, 200, 'a viewer browses');
  t.equal((await viewer.post('/api/library/rescan')).status, 403, 'a viewer does not rescan');
  const missing = await rig.api.get('/api/library?folder=nothing-here');
  t.equal(missing.status, 404);
  t.match(missing.body.detail, /has no folder "nothing-here"/);
  const climbing = await rig.api.get('/api/library?folder=../etc');
  t.equal(climbing.status, 400);
  t.match(climbing.body.errors, { folder: [/climbs out/] });
  t.equal((await rig.api.get('/api/library?limit=501')).status, 400, 'a page larger than 500');
  t.equal((await rig.api.get('/api/library?limit=0')).status, 400);
});
