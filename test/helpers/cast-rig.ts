// A daemon with the real MPD and a stream player "Kitchen" on a FIFO the test reads, and a stand-in slimproto server
// that casts a tone to the player's Squeezelite receiver (Debian's squeezelite) once the test switches it on.
import path from 'node:path';
import type { Test } from 'tap';
import { squeezeliteReceiver } from '../../drivers/receivers/squeezelite.js';
import { chimeFolder } from './announcement-rig.js';
import { tempDir } from './daemon.js';
import { soxTone } from './receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from './slimproto-server.js';
import { type StreamRig, startStreamDaemon } from './stream-rig.js';

export async function castRig(t: Test, options: { stateDir?: string; music?: string } = {}) {
  const dir = tempDir('azc-cast-');
  const tone = path.join(dir, 'tone.flac');
  soxTone(tone, 30);
  const server = await SlimprotoServer.start(tone);
  t.teardown(() => server.close());
  const rig = await startStreamDaemon(t, {
    ...options,
    music: options.music ?? chimeFolder(t),
    // The stand-in's JSON-RPC (volume and pause given to the server) is on its own port, not Lyrion's 9000.
    castingOptions: { kinds: { squeezelite: squeezeliteReceiver(server.httpPort) } },
  });
  const { api } = rig;
  const kitchen = await rig.fifoPlayer('Kitchen', 1);
  // The FIFO is read as a sound card would: MPD's and the cast's PCM both reach it.
  kitchen.reader();
  /**
   * Switches the player's Squeezelite on and the server casts, with its volume for the player sent on connection as
   * a server does (`gain`, full by default): resolves with the cast's playback once it holds the output.
   */
  const cast = async (gain = UNITY_GAIN) => {
    const from = rig.events.length;
    const on = await api.put(`/api/players/${kitchen.id}/receivers/squeezelite`, {
      enabled: true,
      server: server.address,
    });
    t.equal(on.status, 200, on.text);
    await server.hello();
    server.volume(gain, false);
    server.play();
    return (
      await rig.next(
        'player.playbackChanged',
        (e) => e.payload.playerId === kitchen.id && e.payload.playback.source === 'squeezelite',
        from,
      )
    ).payload.playback;
  };
  return { ...rig, kitchen, server, cast };
}

/**
 * A person's Pause on player `playerId` while a cast holds its output: the answer shows the paused playlist again,
 * the receiver reads idle and keeps running, and the playlist stays paused (`mpdState`: its MPD's state).
 */
export async function pauseEndsTheCast(
  t: Test,
  rig: Pick<StreamRig, 'api' | 'events' | 'next'>,
  playerId: string,
  mpdState: () => string | undefined,
): Promise<void> {
  const from = rig.events.length;
  const paused = await rig.api.post(`/api/players/${playerId}/pause`);
  t.equal(paused.status, 200);
  t.match(paused.body, { source: 'mpd', state: 'paused' }, 'Pause ends the cast: the paused playlist shows again');
  const idle = await rig.next(
    'player.receiverChanged',
    (e) => e.payload.playerId === playerId && e.payload.receiver.cast === 'idle',
    from,
  );
  t.equal(idle.payload.receiver.phase, 'running', 'the receiver keeps running, ready for the next cast');
  t.equal(mpdState(), 'paused', 'and the playlist stays paused');
}
