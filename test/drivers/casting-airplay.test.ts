// The casting runtime (daemon/domain/playback/casting.ts) with Debian's shairport-sync in a network namespace the
// test makes: while an AirPlay 1 cast holds the output, a volume changed here reaches the stand-in sender's remote
// control (DACP), whose answer comes back as an echo that moves no room, and a playlist started pauses the sender.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Casting } from '../../daemon/domain/playback/casting.js';
import { airplayPort } from '../../drivers/receivers/shairport.js';
import { airplayNetwork } from '../helpers/airplay-network.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { ACTIVE_REMOTE, RaopSender } from '../helpers/raop-sender.js';
import { receiverFolders } from '../helpers/receiver-checks.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** The sender's tone: a sine at half of full scale, long enough to go on through the test. */
const TONE = { frequency: 440, amplitude: 16384, seconds: 600 };

t.test(
  'an AirPlay cast: a volume changed here reaches the sender, whose echo moves no room, and a playlist started pauses it',
  async (t) => {
    const net = await airplayNetwork(t, { tag: 'ac', octet: 249, dacp: true });
    if (!net.ok) {
      t.comment(`network namespaces cannot be made here (${net.why}): the AirPlay runtime goes unverified`);
      return;
    }
    const dacp = net.dacp!;
    const { dir, fifo } = receiverFolders(t, 'azc-casting-airplay');
    const reader = new PcmReader(fifo);
    t.teardown(() => reader.close());
    const playerId = randomUUID();
    const changes = new Changes();
    /** The group volumes the runtime set, and the playlist's pauses. */
    const volumes: number[] = [];
    let pauses = 0;
    const casting = new Casting({
      stateDir: dir,
      listenHost: net.address,
      listenInterface: net.nsIf,
      player: (id) => (id === playerId ? { name: 'Kitchen', output: { kind: 'fifo', path: fifo } } : undefined),
      pauseMpd: async () => {
        pauses++;
        changes.notify();
      },
      setGroupVolume: async (id, level) => {
        t.equal(id, playerId, 'the volume set is the player’s');
        volumes.push(level);
        changes.notify();
      },
      onChange: () => changes.notify(),
      prefix: ['ip', 'netns', 'exec', net.ns],
      env: net.env,
    });
    t.teardown(() => casting.stop());
    const until = <T>(what: string, condition: () => T) => waitFor(condition, undefined, { what, changes });
    await casting.apply(playerId, [{ kind: 'airplay', server: null }]);

    const sender = await RaopSender.open(net.address, airplayPort(playerId));
    t.teardown(() => sender.close());
    dacp.serve(sender);
    await sender.start();
    t.equal(await sender.volume(-24), 'RTSP/1.0 200 OK');
    const playing = sender.play(TONE);
    await reader.tone(TONE.amplitude - 2, 'the tone on the FIFO');
    await until('the cast to hold the output with the sender’s volume', () => volumes.length === 1);
    t.equal(casting.holder(playerId), 'airplay', 'the cast holds the output');
    t.same(volumes, [0.2], 'the sender’s −24 dB set the rooms at 0.2');

    // shairport-sync finds the sender's DACP port once the session plays: until then, nothing can be given.
    await waitFor(() => casting.groupVolumeChanged(playerId, 0.5), undefined, { what: 'the volume to be given' });
    await waitFor(() => dacp.received('setproperty').length > 0, undefined, {
      what: 'the volume at the sender',
      changes: dacp.changes,
    });
    t.same(
      dacp.received('setproperty'),
      [{ command: 'setproperty?dmcp.device-volume=-15.000000', activeRemote: ACTIVE_REMOTE }],
      'the sender gets −15 dB with its Active-Remote',
    );
    // The stand-in sent −15 dB back on its RTSP connection as it answered; the sender's own change goes after it on
    // the same connection, so once the rooms move to it every earlier report was heard.
    t.equal(await sender.volume(-9), 'RTSP/1.0 200 OK');
    await until('the sender’s own volume 0.7', () => volumes.at(-1) === 0.7);
    t.same(volumes, [0.2, 0.7], 'the echo of 0.5 moved no room');

    await casting.mpdStarted(playerId);
    await waitFor(() => dacp.received('pause').length > 0, undefined, {
      what: 'the pause at the sender',
      changes: dacp.changes,
    });
    t.same(dacp.received('pause'), [{ command: 'pause', activeRemote: ACTIVE_REMOTE }], 'the sender is paused');
    await playing;
    await until('the cast to read paused', () => casting.state(playerId, 'airplay').cast === 'paused');
    t.equal(casting.holder(playerId), 'mpd', 'the playlist holds the output');
    t.equal(pauses, 1, 'the playlist was paused once, when the cast began');
    t.same(dacp.failures, [], 'the sender did what it was asked');
  },
);
