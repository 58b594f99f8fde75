// Transport of a stream player through the API, played by the real MPD into a FIFO the test reads: PCM while playing
// and none while paused, positions, next, previous, seek, a playlist played to its end, and the player's state.
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { musicFolder } from '../helpers/mpd-rig.js';
import { playlistOf, startStreamDaemon, TRACKS } from '../helpers/stream-rig.js';

concurrently(t, 3);
const music = musicFolder(t);
const file = (track: string) => `file:${track}`;

t.test('a playlist plays: PCM arrives while playing, none while paused, and again after resume', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Kitchen stream', 1);
  const reader = player.reader();
  const list = await playlistOf(rig.api, 'Long', [file(TRACKS.long)]);
  const played = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  t.equal(played.status, 200);
  t.match(played.body, {
    state: 'playing',
    playlistId: list.id,
    trackId: list.trackIds[0],
    index: 0,
    title: 'Long Tone',
    durationMs: 30_000,
  });
  await reader.receive(176_400, 'a second of PCM');
  const paused = await rig.api.post(`/api/players/${player.id}/pause`);
  t.match(paused.body, { state: 'paused', trackId: list.trackIds[0] });
  await reader.drained();
  t.equal(await reader.during(75), 0, 'no PCM while paused');
  t.match((await rig.api.post(`/api/players/${player.id}/resume`)).body, { state: 'playing' });
  await reader.receive(176_400, 'PCM again after resume');
});

t.test('the position advances, with position events at most once a second', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Den stream', 1);
  player.reader();
  const from = rig.events.length;
  await rig.api.post(`/api/players/${player.id}/play`, { uri: file(TRACKS.long) });
  const first = await rig.next('player.position', (e) => e.payload.playerId === player.id, from);
  await rig.next('player.position', (e) => e.payload.positionMs >= first.payload.positionMs + 2000, from);
  const ticks = rig.events
    .slice(from)
    .filter((e) => e.type === 'player.position')
    .map((e) => e.payload as { positionMs: number; positionAt: string });
  for (let i = 1; i < ticks.length; i++) {
    t.ok(
      Date.parse(ticks[i]!.positionAt) - Date.parse(ticks[i - 1]!.positionAt) >= 999,
      `position ${i} was read a second after the one before`,
    );
    t.ok(ticks[i]!.positionMs > ticks[i - 1]!.positionMs, `position ${i} is further into the track`);
  }
  const playback = (await rig.api.get(`/api/players/${player.id}/playback`)).body;
  t.ok(playback.positionMs >= 2000, `GET playback has moved on too (${playback.positionMs} ms)`);
});

t.test('next, previous and seek move through the playlist; next on the last track stops it', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Hall stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Three', [file(TRACKS.long), file(TRACKS.a), file(TRACKS.b)]);
  await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
  t.match((await rig.api.post(`/api/players/${player.id}/next`)).body, {
    index: 1,
    trackId: list.trackIds[1],
    title: 'Tone A',
  });
  t.match((await rig.api.post(`/api/players/${player.id}/previous`)).body, {
    index: 0,
    trackId: list.trackIds[0],
    title: 'Long Tone',
  });
  const sought = (await rig.api.post(`/api/players/${player.id}/seek`, { positionMs: 20_000 })).body;
  t.ok(sought.positionMs >= 20_000 && sought.positionMs < 25_000, `the seek moved to 20 s (${sought.positionMs})`);
  t.match(
    (await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id, trackId: list.trackIds[2] })).body,
    { index: 2, trackId: list.trackIds[2] },
  );
  t.match((await rig.api.post(`/api/players/${player.id}/next`)).body, {
    state: 'stopped',
    index: null,
    trackId: null,
    title: null,
  });
});

t.test('a playlist plays from a track at a position, to its end, and the player is idle again', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Patio stream', 1);
  player.reader();
  const list = await playlistOf(rig.api, 'Tones', [file(TRACKS.long), file(TRACKS.a), file(TRACKS.b)]);
  const from = rig.events.length;
  const started = await rig.api.post(`/api/players/${player.id}/play`, {
    playlistId: list.id,
    trackId: list.trackIds[1],
    positionMs: 1500,
  });
  t.match(started.body, { index: 1, trackId: list.trackIds[1] });
  t.ok(started.body.positionMs >= 1500, `it starts 1.5 s into the track (${started.body.positionMs})`);
  t.equal(
    (await rig.api.get(`/api/players/${player.id}`)).body.state,
    'playing',
    "the player's state follows the playback",
  );
  await rig.until(player.id, (p) => p.state === 'stopped', 'the end of the playlist');
  const tracks = rig.events
    .slice(from)
    .filter((e) => e.type === 'player.playbackChanged' && e.payload.playerId === player.id)
    .map((e) => (e.payload as { playback: { trackId: string | null } }).playback.trackId);
  t.same(
    [...new Set(tracks)],
    [list.trackIds[1], list.trackIds[2], null],
    'the second and third tracks played, then nothing',
  );
  t.equal((await rig.api.get(`/api/players/${player.id}`)).body.state, 'idle', 'stopped: the player is idle');
});

t.test('a URI plays on its own, and its tags come from the file', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Study stream', 1);
  const reader = player.reader();
  const res = await rig.api.post(`/api/players/${player.id}/play`, { uri: file(TRACKS.d) });
  t.match(res.body, {
    state: 'playing',
    playlistId: null,
    trackId: null,
    index: 0,
    queueLength: 1,
    uri: file(TRACKS.d),
    title: 'Tone D',
    artist: 'Mp3 Band',
  });
  await reader.receive(44_100, 'PCM of the MP3');
});

t.test(
  'transport is refused with problem details: a bad body, an input-only player, nothing to seek, a track not in the playlist',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const player = await rig.fifoPlayer('Bedroom stream', 1);
    const wired = (await api.post('/api/players', { name: 'Turntable', input: { channel: 2 } })).body;
    const list = await playlistOf(api, 'One', [file(TRACKS.a)]);
    const other = await playlistOf(api, 'Other', [file(TRACKS.b)]);
    const empty = (await api.post('/api/playlists', { name: 'Empty' })).body;
    const cases: Array<[string, () => Promise<{ status: number; body: any; headers: Headers }>, number, RegExp]> = [
      [
        'neither playlistId nor uri',
        () => api.post(`/api/players/${player.id}/play`, {}),
        400,
        /send "playlistId".*or "uri"/,
      ],
      [
        'both playlistId and uri',
        () => api.post(`/api/players/${player.id}/play`, { playlistId: list.id, uri: file(TRACKS.a) }),
        400,
        /not both/,
      ],
      [
        'a URI of another scheme',
        () => api.post(`/api/players/${player.id}/play`, { uri: 'spotify:track:1' }),
        400,
        /unsupported scheme/,
      ],
      [
        'a URI that climbs out of the music folder',
        () => api.post(`/api/players/${player.id}/play`, { uri: 'file:../etc/passwd' }),
        400,
        /climbs out/,
      ],
      [
        'a track of another playlist',
        () => api.post(`/api/players/${player.id}/play`, { playlistId: list.id, trackId: other.trackIds[0] }),
        400,
        /has no track/,
      ],
      [
        'a playlist that does not exist',
        () => api.post(`/api/players/${player.id}/play`, { playlistId: '00000000-0000-4000-8000-000000000000' }),
        404,
        /no playlist/,
      ],
      [
        'an empty playlist',
        () => api.post(`/api/players/${player.id}/play`, { playlistId: empty.id }),
        409,
        /has no tracks/,
      ],
      [
        'seeking while stopped',
        () => api.post(`/api/players/${player.id}/seek`, { positionMs: 1000 }),
        409,
        /nothing is playing/,
      ],
      ['a negative position', () => api.post(`/api/players/${player.id}/seek`, { positionMs: -1 }), 400, /positionMs/],
      [
        'a player wired to its input',
        () => api.post(`/api/players/${wired.id}/play`, { uri: file(TRACKS.a) }),
        409,
        /device wired to input 2.*Give it an output/,
      ],
      [
        'the playback of a player wired to its input',
        () => api.get(`/api/players/${wired.id}/playback`),
        409,
        /device wired to input 2/,
      ],
    ];
    for (const [what, request, status, detail] of cases) {
      const res = await request();
      t.equal(res.status, status, what);
      t.match(res.headers.get('content-type'), /application\/problem\+json/, `${what}: problem details`);
      t.match(res.body.detail, detail, what);
    }
    await api.post(`/api/players/${player.id}/play`, { playlistId: list.id });
    const pastEnd = await api.post(`/api/players/${player.id}/seek`, { positionMs: 60_000 });
    t.equal(pastEnd.status, 400, 'seeking past the end of the track');
    t.match(pastEnd.body.errors, { positionMs: [/from 0 to 3000/] });
  },
);

t.test('operators control only their assigned stream players, viewers only read', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const mine = await rig.fifoPlayer('Mine', 1);
  const theirs = await rig.fifoPlayer('Theirs', 2);
  const operator = await createUser(api, 'kitchen', 'Operator', { playerIds: [mine.id], zoneIds: [] });
  const viewer = await createUser(api, 'guest', 'Viewer', { playerIds: [mine.id], zoneIds: [] });
  const asOperator = injectClient(rig.d.daemon, operator.apiKey);
  const asViewer = injectClient(rig.d.daemon, viewer.apiKey);
  t.equal(
    (await asOperator.post(`/api/players/${mine.id}/play`, { uri: file(TRACKS.long) })).status,
    200,
    'its own player',
  );
  t.equal(
    (await asOperator.post(`/api/players/${theirs.id}/play`, { uri: file(TRACKS.long) })).status,
    404,
    'another player does not exist for it',
  );
  t.equal((await asOperator.get(`/api/players/${theirs.id}/playback`)).status, 404);
  t.equal((await asViewer.get(`/api/players/${mine.id}/playback`)).status, 200, 'a viewer reads the playback');
  t.equal((await asViewer.post(`/api/players/${mine.id}/pause`)).status, 403, 'a viewer cannot pause');
  t.equal((await asOperator.post(`/api/players/${mine.id}/pause`)).body.state, 'paused');
});
