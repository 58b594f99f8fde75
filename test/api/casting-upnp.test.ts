// A UPnP cast through the whole daemon: a stream player on a FIFO (the real MPD) whose UPnP receiver an Admin switched
// on, Debian's gmediarender run by the daemon's casting runtime in a network namespace the test makes (libupnp
// refuses loopback), and a control point in the test casting a WAV served from the test's side of the veth pair. The
// cast pauses the playlist and shows as the player's playback with the sender's titles, its PCM reaches the FIFO, the
// sender's volume moves the player's rooms within their limits, the sender's Stop gives the output back, and a
// person's pause ends the cast. One daemon for the file: each case goes on from where the one before it left off.
import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { pauseEndsTheCast } from '../helpers/cast-rig.js';
import { tempDir } from '../helpers/daemon.js';
import { TRACKS } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import {
  ControlPoint,
  gmediarenderMissing,
  mediaServer,
  rendererLocations,
  TONE_FRAMES,
} from '../helpers/upnp-control-point.js';
import { type VethNetwork, vethNetwork } from '../helpers/veth-network.js';
import { waitFor } from '../helpers/wait-for.js';

/** What the sender says plays, in the DIDL-Lite it sets with the URI. */
const TAGS = { title: 'Blue Tone', artist: 'Sox Combo', album: 'Loopback' };

/**
 * The daemon, its player "Kitchen" on a FIFO the test reads with two rooms attached at 0.3 (the second one limited
 * to 0.4), its UPnP receiver switched on by the Admin and ready, and a control point for it.
 */
async function upnpCastRig(t: Test, net: Extract<VethNetwork, { ok: true }>) {
  const dir = tempDir('azc-upnp-cast-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const media = await mediaServer(t, net.hostAddress, dir);
  const rig = await startStreamDaemon(t, {
    // gmediarender's lines, where the control point finds it, are logged at debug level.
    config: { logLevel: 'debug' },
    castingOptions: { prefix: ['ip', 'netns', 'exec', net.ns], listenHost: net.address, listenInterface: net.nsIf },
  });
  const { api, d } = rig;
  const kitchen = await rig.fifoPlayer('Kitchen', 1);
  // The FIFO is read as a sound card would: MPD's and the cast's PCM both reach it.
  kitchen.reader();
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const attached = [zones[0]!.id, zones[1]!.id];
  t.equal((await api.post(`/api/players/${kitchen.id}/attach-zones`, { zoneIds: attached })).status, 204);
  for (const id of attached) t.equal((await api.put(`/api/zones/${id}/volume`, { volume: 0.3 })).status, 204);
  t.equal((await api.put(`/api/zones/${attached[1]}`, { maxVolume: 0.4 })).status, 200);
  const on = await api.put(`/api/players/${kitchen.id}/receivers/upnp`, { enabled: true });
  t.equal(on.status, 200, on.text);
  await d.untilLog(/Ready for rendering/);
  const location = rendererLocations(d.logs)[0]!;
  // Anywhere else it would serve on the machine's network: the test talks to nothing outside its namespace.
  if (new URL(location).hostname !== net.address)
    throw new Error(`gmediarender serves at ${location}, not in the test's namespace (${net.address})`);
  const cp = await ControlPoint.open(location);
  const casting = d.daemon.services.casting!;
  const zoneVolumes = async () => {
    const now = (await api.get('/api/zones')).body as Array<{ id: string; volume: number }>;
    return attached.map((id) => now.find((zone) => zone.id === id)!.volume);
  };
  /**
   * The sender casts the tone with `tags`: resolves with the player's playback once the cast holds the output and
   * shows its title.
   */
  const cast = async (tags: typeof TAGS) => {
    const from = rig.events.length;
    await cp.cast(media, tags);
    const { playback } = (
      await rig.next(
        'player.playbackChanged',
        (e) => e.payload.playerId === kitchen.id && e.payload.playback.title === tags.title,
        from,
      )
    ).payload;
    return playback;
  };
  return {
    ...rig,
    kitchen,
    cp,
    cast,
    zoneVolumes,
    forwarded: () => casting.pcmCounts(kitchen.id, 'upnp')?.forwarded ?? 0,
    holder: () => casting.holder(kitchen.id),
    mpdState: () => d.daemon.services.playback.engines.engineOf(kitchen.id)?.status().state,
  };
}

t.test('a UPnP cast through the daemon', async (t) => {
  const missing = gmediarenderMissing();
  if (missing) {
    t.comment(`${missing}: the UPnP receiver through the daemon goes unverified`);
    return;
  }
  const net = vethNetwork(t, 'uc', 243);
  if (!net.ok) {
    t.comment(
      `network namespaces cannot be made here (${net.why}; they need root and ip netns): the UPnP receiver through the daemon goes unverified`,
    );
    return;
  }
  const rig = await upnpCastRig(t, net);
  const { api, kitchen } = rig;

  await t.test(
    "the cast pauses the playlist that played and shows as the player's playback, with the sender's titles",
    async (t) => {
      const played = await api.post(`/api/players/${kitchen.id}/play`, { uri: `file:${TRACKS.long}` });
      t.equal(played.body.source, 'mpd', 'the playlist engine plays first');
      await rig.until(kitchen.id, (p) => p.state === 'playing', 'the track to play');
      // The sender's volume as the rooms' (0.3): the cast starts without moving them.
      await rig.cp.volume(30);
      const playback = await rig.cast(TAGS);
      t.match(playback, { source: 'upnp', state: 'playing', uri: null, queueLength: 0, ...TAGS }, 'the cast is shown');
      t.equal(rig.mpdState(), 'paused', 'the playlist was paused for it, where it was');
    },
  );

  await t.test("the cast's PCM reaches the player's FIFO", async () => {
    await waitFor(() => rig.forwarded() >= TONE_FRAMES * 4, undefined, {
      what: "the cast's second of tone written to the player's FIFO",
    });
  });

  await t.test("the sender's volume moves the player's rooms, each within its limit", async (t) => {
    /** The sender sets `level` (0..100): resolves once the player's volume changed to `volume`. */
    const senderSets = async (level: number, volume: number) => {
      const from = rig.events.length;
      await rig.cp.volume(level);
      await rig.next(
        'player.volumeChanged',
        (e) => e.payload.playerId === kitchen.id && e.payload.volume === volume,
        from,
      );
    };
    await senderSets(20, 0.2);
    t.same(await rig.zoneVolumes(), [0.2, 0.2], 'volume 20: both rooms at 0.2');
    // Last, as the player's volume (0.45) then differs from the sender's: one the daemon may hand back to it.
    await senderSets(50, 0.45);
    t.same(await rig.zoneVolumes(), [0.5, 0.4], 'volume 50: the first room at 0.5, the second held at its limit');
  });

  await t.test("the sender's Stop gives the output back: nobody holds it, and Play plays the playlist", async (t) => {
    await rig.cp.call('AVTransport', 'Stop');
    // Not a playback event: the cast reads idle (the playback shows the playlist) from the renderer's log line on,
    // and the output is let go of a step later.
    await waitFor(() => rig.holder() === null, undefined, { what: 'the output to be nobody’s' });
    t.match(
      (await api.get(`/api/players/${kitchen.id}/playback`)).body,
      { source: 'mpd', state: 'paused', uri: `file:${TRACKS.long}` },
      'the paused playlist shows again',
    );
    const resumed = await api.post(`/api/players/${kitchen.id}/resume`);
    t.match(resumed.body, { source: 'mpd', state: 'playing' }, 'Play gives the output to the playlist');
    t.equal(rig.holder(), 'mpd');
  });

  await t.test("a person's pause through the API ends the cast", async (t) => {
    const next = { ...TAGS, title: 'Green Tone' };
    t.match(await rig.cast(next), { source: 'upnp', state: 'playing', ...next }, 'the sender casts another track');
    t.equal(rig.mpdState(), 'paused', 'pausing the playlist');
    await pauseEndsTheCast(t, rig, kitchen.id, rig.mpdState);
    t.equal(rig.holder(), null, 'the output is nobody’s');
  });
});
