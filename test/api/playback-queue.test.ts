// What a stream player plays from a playlist, on the real MPD: tracks that cannot play are passed over with an event
// naming the playlist track and why, a radio served on loopback plays, and editing the playing playlist changes what
// plays next without interrupting the track that plays.

import path from 'node:path';
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { musicFolder, radioStation, TRACKS } from '../helpers/mpd-rig.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';

concurrently(t, 3);
const music = musicFolder(t);
const file = (track: string) => `file:${track}`;

t.test('a missing file is skipped with an event naming its playlist track, and the next track plays', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Kitchen stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Gaps', [file('tones/not-there.flac'), file(TRACKS.a)]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  const skip = await rig.next('player.trackSkipped', (e) => e.payload.playerId === player.id);
  t.match(skip.payload, {
    trackId: list.trackIds[0],
    index: 0,
    uri: 'file:tones/not-there.flac',
    reason: 'missing',
    detail: /no such file/,
  });
  await rig.until(player.id, (p) => p.state === 'playing' && p.trackId === list.trackIds[1], 'the track after it');
});

t.test('an unreachable stream is skipped as unreachable, and the next track plays', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Nobody');
  const player = await rig.fifoPlayer('Den stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Off air', [radio.unreachable, file(TRACKS.a)]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  const skip = await rig.next('player.trackSkipped', (e) => e.payload.playerId === player.id);
  t.match(skip.payload, { trackId: list.trackIds[0], uri: radio.unreachable, reason: 'unreachable' });
  await rig.until(player.id, (p) => p.state === 'playing' && p.trackId === list.trackIds[1], 'the track after it');
});

t.test('tracks the appliance does not play are left out, each reported as refused, and the rest plays', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Hall stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Mixed', [
    'file:///music/elsewhere.flac',
    file(TRACKS.long),
    'spotify:track:42',
  ]);
  const from = rig.events.length;
  const res = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  t.match(res.body, { state: 'playing', trackId: list.trackIds[1], index: 0, queueLength: 1 });
  const refused = rig.events
    .slice(from)
    .filter((e) => e.type === 'player.trackSkipped')
    .map((e) => e.payload as { trackId: string; reason: string; detail: string });
  t.same(
    refused.map((r) => [r.trackId, r.reason]),
    [
      [list.trackIds[0], 'refused'],
      [list.trackIds[2], 'refused'],
    ],
  );
  t.match(refused[0]!.detail, /absolute/);
  t.match(refused[1]!.detail, /unsupported scheme/);
  const only = await playlistOf(rig.api, 'Elsewhere', ['file:///music/elsewhere.flac']);
  const none = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: only.id });
  t.equal(none.status, 400, 'a playlist of which nothing can play');
  t.match(none.body, { detail: /no track of this playlist can play here/, errors: { playlistId: [/absolute/] } });
  const chosen = await rig.api.post(`/api/players/${player.id}/play`, {
    playlistId: list.id,
    trackId: list.trackIds[2],
  });
  t.equal(chosen.status, 400, 'starting from a track that cannot play');
  t.match(chosen.body.errors, { trackId: [/unsupported scheme/] });
  t.match(
    (await rig.api.get(`/api/players/${player.id}/playback`)).body,
    { state: 'playing', trackId: list.trackIds[1] },
    'the refusals changed nothing',
  );
});

t.test('a radio stream served on loopback plays, with its name and no duration', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Loopback Radio');
  const player = await rig.fifoPlayer('Radio', 1);
  const reader = player.reader();
  const list = await playlistOf(rig.api, 'Stations', [radio.url]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  await reader.receive(44_100, 'PCM from the radio');
  const playback = await rig.until(player.id, (p) => p.name === 'Loopback Radio', 'the station name');
  t.match(playback, { state: 'playing', uri: radio.url, trackId: list.trackIds[0], durationMs: null });
  t.equal(radio.listeners(), 1, 'MPD tuned in once');
  const seek = await rig.api.post(`/api/players/${player.id}/seek`, { positionMs: 1000 });
  t.equal(seek.status, 409, 'a stream has no position to seek to');
});

t.test('tracks added to the playing playlist play next, and the playing track goes on', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Patio stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Growing', [file(TRACKS.a)]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  const added = (
    await rig.api.post(`/api/playlists/${list.id}/tracks`, { tracks: [{ title: 'B', uri: file(TRACKS.b) }] })
  ).body;
  const playback = await rig.until(player.id, (p) => p.queueLength === 2, 'the queue to take the new track');
  t.match(playback, { state: 'playing', trackId: list.trackIds[0], index: 0 }, 'the first track plays on');
  await rig.until(player.id, (p) => p.trackId === added.tracks[1].id && p.state === 'playing', 'the added track, next');
});

t.test(
  'removing the playing track lets it end, then the playlist goes on; a reorder changes what follows',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const player = await rig.fifoPlayer('Study stream', 1);
    player.reader();
    const list = await playlistOf(rig.api, 'Shrinking', [
      file(TRACKS.a),
      file(TRACKS.b),
      file(TRACKS.c),
      file(TRACKS.d),
    ]);
    const [a, b, c, d] = list.trackIds;
    await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
    // [a, b, c, d] playing a → [a, d, c, b]: after a comes d.
    t.equal((await rig.api.post(`/api/playlists/${list.id}/reorder`, { newOrder: [0, 3, 2, 1] })).status, 204);
    t.equal((await rig.api.del(`/api/playlists/${list.id}/tracks`, { trackIds: [a] })).status, 204);
    const detached = await rig.until(player.id, (p) => p.queueLength === 3, 'the queue without the playing track');
    t.match(
      detached,
      { state: 'playing', uri: file(TRACKS.a), trackId: null, index: null },
      'the removed track plays to its end, outside the queue',
    );
    await rig.until(player.id, (p) => p.trackId === d && p.index === 0, 'the track the reorder put after it');
    t.match((await rig.api.post(`/api/players/${player.id}/next`)).body, { trackId: c, index: 1 });
    t.match((await rig.api.post(`/api/players/${player.id}/next`)).body, { trackId: b, index: 2 });
  },
);

t.test('deleting the playing playlist lets the playing track end, then nothing plays', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Garage stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Doomed', [file(TRACKS.a), file(TRACKS.b)]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  t.equal((await rig.api.del(`/api/playlists/${list.id}`)).status, 204);
  const after = await rig.until(player.id, (p) => p.playlistId === null && p.queueLength === 0, 'the queue to empty');
  t.match(after, { state: 'playing', uri: file(TRACKS.a) }, 'the playing track goes on');
  await rig.until(player.id, (p) => p.state === 'stopped', 'the end, with nothing after it');
});
