// Casting through the whole daemon into a stream player whose output is an ALSA device (`default`, made alsa-lib's
// null PCM for the test, so no sound card is needed): an Admin switching Squeezelite on moves the player's MPD (the
// real one) to its private FIFO and the daemon's aplay plays the device; the playlist's PCM, then a cast's from
// Debian's squeezelite and a stand-in slimproto server, reach aplay through the switch; switched off, aplay ends and
// MPD plays into the device again.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { castFifo, playerFiles } from '../../drivers/mpd/config.js';
import { nullAlsaDefault } from '../helpers/aplay-stand-in.js';
import { tempDir } from '../helpers/daemon.js';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { soxTone } from '../helpers/receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from '../helpers/slimproto-server.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { waitFor } from '../helpers/wait-for.js';

/** One second of PCM (44.1 kHz, 16-bit, stereo). */
const SECOND = 44_100 * 4;

t.test(
  "an ALSA player's receiver switched on: its MPD and then a cast reach the device through the daemon's aplay",
  async (t) => {
    const music = musicFolder(t);
    // MPD runs confined: it reads the ALSA configuration from the music folder.
    nullAlsaDefault(t, music);
    const rig = await startStreamDaemon(t, { music });
    const { api, d } = rig;
    const created = await api.post('/api/players', {
      name: 'Kitchen',
      input: { channel: 1 },
      output: { kind: 'alsa', device: 'default' },
    });
    t.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    await rig.until(id, (p) => p.engine.state === 'up', "the player's MPD to be up");
    const conf = () => readFileSync(playerFiles(d.stateDir, id).conf, 'utf8');
    t.match(conf(), 'device "default"', 'MPD plays into the device while no receiver is on');

    const dir = tempDir('azc-cast-alsa-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const tone = path.join(dir, 'tone.flac');
    soxTone(tone, 30);
    const server = await SlimprotoServer.start(tone);
    t.teardown(() => server.close());
    const casting = d.daemon.services.casting!;
    const counts = (source: 'mpd' | 'squeezelite') => casting.pcmCounts(id, source) ?? { forwarded: 0, seen: 0 };
    const written = () => casting.deviceOutput(id)?.written ?? 0;

    const on = await api.put(`/api/players/${id}/receivers/squeezelite`, { enabled: true, server: server.address });
    t.equal(on.status, 200, on.text);
    await waitFor(() => casting.deviceOutput(id)?.pid, undefined, { what: "the daemon's aplay on the device" });
    // The MPD restarted with the FIFO writes its configuration as it starts.
    const fifo = castFifo(playerFiles(d.stateDir, id));
    await waitFor(() => conf().includes(`path "${fifo}"`), undefined, { what: 'MPD on its private FIFO' });
    t.notMatch(conf(), 'type "alsa"', 'MPD no longer opens the device');
    await rig.until(id, (p) => p.engine.state === 'up', "the player's MPD up on its FIFO");

    const played = await api.post(`/api/players/${id}/play`, { uri: `file:${TRACKS.long}` });
    t.equal(played.status, 200, played.text);
    await waitFor(() => counts('mpd').forwarded >= SECOND, undefined, { what: "the playlist's PCM let through" });
    await waitFor(() => written() >= SECOND, undefined, { what: "the playlist's PCM taken by aplay" });

    const from = rig.events.length;
    await server.hello();
    server.volume(UNITY_GAIN, false);
    server.play();
    await rig.next(
      'player.playbackChanged',
      (e) => e.payload.playerId === id && e.payload.playback.source === 'squeezelite',
      from,
    );
    const playlist = counts('mpd').forwarded;
    await waitFor(() => counts('squeezelite').forwarded >= SECOND, undefined, { what: "the cast's PCM let through" });
    await waitFor(() => written() >= playlist + SECOND, undefined, { what: "the cast's PCM taken by aplay" });
    t.equal(counts('mpd').forwarded, playlist, "none of the paused playlist's PCM passed during the cast");

    const aplay = casting.deviceOutput(id)!.pid!;
    const off = await api.put(`/api/players/${id}/receivers/squeezelite`, { enabled: false });
    t.equal(off.status, 200, off.text);
    await waitFor(() => conf().includes('device "default"'), undefined, { what: 'MPD back on the device' });
    t.equal(casting.deviceOutput(id), undefined, 'the daemon holds the device no more');
    t.throws(() => process.kill(aplay, 0), { code: 'ESRCH' }, 'its aplay is gone');
    await rig.until(id, (p) => p.engine.state === 'up', "the player's MPD up again");
    const again = await api.post(`/api/players/${id}/play`, { uri: `file:${TRACKS.a}` });
    t.equal(again.status, 200, again.text);
    await rig.until(id, (p) => p.state === 'playing', 'the playlist to play into the device');
  },
);
