// Debian's shairport-sync run by the receiver supervisor in a network namespace the test makes, beside an Avahi on a
// private D-Bus (shairport-sync 3.3.8 exits without one): an AirPlay session from the test sets the sender's volume,
// the titles and the cover art, which the supervisor reports from the metadata pipe; a stand-in sender's tone
// (RTP audio, uncompressed ALAC) comes out on the FIFO at full scale. Two players' receivers run side by side, each
// on a port of its own. A volume and a pause given from this side reach a stand-in sender's remote control (DACP),
// which Avahi finds for shairport-sync.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { echoOf } from '../../drivers/receivers/receiver.js';
import { airplayPort, shairport } from '../../drivers/receivers/shairport.js';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { type AirplayNetwork, airplayNetwork as makeAirplayNetwork } from '../helpers/airplay-network.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { ACTIVE_REMOTE, ALAC_SDP, RaopSender, RtspSender } from '../helpers/raop-sender.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** This file's AirPlay network: a namespace, Avahi in it and, with `dacp`, a sender's remote control. */
const airplayNetwork = (t: Test, { dacp = false } = {}) => makeAirplayNetwork(t, { tag: 'ap', octet: 241, dacp });

/**
 * shairport-sync named `name` under the receiver supervisor, as player `playerId`, in a fresh AirPlay network (or
 * `shared`), its PCM on a FIFO `reader` reads; every event it gives goes to `events`. Undefined (and a comment) where
 * namespaces cannot be made.
 */
async function airplayReceiver(t: Test, name: string, playerId = 'kitchen', shared?: AirplayNetwork) {
  const net = shared ?? (await airplayNetwork(t));
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why}): the AirPlay receiver goes unverified`);
    return undefined;
  }
  const fifo = path.join(net.dir, `${playerId}.pcm`);
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const reader = new PcmReader(fifo);
  t.teardown(() => reader.close());
  const events: ReceiverEvent[] = [];
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: shairport,
    stateDir: path.join(net.dir, 'state'),
    settings: {
      playerId,
      name,
      output: { kind: 'fifo', path: fifo },
      listenHost: net.address,
      listenInterface: net.nsIf,
    },
    env: net.env,
    prefix: ['ip', 'netns', 'exec', net.ns],
  });
  supervisor.onEvent((event) => {
    events.push(event);
    changes.notify();
  });
  t.teardown(() => supervisor.stop());
  await supervisor.start();
  return { address: net.address, reader, events, changes, supervisor };
}

/** DMAP tags as a sender sends now-playing: `mlit` holding 4-letter tags of UTF-8 text. */
function dmap(tags: Record<string, string>): Buffer {
  const tag = (code: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.write(code, 0, 'latin1');
    head.writeUInt32BE(data.length, 4);
    return Buffer.concat([head, data]);
  };
  return tag('mlit', Buffer.concat(Object.entries(tags).map(([code, text]) => tag(code, Buffer.from(text)))));
}

t.test(
  'an AirPlay sender volume, titles and artwork come out of the supervisor, read from the metadata pipe',
  async (t) => {
    const receiver = await airplayReceiver(t, 'Kitchen "AirPlay"');
    if (!receiver) return;
    const { supervisor, events, changes } = receiver;
    t.equal(supervisor.variant, 'AirPlay 1', 'Debian’s shairport-sync, built without AirPlay 2, runs as AirPlay 1');
    const sender = await RtspSender.open(receiver.address, airplayPort('kitchen'));
    t.teardown(() => sender.close());
    const session = { 'DACP-ID': '14413BE4996FEA4D', 'Active-Remote': '2543110914', Session: '1' };
    t.equal(
      await sender.request('ANNOUNCE', { 'Content-Type': 'application/sdp' }, Buffer.from(ALAC_SDP)),
      'RTSP/1.0 200 OK',
    );
    const transport = 'RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=6100;timing_port=6101';
    t.equal(await sender.request('SETUP', { ...session, Transport: transport }), 'RTSP/1.0 200 OK');
    t.equal(
      await sender.request('RECORD', { ...session, Range: 'npt=0-', 'RTP-Info': 'seq=1;rtptime=0' }),
      'RTSP/1.0 200 OK',
    );
    const volume = (level: number) =>
      waitFor(() => supervisor.status().volume === level, undefined, { what: `the sender volume ${level}`, changes });
    await sender.request(
      'SET_PARAMETER',
      { ...session, 'Content-Type': 'text/parameters' },
      Buffer.from('volume: -15.000000\r\n'),
    );
    await volume(0.5);
    t.pass('AirPlay −15 dB is 0.5');
    await sender.request(
      'SET_PARAMETER',
      { ...session, 'Content-Type': 'application/x-dmap-tagged' },
      Buffer.from(dmap({ minm: 'Blue Tone', asar: 'Sox Combo', asal: 'Loopback' })),
    );
    await waitFor(() => supervisor.status().metadata.album === 'Loopback', undefined, { what: 'the album', changes });
    t.match(supervisor.status().metadata, { title: 'Blue Tone', artist: 'Sox Combo', album: 'Loopback' });
    // Cover art as a sender sends it: the image in a SET_PARAMETER of its type (the first bytes of a JPEG here).
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
    await sender.request('SET_PARAMETER', { ...session, 'Content-Type': 'image/jpeg' }, jpeg);
    const artwork = await waitFor(() => supervisor.status().metadata.artwork, undefined, {
      what: 'the artwork',
      changes,
    });
    t.equal(artwork.mime, 'image/jpeg');
    t.same([...artwork.data], [...jpeg], 'the image as sent');
    t.ok(
      events.some((e) => e.type === 'state' && e.state === 'playing'),
      'the session began playing',
    );
  },
);

/** The tone the sender plays: a sine at half of full scale, so 16-bit samples peak at 16 384. */
const TONE = { frequency: 440, amplitude: 16384, seconds: 4 };

t.test(
  'an AirPlay sender’s tone reaches the FIFO at full scale while its volume is −15 dB, reported as 0.5',
  async (t) => {
    const receiver = await airplayReceiver(t, 'Kitchen');
    if (!receiver) return;
    const { supervisor, reader, changes } = receiver;
    const sender = await RaopSender.open(receiver.address, airplayPort('kitchen'));
    t.teardown(() => sender.close());
    await sender.start();
    t.equal(await sender.volume(-15), 'RTSP/1.0 200 OK');
    const playing = sender.play(TONE);
    await reader.tone(TONE.amplitude - 2, 'the tone on the FIFO at full scale');
    t.ok(reader.peak <= TONE.amplitude, `no louder than sent (peak ${reader.peak})`);
    // The metadata pipe is read beside the PCM: its reports may come a moment after the tone.
    await waitFor(() => supervisor.status().volume === 0.5, undefined, { what: 'the sender volume 0.5', changes });
    t.pass('the sender’s −15 dB is reported as 0.5');
    await waitFor(() => supervisor.status().state === 'playing', undefined, { what: 'the cast to play', changes });
    t.pass('the cast plays');
    await playing;
    t.equal(await sender.stop(), 'RTSP/1.0 200 OK');
    await waitFor(() => supervisor.status().state === 'idle', undefined, { what: 'the cast to end', changes });
    const states = receiver.events.flatMap((e) => (e.type === 'state' ? [e.state] : []));
    t.same(states.slice(-2), ['playing', 'idle'], 'playing, then idle once the session ended');
  },
);

t.test('two players’ AirPlay receivers run side by side, each on a port of its own', async (t) => {
  const net = await airplayNetwork(t);
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why}): two AirPlay receivers go unverified`);
    return;
  }
  const kitchen = (await airplayReceiver(t, 'Kitchen', 'kitchen', net))!;
  const porch = (await airplayReceiver(t, 'Porch', 'porch', net))!;
  t.not(airplayPort('kitchen'), airplayPort('porch'), 'two ports');
  for (const [id, receiver] of [
    ['kitchen', kitchen],
    ['porch', porch],
  ] as const) {
    const sender = await RtspSender.open(net.address, airplayPort(id));
    t.teardown(() => sender.close());
    t.equal(await sender.request('OPTIONS', {}), 'RTSP/1.0 200 OK', `${id}'s shairport-sync answers on its port`);
    t.equal(receiver.supervisor.phase, 'running');
    t.same(
      receiver.events.filter((e) => e.type === 'engine' && !e.up),
      [],
      `${id}'s shairport-sync never exited`,
    );
  }
});

/**
 * shairport-sync beside a stand-in sender's remote control, which Avahi announces. `session(activeRemote)` sets up
 * an AirPlay session of that sender's whose requests carry `activeRemote` (null: none, nor a DACP-ID) and resolves
 * once its volume −24 dB is reported as 0.2: its SETUP, read before, said by then how to reach its remote control.
 * Undefined (and a comment) where namespaces cannot be made.
 */
async function remoteControlRig(t: Test) {
  const net = await airplayNetwork(t, { dacp: true });
  if (!net.ok) {
    t.comment(`network namespaces cannot be made here (${net.why}): the sender's remote control goes unverified`);
    return undefined;
  }
  const dacp = net.dacp!;
  const receiver = (await airplayReceiver(t, 'Kitchen', 'kitchen', net))!;
  const { events, changes } = receiver;
  const session = async (activeRemote: string | null = ACTIVE_REMOTE) => {
    // shairport-sync lets a closed session's connection go once its threads are joined, a moment later, and answers
    // ANNOUNCE with 453 meanwhile, as it answers a second sender: the next session asks again until it is taken.
    const sender = await waitFor(
      async () => {
        const sender = await RaopSender.open(net.address, airplayPort('kitchen'), { activeRemote });
        t.teardown(() => sender.close());
        try {
          await sender.start();
          return sender;
        } catch (err) {
          sender.close();
          if (/ANNOUNCE was refused: RTSP\/1\.0 453/.test((err as Error).message)) return undefined;
          throw err;
        }
      },
      undefined,
      { what: 'the receiver to take the session' },
    );
    dacp.serve(sender);
    const seen = events.length;
    t.equal(await sender.volume(-24), 'RTSP/1.0 200 OK');
    await waitFor(() => events.slice(seen).some((e) => e.type === 'volume' && e.volume === 0.2), undefined, {
      what: 'the session’s volume 0.2',
      changes,
      seen: () => JSON.stringify(events.slice(seen)),
    });
    return sender;
  };
  return { ...receiver, dacp, session };
}

t.test(
  'a volume and a pause given from this side reach the AirPlay sender’s remote control, found through Avahi',
  async (t) => {
    const rig = await remoteControlRig(t);
    if (!rig) return;
    const { supervisor, events, changes, dacp } = rig;
    const sender = await rig.session();
    const playing = sender.play({ ...TONE, seconds: 600 });
    // shairport-sync looks for the sender's DACP port once the session plays: until it is found, nothing is sent.
    await waitFor(() => supervisor.sendVolume(0.5), undefined, { what: 'the volume to be given to the sender' });
    for (const [level, db] of [
      [0.5, '-15.000000'],
      [0.37, '-18.900000'],
      [0, '-144.000000'],
    ] as const) {
      if (level !== 0.5) t.ok(supervisor.sendVolume(level), `${level} is given`);
      await waitFor(() => dacp.received('setproperty').length > 0, undefined, {
        what: `the sender's DACP server to get ${level}`,
        changes: dacp.changes,
      });
      t.same(
        dacp.received('setproperty'),
        [{ command: `setproperty?dmcp.device-volume=${db}`, activeRemote: ACTIVE_REMOTE }],
        `${level} reaches the sender as its device volume ${db} dB, with the session's Active-Remote`,
      );
      dacp.requests.splice(0, dacp.requests.length);
      // The sender sends it back as its volume, as iTunes does: the report is the echo the runtime knows.
      await waitFor(() => supervisor.status().volume === echoOf(shairport, level), undefined, {
        what: `the sender's volume reported back for ${level}`,
        changes,
      });
      t.equal(echoOf(shairport, level), level, `reported back as ${level}`);
    }
    const seen = events.length;
    t.ok(supervisor.pauseSender(), 'the pause is asked');
    await waitFor(() => dacp.received('pause').length > 0, undefined, { what: 'the pause', changes: dacp.changes });
    t.same(dacp.received('pause'), [{ command: 'pause', activeRemote: ACTIVE_REMOTE }], 'the sender gets the pause');
    await playing;
    await waitFor(() => events.slice(seen).some((e) => e.type === 'state' && e.state === 'paused'), undefined, {
      what: 'the paused state',
      changes,
    });
    t.pass('the sender paused, and the receiver says so');
    t.same(dacp.failures, [], 'the sender did what it was asked');
  },
);

t.test(
  'the same sender’s next session is reached at once with its new Active-Remote; a sender without a remote control is not reached through the last one’s',
  async (t) => {
    const rig = await remoteControlRig(t);
    if (!rig) return;
    const { supervisor, changes, dacp, session } = rig;
    const first = await session();
    const playing = first.play({ ...TONE, seconds: 600 });
    await waitFor(() => supervisor.sendVolume(0.5), undefined, { what: 'the volume to be given to the sender' });
    await waitFor(() => dacp.received('setproperty').length > 0, undefined, {
      what: 'the first session’s volume',
      changes: dacp.changes,
    });
    await first.pause();
    await playing;
    t.equal(await first.stop(), 'RTSP/1.0 200 OK');
    // shairport-sync takes the next session once this one's connection is closed.
    first.close();
    dacp.requests.splice(0, dacp.requests.length);

    // shairport-sync keeps the port it found for that DACP-ID and does not look again.
    const next = await session('3915442781');
    t.ok(supervisor.sendVolume(0.5), 'the next session’s sender is reached as soon as its session is set up');
    await waitFor(() => dacp.received('setproperty').length > 0, undefined, {
      what: 'the next session’s volume',
      changes: dacp.changes,
    });
    t.same(
      dacp.received('setproperty'),
      [{ command: 'setproperty?dmcp.device-volume=-15.000000', activeRemote: '3915442781' }],
      'with its own Active-Remote',
    );
    await waitFor(() => supervisor.status().volume === 0.5, undefined, { what: 'the echo', changes });
    t.equal(await next.stop(), 'RTSP/1.0 200 OK');
    next.close();

    await session(null);
    t.notOk(supervisor.sendVolume(0.5), 'a sender without a remote control gets no volume');
    t.notOk(supervisor.pauseSender(), 'nor a pause');
    t.same(dacp.failures, [], 'the sender did what it was asked');
  },
);
