// Casting through the whole daemon: a stream player whose Squeezelite receiver an Admin switched on (Debian's
// squeezelite, a stand-in slimproto server on loopback, the player's FIFO output, the real MPD). The cast pauses the
// playlist and shows as the player's playback, the server's volume moves the player's rooms, a person's pause ends
// the cast, Play gives the output back to the playlist, and an announcement holds the output and gives it back.

import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { macOf } from '../../drivers/receivers/squeezelite.js';
import { CHIME, chimeFolder } from '../helpers/announcement-rig.js';
import { castRig, pauseEndsTheCast } from '../helpers/cast-rig.js';
import { tempDir } from '../helpers/daemon.js';
import { TRACKS } from '../helpers/mpd-rig.js';
import { UNITY_GAIN } from '../helpers/slimproto-server.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { waitFor } from '../helpers/wait-for.js';

/** What Lyrion sends for volume 50 (a 16.16 gain): the receiver maps it to 0.5. */
const HALF_GAIN = 3840;

/** The cast rig, with two zones attached to the player at one level, and the counts the tests read. */
async function castingRig(t: Test, options: { stateDir?: string; music?: string } = {}) {
  const rig = await castRig(t, options);
  const { api, d, kitchen } = rig;
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const attached = [zones[0]!.id, zones[1]!.id];
  t.equal((await api.post(`/api/players/${kitchen.id}/attach-zones`, { zoneIds: attached })).status, 204);
  // The rooms at one level, so the player's group volume is each room's.
  for (const id of attached) t.equal((await api.put(`/api/zones/${id}/volume`, { volume: 0.3 })).status, 204);
  const casting = d.daemon.services.casting!;
  const forwarded = () => casting.pcmCounts(kitchen.id, 'squeezelite')?.forwarded ?? 0;
  const mpdState = () => d.daemon.services.playback.engines.engineOf(kitchen.id)?.status().state;
  return { ...rig, attached, forwarded, mpdState };
}

t.test(
  "a cast pauses the player's playlist and becomes its playback; a person's pause ends it; Play gives the output back",
  async (t) => {
    const rig = await castingRig(t);
    const { api, kitchen } = rig;
    t.equal(
      (await api.post(`/api/players/${kitchen.id}/play`, { uri: `file:${TRACKS.long}` })).body.source,
      'mpd',
      'the playlist engine plays first',
    );
    await rig.until(kitchen.id, (p) => p.state === 'playing', 'the track to play');

    const playback = await rig.cast();
    t.match(playback, { source: 'squeezelite', state: 'playing', uri: null, queueLength: 0 }, 'the cast is shown');
    t.equal(rig.mpdState(), 'paused', 'the playlist was paused for it, where it was');
    await waitFor(() => rig.forwarded() > 0, undefined, { what: "the cast's PCM on the player's output" });
    const receiver = (await api.get(`/api/players/${kitchen.id}/receivers`)).body.items.find(
      (r: { kind: string }) => r.kind === 'squeezelite',
    );
    t.match(receiver, { enabled: true, phase: 'running', cast: 'playing' }, 'its receiver says it casts');

    await pauseEndsTheCast(t, rig, kitchen.id, rig.mpdState);
    await waitFor(() => rig.server.pauses.length === 1, undefined, {
      what: 'the cast paused at its music server',
      changes: rig.server.changes,
    });
    await rig.server.stat('STMp');

    const resumed = await api.post(`/api/players/${kitchen.id}/resume`);
    t.match(resumed.body, { source: 'mpd', state: 'playing' }, 'Play gives the output back to the playlist');
  },
);

t.test("the server's volume is the rooms' volume: the player's zones move, each within its limit", async (t) => {
  const rig = await castingRig(t);
  const { api, kitchen, attached } = rig;
  t.equal((await api.put(`/api/zones/${attached[1]}`, { maxVolume: 0.4 })).status, 200);
  const zoneVolumes = async () => {
    const zones = (await api.get('/api/zones')).body as Array<{ id: string; volume: number }>;
    return attached.map((id) => zones.find((zone) => zone.id === id)!.volume);
  };
  const from = rig.events.length;
  await rig.cast(HALF_GAIN);
  await rig.next('player.volumeChanged', (e) => e.payload.playerId === kitchen.id, from);
  t.same(await zoneVolumes(), [0.5, 0.4], "the server's volume 50 when the cast began: the second room at its limit");
  const later = rig.events.length;
  // A gain of 1000 is about −36 dB: volume 27 on Lyrion's scale.
  rig.server.volume(1000, true);
  await rig.next('player.volumeChanged', (e) => e.payload.playerId === kitchen.id, later);
  const [first, second] = await zoneVolumes();
  t.ok(first! < 0.5 && second! < 0.4, `turned down in the app: both rooms lower (${first}, ${second})`);
  t.equal(Math.round((first! / second!) * 100) / 100, 1.25, 'keeping their balance');
  // A volume set here goes to the server, whose slider then shows it (as it shows where a limit holds the rooms).
  t.equal((await api.put(`/api/players/${kitchen.id}/volume`, { volume: 0.2 })).status, 204);
  await waitFor(() => rig.server.mixer.at(-1)?.volume === 20, undefined, {
    what: 'the volume set in the API at the music server',
    changes: rig.server.changes,
  });
  t.equal(rig.server.mixer.at(-1)?.mac, macOf(kitchen.id), "as the player's mixer volume");
});

t.test('an announcement holds the output during a cast and gives it back to the cast', async (t) => {
  const rig = await castingRig(t);
  const { api, kitchen, attached } = rig;
  await rig.cast();
  const from = rig.events.length;
  const id = (await api.post('/api/announcements', { uri: CHIME, zoneIds: [attached[0]], volume: 0.6 })).body.id;
  const during = await rig.next(
    'player.playbackChanged',
    (e) => e.payload.playerId === kitchen.id && e.payload.playback.source === 'announcement',
    from,
  );
  t.equal(during.payload.playback.announcementId, id, 'the announcement holds the player');
  await rig.next('announcement.ended', (e) => e.payload.announcement.id === id, from);
  const after = await rig.until(kitchen.id, (p) => p.source === 'squeezelite', 'the cast to hold the output again');
  t.equal(after.state, 'playing', 'the cast plays on');
  const before = rig.forwarded();
  await waitFor(() => rig.forwarded() > before, undefined, { what: "the cast's PCM on the output again" });
});

t.test(
  'a restart while casting: the receiver stops with the daemon, runs again after, and the next cast plays',
  async (t) => {
    const stateDir = tempDir('azc-cast-restart-');
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const music = chimeFolder(t);
    const first = await castingRig(t, { stateDir, music });
    await first.cast();
    await first.d.stop();
    await waitFor(() => !first.server.connected, undefined, { what: 'squeezelite to stop with the daemon' });
    const second = await startStreamDaemon(t, { stateDir, music });
    await second.until(first.kitchen.id, (p) => p.engine.state === 'up', "the player's MPD after the restart");
    await first.server.hello(2);
    const receivers = (await second.api.get(`/api/players/${first.kitchen.id}/receivers`)).body.items;
    t.match(
      receivers.find((r: { kind: string }) => r.kind === 'squeezelite'),
      { enabled: true, phase: 'running', server: first.server.address },
      'switched on still, and running',
    );
    first.server.volume(UNITY_GAIN, false);
    first.server.play();
    const playback = await second.until(
      first.kitchen.id,
      (p) => p.source === 'squeezelite',
      'the cast after the restart',
    );
    t.equal(playback.state, 'playing');
    const casting = second.d.daemon.services.casting!;
    await waitFor(() => (casting.pcmCounts(first.kitchen.id, 'squeezelite')?.forwarded ?? 0) > 0, undefined, {
      what: "the cast's PCM on the output after the restart",
    });
  },
);
