// Debian's shairport-sync run by the receiver supervisor in a network namespace the test makes, beside an Avahi on a
// private D-Bus (shairport-sync 3.3.8 exits without one): an AirPlay session from the test sets the sender's volume,
// the titles and the cover art, which the supervisor reports from the metadata pipe.
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { shairport } from '../../drivers/receivers/shairport.js';
import { type ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { startAvahi } from '../helpers/avahi.js';
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

/** One RTSP connection of an AirPlay 1 sender: each request resolves with the reply's status line. */
class RtspSender {
  private cseq = 0;
  private received = '';
  private readonly changes = new Changes();
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      this.received += chunk;
      this.changes.notify();
    });
  }

  static async open(host: string, port: number): Promise<RtspSender> {
    // shairport-sync listens a moment after it starts: try until it answers.
    const socket = await waitFor(
      () =>
        new Promise<Socket | undefined>((resolve) => {
          const s = connect(port, host);
          s.once('connect', () => resolve(s));
          s.once('error', () => resolve(undefined));
        }),
      undefined,
      { what: `shairport-sync to listen on ${host}:${port}` },
    );
    return new RtspSender(socket);
  }

  async request(method: string, headers: Record<string, string> = {}, body = Buffer.alloc(0)): Promise<string> {
    const cseq = ++this.cseq;
    const lines = [`${method} rtsp://127.0.0.1/1 RTSP/1.0`, `CSeq: ${cseq}`, 'User-Agent: AirPlay/381.13'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body.length) lines.push(`Content-Length: ${body.length}`);
    this.socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
    const reply = await waitFor(
      () => new RegExp(`^(RTSP/1.0 [^\\r]*)\\r\\nCSeq: ${cseq}\\r\\n`, 'm').exec(this.received),
      undefined,
      { what: `the reply to ${method}`, changes: this.changes },
    );
    return reply[1]!;
  }

  close(): void {
    this.socket.destroy();
  }
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
    const net = await airplayNetwork(t);
    if (!net.ok) {
      t.comment(`network namespaces cannot be made here (${net.why}): the AirPlay receiver goes unverified`);
      return;
    }
    const fifo = path.join(net.dir, 'out.pcm');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const events: ReceiverEvent[] = [];
    const changes = new Changes();
    const supervisor = new ReceiverSupervisor({
      kind: shairport,
      stateDir: path.join(net.dir, 'state'),
      settings: {
        playerId: 'kitchen',
        name: 'Kitchen "AirPlay"',
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
    const sender = await RtspSender.open(net.address, 5000);
    t.teardown(() => sender.close());
    const session = { 'DACP-ID': '14413BE4996FEA4D', 'Active-Remote': '2543110914', Session: '1' };
    const sdp = [
      'v=0',
      'o=iTunes 1 0 IN IP4 127.0.0.1',
      's=iTunes',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      'm=audio 0 RTP/AVP 96',
      'a=rtpmap:96 AppleLossless',
      'a=fmtp:96 352 0 16 40 10 14 2 255 0 0 44100',
      '',
    ].join('\r\n');
    t.equal(
      await sender.request('ANNOUNCE', { 'Content-Type': 'application/sdp' }, Buffer.from(sdp)),
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
