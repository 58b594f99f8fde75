// Two edges of a stream player's playback on the real MPD: a start past the end of a track whose length the playlist
// knows is refused, and a player that had nothing current shows nothing again after an announcement.

import path from 'node:path';
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { musicFolder, radioStation, TRACKS, tone } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

concurrently(t, 2);
const music = musicFolder(t);
tone(path.join(music, 'chimes', 'door.flac'), 1, 990, { title: 'Door' });

t.test(
  'play with positionMs past the end of a track of known length is a 400 naming the length, and nothing plays',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const player = await rig.fifoPlayer('Hall stream', 1);
    player.reader();
    const list = (
      await rig.api.post('/api/playlists', {
        name: 'Known lengths',
        tracks: [
          { title: 'Tone A', uri: `file:${TRACKS.a}`, durationMs: 3000 },
          { title: 'Long Tone', uri: `file:${TRACKS.long}`, durationMs: 30_000 },
        ],
      })
    ).body;
    const fromFirst = await rig.api.post(`/api/players/${player.id}/play`, { playlistId: list.id, positionMs: 60_000 });
    t.equal(fromFirst.status, 400);
    t.match(
      fromFirst.body.detail,
      '"positionMs" must be from 0 to 3000, the length of track "Tone A" in ms, got 60000',
    );
    const fromSecond = await rig.api.post(`/api/players/${player.id}/play`, {
      playlistId: list.id,
      trackId: list.tracks[1].id,
      positionMs: 30_001,
    });
    t.equal(fromSecond.status, 400);
    t.match(fromSecond.body.detail, 'from 0 to 30000, the length of track "Long Tone"');
    t.match(
      (await rig.api.get(`/api/players/${player.id}/playback`)).body,
      { state: 'stopped', playlistId: null, uri: null },
      'nothing plays',
    );
    const within = await rig.api.post(`/api/players/${player.id}/play`, {
      playlistId: list.id,
      trackId: list.tracks[1].id,
      positionMs: 20_000,
    });
    t.equal(within.status, 200, 'a position inside the track plays');
  },
);

t.test('after an announcement, a player that showed nothing playing shows nothing playing again', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const player = await rig.fifoPlayer('Patio stream', 1);
  player.reader();
  const [kitchen] = (await api.get('/api/zones')).body;
  await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen.id] });
  // A station that cannot be reached: skipped, and the player is left with it queued and nothing current.
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Gone FM');
  const played = rig.events.length;
  await api.post(`/api/players/${player.id}/play`, { uri: radio.unreachable });
  await rig.next('player.trackSkipped', (e) => e.payload.playerId === player.id, played);
  // What the dashboard shows is what the last playbackChanged event said.
  const shown = await rig.next(
    'player.playbackChanged',
    (e) => e.payload.playerId === player.id && e.payload.playback.state === 'stopped',
    played,
  );
  t.match(
    shown.payload.playback,
    { index: null, uri: null, title: null, name: null, queueLength: 1 },
    'nothing playing before',
  );

  const from = rig.events.length;
  const queued = await api.post('/api/announcements', {
    uri: 'file:chimes/door.flac',
    zoneIds: [kitchen.id],
    volume: 0.5,
  });
  t.equal(queued.status, 202);
  await rig.next('announcement.started', (e) => e.payload.announcement.id === queued.body.id, from);
  const after = await rig.until(player.id, (p) => p.announcementId === null, 'the player to be given back');
  t.match(
    after,
    { state: 'stopped', index: null, uri: null, title: null, name: null, durationMs: null },
    'nothing playing again, not the old station',
  );
  const event = [...rig.events]
    .reverse()
    .find((e) => e.type === 'player.playbackChanged' && e.payload.playerId === player.id);
  t.match(event?.payload, { playback: { announcementId: null, uri: null } }, 'and the last event says the same');
});
