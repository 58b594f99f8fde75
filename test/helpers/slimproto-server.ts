// A stand-in Lyrion (slimproto) server on loopback: takes a squeezelite's HELO, tells it to stream a file from an
// HTTP server beside it (`strm s`), to pause, go on or stop, and sends volume (`audg`), as a real server would. Its
// HTTP server also answers Lyrion's JSON-RPC `mixer volume` and `pause 1`, giving the player that volume or pause
// as a real server does.

import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { Changes, waitFor } from './wait-for.js';

/** What the player said in its HELO. */
export interface Hello {
  mac: string;
  capabilities: string;
}

/** 0 dB in slimproto's 16.16 fixed-point gain. */
export const UNITY_GAIN = 0x10000;

export class SlimprotoServer {
  readonly changes = new Changes();
  /** Every HELO, in order (a player that reconnects says it again). */
  readonly hellos: Hello[] = [];
  /** The 4-letter STAT events the player sent (STMs: a track started, STMp: paused, …), in order. */
  readonly stats: string[] = [];
  /** HTTP requests for the file, by path. */
  readonly fetched: string[] = [];
  /** The names the player gave in SETD answers, in order. */
  readonly names: string[] = [];
  /** Each JSON-RPC `mixer volume` asked of the server: the player's MAC and the volume (0..100). */
  readonly mixer: Array<{ mac: string; volume: number }> = [];
  /** The MAC of each JSON-RPC `pause 1` asked of the server. */
  readonly pauses: string[] = [];
  private readonly sockets = new Set<Socket>();
  private player: Socket | undefined;
  private buffered = Buffer.alloc(0);

  private constructor(
    private readonly server: Server,
    private readonly http: HttpServer,
  ) {}

  /** Listens on 127.0.0.1 (a free port each) for slimproto and for the HTTP stream of `file` (a FLAC). */
  static async start(file: string): Promise<SlimprotoServer> {
    const body = readFileSync(file);
    const self: { it?: SlimprotoServer } = {};
    const http = createHttpServer((req, res) => {
      if (req.method === 'POST' && req.url === '/jsonrpc.js') {
        self.it?.jsonRpc(req, res);
        return;
      }
      self.it?.fetched.push(req.url ?? '');
      self.it?.changes.notify();
      res.writeHead(200, { 'content-type': 'audio/flac', 'content-length': body.length });
      res.end(body);
    });
    const server = createServer((socket) => self.it?.accept(socket));
    self.it = new SlimprotoServer(server, http);
    await Promise.all([
      new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
      new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve)),
    ]);
    return self.it;
  }

  /** The port of its HTTP server, where its JSON-RPC answers. */
  get httpPort(): number {
    return (this.http.address() as AddressInfo).port;
  }

  /** `127.0.0.1:<port>`, for squeezelite's `-s`. */
  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get connected(): boolean {
    return this.player !== undefined && !this.player.destroyed;
  }

  /** Resolves once the player has said HELO `count` times in all. */
  async hello(count = 1): Promise<Hello> {
    await waitFor(() => this.hellos.length >= count && this.connected, undefined, {
      what: `HELO number ${count} from the player`,
      changes: this.changes,
    });
    return this.hellos[count - 1]!;
  }

  /** Resolves once the player sent the STAT event `event` (e.g. STMs) after `since` earlier ones. */
  async stat(event: string, since = 0): Promise<void> {
    await waitFor(() => this.stats.slice(since).includes(event), undefined, {
      what: `the player to report ${event}`,
      changes: this.changes,
    });
  }

  /** `strm s`: stream the FLAC from the HTTP server on loopback, start when buffered, no replay gain. */
  play(): void {
    const fixed = Buffer.alloc(24);
    fixed.write('s1f????', 0, 'latin1'); // command, autostart, format (flac), size, rate, channels, endianness: from the file
    fixed[7] = 1; // threshold: 1 KiB buffered before it starts
    fixed.write('0', 8, 'latin1'); // spdif: auto
    fixed[9] = 0; // transition period
    fixed.write('0', 10, 'latin1'); // transition: none
    fixed[11] = 0; // flags
    fixed[12] = 0; // output threshold
    fixed[13] = 0; // slaves
    fixed.writeUInt32BE(0, 14); // replay gain: none
    fixed.writeUInt16BE((this.http.address() as AddressInfo).port, 18);
    fixed.writeUInt32BE(0x7f000001, 20); // 127.0.0.1
    const request = Buffer.from('GET /stream.flac HTTP/1.0\r\n\r\n', 'latin1');
    this.send('strm', Buffer.concat([fixed, request]));
  }

  /** `strm p` (pause), `strm u` (go on) or `strm q` (stop). */
  command(command: 'p' | 'u' | 'q'): void {
    const fixed = Buffer.alloc(24);
    fixed.write(`${command}0m????`, 0, 'latin1');
    this.send('strm', fixed);
  }

  /**
   * `audg`: the server's volume as a 16.16 gain for both channels, and whether the player should apply it to the
   * samples (`adjust`, which a real server sets unless the player's volume is fixed at 100%).
   */
  volume(gain: number, adjust: boolean): void {
    const payload = Buffer.alloc(18);
    payload.writeUInt32BE(0, 0); // old-style gains (0..128): squeezelite ignores them
    payload.writeUInt32BE(0, 4);
    payload[8] = adjust ? 1 : 0;
    payload[9] = 255; // preamp: unused
    payload.writeUInt32BE(gain, 10);
    payload.writeUInt32BE(gain, 14);
    this.send('audg', payload);
  }

  /** Asks the player its name (`setd` 0), as a server does when it connects, and resolves with the answer. */
  async name(): Promise<string> {
    const count = this.names.length;
    this.send('setd', Buffer.from([0]));
    await waitFor(() => this.names.length > count, undefined, { what: "the player's name", changes: this.changes });
    return this.names[count]!;
  }

  /** Ends the player's connection, as a server that restarts would. */
  drop(): void {
    this.player?.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.http.closeAllConnections();
    await Promise.all([
      new Promise<void>((resolve) => this.server.close(() => resolve())),
      new Promise<void>((resolve) => this.http.close(() => resolve())),
    ]);
  }

  private send(opcode: string, payload: Buffer): void {
    if (!this.player) throw new Error(`no player is connected to send ${opcode} to`);
    const head = Buffer.alloc(6);
    head.writeUInt16BE(4 + payload.length, 0);
    head.write(opcode, 2, 'latin1');
    this.player.write(Buffer.concat([head, payload]));
  }

  /**
   * `slim.request` with `[mac, ["mixer", "volume", v]]` or `[mac, ["pause", "1"]]`: recorded, answered as Lyrion
   * does, and the player gets the gain of volume v on Lyrion's curve (50·(v−100)/101 dB; 0 is silence), or `strm p`.
   */
  private jsonRpc(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
        params: [string, string[]];
      };
      const [mac, command] = request.params;
      const words = command.join(' ');
      if (request.method === 'slim.request' && /^mixer volume \d+$/.test(words)) {
        const volume = Number(command[2]);
        this.mixer.push({ mac, volume });
        const gain = volume <= 0 ? 0 : Math.round(UNITY_GAIN * 10 ** ((50 * (volume - 100)) / 101 / 20));
        if (this.connected) this.volume(gain, true);
      } else if (request.method === 'slim.request' && words === 'pause 1') {
        this.pauses.push(mac);
        if (this.connected) this.command('p');
      } else {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: request.id, method: request.method, params: request.params, result: {} }));
      this.changes.notify();
    });
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    this.player = socket;
    this.buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      if (socket !== this.player) return;
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.frames();
    });
    socket.on('error', () => socket.destroy()); // a player killed mid-write: its close follows
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.changes.notify();
    });
  }

  /** Client frames: a 4-letter opcode, a 32-bit big-endian length, the payload. */
  private frames(): void {
    while (this.buffered.length >= 8) {
      const length = this.buffered.readUInt32BE(4);
      if (this.buffered.length < 8 + length) return;
      const opcode = this.buffered.toString('latin1', 0, 4);
      const payload = this.buffered.subarray(8, 8 + length);
      this.buffered = this.buffered.subarray(8 + length);
      if (opcode === 'HELO') {
        const mac = [...payload.subarray(2, 8)].map((b) => b.toString(16).padStart(2, '0')).join(':');
        this.hellos.push({ mac, capabilities: payload.subarray(36).toString('latin1') });
      } else if (opcode === 'STAT') {
        this.stats.push(payload.toString('latin1', 0, 4));
      } else if (opcode === 'SETD' && payload[0] === 0) {
        this.names.push(payload.subarray(1).toString('utf8').replace(/\0+$/, ''));
      }
      this.changes.notify();
    }
  }
}
