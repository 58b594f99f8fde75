// Debian's shairport-sync run by the receiver supervisor in a network namespace the test makes, beside an Avahi on a
// private D-Bus (shairport-sync 3.3.8 exits without one): an AirPlay session from the test sets the sender's volume,
// the titles and the cover art, which the supervisor reports from the metadata pipe; a stand-in sender's tone
// (RTP audio, uncompressed ALAC) comes out on the FIFO at full scale. Two players' receivers run side by side, each
// on a port of its own.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import t, { type Test } from 'tap';
import { airplayPort, shairport } from '../../drivers/receivers/shairport.js';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { startAvahi } from '../helpers/avahi.js';
import { PcmReader } from '../helpers/pcm-reader.js';
import { ALAC_SDP, RaopSender, RtspSender } from '../helpers/raop-sender.js';
import { vethNetwork } from '../helpers/veth-network.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** A namespace with a veth pair to the test's side, D-Bus and Avahi for shairport-sync. */
async function airplayNetwork(t: Test) {
  const made = vethNetwork(t, 'ap', 241);
  if (!made.ok) return { ok: false as const, why: made.why };
  const { ns, nsIf } = made;
  const { env, dir } = await startAvahi(t, { ns, link: nsIf });
  return { ok: true as const, ns, nsIf, address: made.address, env, dir };
}

type AirplayNetwork = Extract<Awaited<ReturnType<typeof airplayNetwork>>, { ok: true }>;

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
