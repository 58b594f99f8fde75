// An ALSA player's MPD plays into the private FIFO the casting runtime names while receivers run for it, and into its
// device again after; the one that held the device has stopped when the move resolves. A player whose own output is no
// ALSA device keeps it. The engines are stand-ins that record what they were made with; mpd.conf is rendered for real.
import t from 'tap';
import { StreamEngines } from '../../daemon/domain/playback/index.js';
import type { StreamOutput } from '../../daemon/domain/shared/index.js';
import { createLogger } from '../../daemon/log.js';
import { castFifo, playerFiles, renderConfig } from '../../drivers/mpd/config.js';
import { type PlaybackEngine, stoppedStatus } from '../../drivers/playback.js';

const PLAYER = 'p1';
const DEVICE: StreamOutput = { kind: 'alsa', device: 'hw:CARD=sndrpihifiberry,DEV=0' };
const files = playerFiles('/var/lib/azcd', PLAYER);
const PRIVATE: StreamOutput = { kind: 'fifo', path: castFifo(files) };

/** Engines made by the factory: the output each was made with, and whether it was stopped. */
function rig() {
  const made: Array<{ output: StreamOutput; stopped: boolean }> = [];
  const engines = new StreamEngines(
    {
      factory: ({ output }) => {
        const record = { output, stopped: false };
        made.push(record);
        return {
          start: async () => undefined,
          stop: async () => {
            record.stopped = true;
          },
          onEvent: () => () => undefined,
          status: () => stoppedStatus(),
        } as unknown as PlaybackEngine;
      },
      missing: () => undefined,
      folderOf: () => '/nonexistent',
      musicDir: '/nonexistent',
      createMusicDir: false,
      log: createLogger('silent'),
    },
    () => undefined,
  );
  return { engines, made };
}

t.test(
  "an ALSA player's MPD moves to the FIFO named, and back to its device, the one before stopped each time",
  async (t) => {
    const { engines, made } = rig();
    t.teardown(() => engines.stopAll());
    await engines.set(PLAYER, DEVICE);
    await engines.ready(PLAYER);
    await engines.reroute(PLAYER, PRIVATE);
    t.same(
      made.map((m) => m.output),
      [DEVICE, PRIVATE],
      'a second MPD was made with the FIFO',
    );
    t.equal(made[0]!.stopped, true, 'the MPD on the device had stopped when the move resolved');
    await engines.ready(PLAYER);
    await engines.reroute(PLAYER, null);
    t.same(made.at(-1)!.output, DEVICE, 'a third MPD plays into the device again');
    t.equal(made[1]!.stopped, true, 'the MPD on the FIFO had stopped when the move back resolved');
  },
);

t.test(
  'a player given another device while its MPD is on the FIFO keeps it there, and moves back to the new one',
  async (t) => {
    const { engines, made } = rig();
    t.teardown(() => engines.stopAll());
    await engines.set(PLAYER, DEVICE);
    await engines.reroute(PLAYER, PRIVATE);
    const other: StreamOutput = { kind: 'alsa', device: 'plughw:1,0' };
    await engines.set(PLAYER, other);
    t.equal(made.length, 2, 'no MPD was made again');
    t.same(made.at(-1)!.output, PRIVATE);
    await engines.reroute(PLAYER, null);
    t.same(made.at(-1)!.output, other, 'the move back plays into the new device');
  },
);

t.test('a player whose output is a FIFO keeps it: only an ALSA device is moved', async (t) => {
  const { engines, made } = rig();
  t.teardown(() => engines.stopAll());
  const own: StreamOutput = { kind: 'fifo', path: '/run/snapserver/azcd.pcm' };
  await engines.set(PLAYER, own);
  await engines.reroute(PLAYER, PRIVATE);
  t.same(
    made.map((m) => m.output),
    [own],
    'no MPD was made with the private FIFO',
  );
});

t.test("mpd.conf takes the player's private FIFO, inside the state folder, and no other FIFO there", async (t) => {
  const conf = renderConfig({ files, musicRoot: '/srv/music', output: PRIVATE, logLevel: 'warning' });
  t.match(conf, `path "${castFifo(files)}"`);
  t.match(conf, 'type "fifo"');
  t.throws(
    () =>
      renderConfig({
        files,
        musicRoot: '/srv/music',
        output: { kind: 'fifo', path: `${files.dir}/other.pcm` },
        logLevel: 'warning',
      }),
    { message: /outside azcd's state folder/ },
  );
});
