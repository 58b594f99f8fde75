// A stand-in AirPlay 1 (RAOP) sender: RTSP for the session, volume and titles, and, after RECORD, a tone as RTP audio
// in uncompressed ALAC frames (the format's escape form: no encoder needed), paced in real time, with sync packets on
// the control port and answers to the receiver's timing requests, all unencrypted (the ANNOUNCE has no key). Its
// remote control (DACP) is an HTTP server a receiver reaches it by, as iTunes serves it.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Changes, waitFor } from './wait-for.js';

/** AirPlay 1's audio: 44.1 kHz, 16-bit stereo, 352 frames per RTP packet. */
export const RAOP_RATE = 44_100;
export const FRAMES_PER_PACKET = 352;
/** What the sender asks the receiver to delay playback by (frames): iTunes' 2 s, with the 11 025 flags 7 adds. */
const LATENCY_FRAMES = 77_175;
/** Seconds from the NTP epoch (1900) to the Unix epoch. */
const NTP_EPOCH_OFFSET = 2_208_988_800;
/** Packets are sent on a timer of this period, each turn sending what is due (about 2.5 packets). */
const PACING_MS = 20;

/** The SDP of an ALAC stream at 44.1 kHz, 16-bit stereo, 352 frames per packet, as iTunes announces it. */
export const ALAC_SDP = [
  'v=0',
  'o=iTunes 1 0 IN IP4 127.0.0.1',
  's=iTunes',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 0 RTP/AVP 96',
  'a=rtpmap:96 AppleLossless',
  `a=fmtp:96 ${FRAMES_PER_PACKET} 0 16 40 10 14 2 255 0 0 ${RAOP_RATE}`,
  '',
].join('\r\n');

/**
 * What the sender's requests say about its remote control, as iTunes sends them: its DACP-ID (its DACP server is
 * advertised as `iTunes_Ctrl_<DACP-ID>._dacp._tcp`) and the Active-Remote a receiver's DACP requests must carry.
 */
export const DACP_ID = '14413BE4996FEA4D';
export const ACTIVE_REMOTE = '2543110914';

/** A reply's status line and headers (names lower-cased). */
export interface RtspReply {
  status: string;
  headers: Record<string, string>;
}

/**
 * One RTSP connection of an AirPlay 1 sender: each request resolves with the reply's status line. Requests go one at
 * a time, each after the last one's reply, as a sender sends them: a request written while the receiver has not yet
 * answered the one before (the remote control's volume, then the test's next step) can reach shairport-sync in the same
 * read as that one, and under load it then answered only the first.
 */
export class RtspSender {
  private cseq = 0;
  private received = '';
  /** The exchange under way: the next request is written once it has its reply (or failed). */
  private turn: Promise<unknown> = Promise.resolve();
  private readonly changes = new Changes();
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      this.received += chunk;
      this.changes.notify();
    });
  }

  /** The address the receiver sees this sender at: where it sends timing requests. */
  get localAddress(): string {
    return this.socket.localAddress ?? '127.0.0.1';
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
    return (await this.exchange(method, headers, body)).status;
  }

  /** Sends a request, after the reply to the one before, and resolves with its reply's status line and headers. */
  exchange(method: string, headers: Record<string, string> = {}, body = Buffer.alloc(0)): Promise<RtspReply> {
    const exchanged = this.turn.then(() => this.send(method, headers, body));
    this.turn = exchanged.catch(() => undefined);
    return exchanged;
  }

  private async send(method: string, headers: Record<string, string>, body: Buffer): Promise<RtspReply> {
    const cseq = ++this.cseq;
    const lines = [`${method} rtsp://127.0.0.1/1 RTSP/1.0`, `CSeq: ${cseq}`, 'User-Agent: AirPlay/381.13'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body.length) lines.push(`Content-Length: ${body.length}`);
    this.socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
    const reply = await waitFor(
      () =>
        new RegExp(`^(RTSP/1.0 [^\\r]*)\\r\\nCSeq: ${cseq}\\r\\n((?:[^\\r]+\\r\\n)*)\\r\\n`, 'm').exec(this.received),
      undefined,
      {
        what: `the reply to ${method} (CSeq ${cseq})`,
        changes: this.changes,
        seen: () => `the connection's last replies ${JSON.stringify(this.received.slice(-240))}`,
      },
    );
    const replyHeaders: Record<string, string> = {};
    for (const line of reply[2]!.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) replyHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    return { status: reply[1]!, headers: replyHeaders };
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Writes bits most significant first, as ALAC's bitstream is read. */
class BitWriter {
  private readonly bytes: Buffer;
  private bit = 0;
  constructor(size: number) {
    this.bytes = Buffer.alloc(size);
  }
  write(value: number, bits: number): void {
    for (let i = bits - 1; i >= 0; i--) {
      if ((value >>> i) & 1) this.bytes[this.bit >> 3]! |= 0x80 >> (this.bit & 7);
      this.bit++;
    }
  }
  done(): Buffer {
    return this.bytes.subarray(0, Math.ceil(this.bit / 8));
  }
}

/**
 * One ALAC frame of `left`/`right` 16-bit samples in the escape (uncompressed) form: a channel-pair element (tag 1,
 * instance 0), 12 unused bits, no sample count (the stream's frame length), no shifted bytes, the escape flag, then
 * each frame's left and right sample as 16 bits, and the end tag.
 */
export function alacEscapeFrame(left: Int16Array, right: Int16Array): Buffer {
  const writer = new BitWriter(Math.ceil((23 + left.length * 32 + 3) / 8));
  writer.write(1, 3); // ID_CPE: a channel pair
  writer.write(0, 4); // element instance tag
  writer.write(0, 12); // unused
  writer.write(0, 1); // partial frame: no, the frame length is the stream's
  writer.write(0, 2); // bytes shifted
  writer.write(1, 1); // escape: the samples follow uncompressed
  for (let i = 0; i < left.length; i++) {
    writer.write(left[i]! & 0xffff, 16);
    writer.write(right[i]! & 0xffff, 16);
  }
  writer.write(7, 3); // ID_END
  return writer.done();
}

/** Now as a 64-bit NTP timestamp (seconds since 1900, 32.32) written at `offset`. */
function writeNtp(packet: Buffer, offset: number): void {
  const seconds = (performance.timeOrigin + performance.now()) / 1000;
  const whole = Math.floor(seconds);
  packet.writeUInt32BE((whole + NTP_EPOCH_OFFSET) >>> 0, offset);
  packet.writeUInt32BE(Math.floor((seconds - whole) * 2 ** 32) >>> 0, offset + 4);
}

const udpSocket = async (address: string): Promise<UdpSocket> => {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, address, () => resolve());
  });
  return socket;
};

/** What the sender plays: a sine of `frequency` Hz at `amplitude` (16-bit peak), for `seconds`. */
export interface Tone {
  frequency: number;
  amplitude: number;
  seconds: number;
}

/**
 * An AirPlay 1 sender: `start()` sets up a session (ANNOUNCE, SETUP with its control and timing ports, RECORD),
 * `play()` sends a tone, `volume()` the sender's volume, `stop()` ends the session (TEARDOWN).
 */
export class RaopSender {
  /** Timing requests answered, sync packets and audio packets sent. */
  readonly counts = { timing: 0, sync: 0, audio: 0 };
  readonly changes = new Changes();
  private readonly session: Record<string, string>;
  private seq = 1;
  private rtptime = FRAMES_PER_PACKET * 1000;
  private ports: { audio: number; control: number } | undefined;
  private pacing: NodeJS.Timeout | undefined;
  /** Ends the tone being played (a pause): play() resolves. */
  private finishTone: (() => void) | undefined;
  private sessionId = '1';
  private closed = false;

  private constructor(
    readonly rtsp: RtspSender,
    private readonly host: string,
    private readonly control: UdpSocket,
    private readonly timing: UdpSocket,
    /** The session's Active-Remote; null for a sender without a remote control (no DACP-ID either). */
    readonly activeRemote: string | null,
  ) {
    this.session = activeRemote === null ? {} : { 'DACP-ID': DACP_ID, 'Active-Remote': activeRemote };
    timing.on('message', (request, from) => this.answerTiming(request, from));
  }

  /**
   * Connects to the receiver's RTSP port at `host`, with UDP ports on the address the connection comes from.
   * `activeRemote`: what this session's requests carry (a sender makes a new one for each session); null for none.
   */
  static async open(
    host: string,
    port = 5000,
    { activeRemote = ACTIVE_REMOTE }: { activeRemote?: string | null } = {},
  ): Promise<RaopSender> {
    const rtsp = await RtspSender.open(host, port);
    const [control, timing] = await Promise.all([udpSocket(rtsp.localAddress), udpSocket(rtsp.localAddress)]);
    return new RaopSender(rtsp, host, control, timing, activeRemote);
  }

  /** ANNOUNCE (ALAC, unencrypted), SETUP and RECORD: afterwards the receiver takes audio. Throws on a refusal. */
  async start(): Promise<void> {
    const ok = (reply: RtspReply, what: string) => {
      if (reply.status !== 'RTSP/1.0 200 OK') throw new Error(`${what} was refused: ${reply.status}`);
      return reply;
    };
    ok(await this.rtsp.exchange('OPTIONS', this.session), 'OPTIONS');
    ok(
      await this.rtsp.exchange(
        'ANNOUNCE',
        { ...this.session, 'Content-Type': 'application/sdp' },
        Buffer.from(ALAC_SDP),
      ),
      'ANNOUNCE',
    );
    const control = this.control.address().port;
    const timing = this.timing.address().port;
    const transport = `RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=${control};timing_port=${timing}`;
    const setup = ok(await this.rtsp.exchange('SETUP', { ...this.session, Transport: transport }), 'SETUP');
    const port = (name: string) => {
      const match = new RegExp(`(?:^|;)${name}=(\\d+)`).exec(setup.headers.transport ?? '');
      if (!match) throw new Error(`the SETUP reply names no ${name}: ${setup.headers.transport}`);
      return Number(match[1]);
    };
    this.ports = { audio: port('server_port'), control: port('control_port') };
    this.sessionId = setup.headers.session ?? this.sessionId;
    ok(
      await this.rtsp.exchange('RECORD', {
        ...this.headers(),
        Range: 'npt=0-',
        'RTP-Info': `seq=${this.seq};rtptime=${this.rtptime}`,
      }),
      'RECORD',
    );
  }

  /** The sender's volume in AirPlay's dB (−30 to 0, −144 mute). */
  async volume(db: number): Promise<string> {
    return this.rtsp.request(
      'SET_PARAMETER',
      { ...this.headers(), 'Content-Type': 'text/parameters' },
      Buffer.from(`volume: ${db.toFixed(6)}\r\n`),
    );
  }

  /** Sends `tone` in real time; resolves once its last packet was sent. */
  play(tone: Tone): Promise<void> {
    const ports = this.ports;
    if (!ports) return Promise.reject(new Error('play() before start(): no session'));
    const total = Math.ceil((tone.seconds * RAOP_RATE) / FRAMES_PER_PACKET);
    const began = performance.now();
    let sent = 0;
    let frame = 0;
    return new Promise<void>((resolve) => {
      this.finishTone = resolve;
      const turn = () => {
        const due = Math.min(
          total,
          Math.floor(((performance.now() - began) * RAOP_RATE) / 1000 / FRAMES_PER_PACKET) + 1,
        );
        for (; sent < due; sent++) {
          // A sync packet before the first audio and then once a second, as a sender sends them.
          if (sent % Math.round(RAOP_RATE / FRAMES_PER_PACKET) === 0) this.sync(sent === 0);
          const left = new Int16Array(FRAMES_PER_PACKET);
          for (let i = 0; i < FRAMES_PER_PACKET; i++, frame++)
            left[i] = Math.round(tone.amplitude * Math.sin((2 * Math.PI * tone.frequency * frame) / RAOP_RATE));
          this.audio(alacEscapeFrame(left, left), sent === 0);
        }
        if (sent >= total) {
          this.pacing = undefined;
          resolve();
          return;
        }
        this.pacing = setTimeout(turn, PACING_MS);
      };
      turn();
    });
  }

  /** A pause, as a sender pauses: no more audio, and a FLUSH of what the receiver holds. */
  async pause(): Promise<string> {
    clearTimeout(this.pacing);
    this.finishTone?.();
    return this.rtsp.request('FLUSH', {
      ...this.headers(),
      'RTP-Info': `seq=${this.seq};rtptime=${this.rtptime}`,
    });
  }

  /** TEARDOWN: the session ends. */
  async stop(): Promise<string> {
    clearTimeout(this.pacing);
    return this.rtsp.request('TEARDOWN', this.headers());
  }

  /** Closes its connection and ports; a second call does nothing (a test closes a session before the next one). */
  close(): void {
    clearTimeout(this.pacing);
    if (this.closed) return;
    this.closed = true;
    this.rtsp.close();
    this.control.close();
    this.timing.close();
  }

  private headers(): Record<string, string> {
    return { ...this.session, Session: this.sessionId };
  }

  /** RTP audio: version 2, payload type 0x60 (the marker bit on the first), sequence, timestamp, SSRC, ALAC frame. */
  private audio(frame: Buffer, first: boolean): void {
    const head = Buffer.alloc(12);
    head[0] = 0x80;
    head[1] = first ? 0xe0 : 0x60;
    head.writeUInt16BE(this.seq, 2);
    head.writeUInt32BE(this.rtptime >>> 0, 4);
    head.writeUInt32BE(0x0bad_cafe, 8);
    this.seq = (this.seq + 1) & 0xffff;
    this.rtptime = (this.rtptime + FRAMES_PER_PACKET) >>> 0;
    this.control.send(Buffer.concat([head, frame]), this.ports!.audio, this.host);
    this.counts.audio++;
    this.changes.notify();
  }

  /**
   * A sync packet to the control port: the frame to be sent next is the one playing now (NTP time) once the
   * latency has passed; flags 7 as iTunes sends them (the receiver adds its fixed offset).
   */
  private sync(first: boolean): void {
    const packet = Buffer.alloc(20);
    packet[0] = first ? 0x90 : 0x80;
    packet[1] = 0xd4;
    packet.writeUInt16BE(7, 2);
    packet.writeUInt32BE((this.rtptime - LATENCY_FRAMES) >>> 0, 4);
    writeNtp(packet, 8);
    packet.writeUInt32BE(this.rtptime >>> 0, 16);
    this.control.send(packet, this.ports!.control, this.host);
    this.counts.sync++;
  }

  /** A timing request (0xd2): the answer (0xd3) gives back its transmit time as origin, and now, twice. */
  private answerTiming(request: Buffer, from: RemoteInfo): void {
    if (request.length < 32 || (request[1]! & 0x7f) !== 0x52) return;
    const reply = Buffer.alloc(32);
    reply[0] = 0x80;
    reply[1] = 0xd3;
    reply.writeUInt16BE(7, 2);
    request.copy(reply, 8, 24, 32);
    writeNtp(reply, 16);
    writeNtp(reply, 24);
    this.timing.send(reply, from.port, from.address);
    this.counts.timing++;
    this.changes.notify();
  }
}

/** A DACP request the sender's server got: its command (path and query after `/ctrl-int/1/`) and Active-Remote. */
export interface DacpRequest {
  command: string;
  activeRemote: string | undefined;
}

/**
 * The sender's remote control (DACP), on an address of the test's side: a receiver that carries the served
 * session's Active-Remote sets its device volume (`setproperty?dmcp.device-volume=<dB>`), which it then sends the receiver as
 * its volume, as iTunes does, and pauses it (`pause`), answered 204 as iTunes answers. Any other command (the
 * receiver's own status requests) is answered 400, as a sender without the extended DACP answers; a request
 * without its Active-Remote, 403. Each request is kept, in order.
 */
export class DacpServer {
  readonly requests: DacpRequest[] = [];
  readonly changes = new Changes();
  /** What the sender did on a command and failed at: the test fails on it. */
  readonly failures: string[] = [];
  private sender: RaopSender | undefined;

  private constructor(private readonly server: Server) {
    server.on('request', (request, response) => {
      const url = new URL(request.url ?? '/', 'http://dacp');
      const command = url.pathname.replace(/^\/ctrl-int\/1\//, '') + url.search;
      const activeRemote = request.headers['active-remote'] as string | undefined;
      this.requests.push({ command, activeRemote });
      this.changes.notify();
      const act = this.action(url);
      const known = activeRemote !== undefined && activeRemote === this.sender?.activeRemote;
      response.statusCode = !act ? 400 : known ? 204 : 403;
      response.end();
      if (act && response.statusCode === 204 && this.sender)
        act(this.sender).catch((err: Error) => {
          this.failures.push(err.message);
          this.changes.notify();
        });
    });
  }

  /** Listens on `host`, on a port of the system's choosing. */
  static async listen(host: string): Promise<DacpServer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    return new DacpServer(server);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The sender whose playback the commands act on. */
  serve(sender: RaopSender): void {
    this.sender = sender;
  }

  /** The requests for `command` (a path, or the start of a command with its query). */
  received(command: string): DacpRequest[] {
    return this.requests.filter((r) => r.command === command || r.command.startsWith(`${command}?`));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** What the sender does on a command it knows; undefined for others. */
  private action(url: URL): ((sender: RaopSender) => Promise<unknown>) | undefined {
    if (url.pathname === '/ctrl-int/1/pause') return (sender) => sender.pause();
    const db = url.searchParams.get('dmcp.device-volume');
    if (url.pathname === '/ctrl-int/1/setproperty' && db !== null && Number.isFinite(Number(db)))
      return (sender) => sender.volume(Number(db));
    return undefined;
  }
}
