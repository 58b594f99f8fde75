// One connection to an MPD control socket: requests answered in order, each within a time limit on the engine clock.
import { createConnection, type Socket } from 'node:net';
import type { Clock } from '../core/clock.js';
import { PlaybackError } from '../playback.js';
import { encodeRequest, type Pairs, type Reply, ReplyParser } from './protocol.js';

interface Pending {
  resolve: (results: Pairs[]) => void;
  reject: (err: Error) => void;
  timer: unknown;
}

export interface ConnectionOptions {
  clock: Clock;
  /** Time limit for the greeting and for each request that has one. */
  timeoutMs: number;
  /** The most bytes one reply may take; a longer one ends the connection (a `failed` error that says so). Unbounded if unset. */
  maxReplyBytes?: number;
}

/** Where an MPD listens: its unix socket, or a TCP address. */
export type MpdTarget = string | { host: string; port: number };

export class MpdConnection {
  private readonly queue: Pending[] = [];
  private readonly parser: ReplyParser;
  private closedBy: Error | undefined;
  private readonly closeListeners = new Set<(err: Error) => void>();
  /** Bytes received since the last complete reply. */
  private replyBytes = 0;
  /** The server's protocol version from its greeting. */
  version = '';

  private constructor(
    private readonly target: MpdTarget,
    private readonly socket: Socket,
    private readonly options: ConnectionOptions,
  ) {
    this.parser = new ReplyParser((reply, greeting) => this.reply(reply, greeting));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.received(chunk));
    socket.on('error', (err) => this.close(err));
    socket.on('close', () => this.close(new PlaybackError('engine-down', 'the MPD connection closed')));
  }

  /** Connects to the unix socket (or host:port) and waits for MPD's greeting. */
  static connect(target: MpdTarget, options: ConnectionOptions): Promise<MpdConnection> {
    const socket = typeof target === 'string' ? createConnection({ path: target }) : createConnection(target);
    const connection = new MpdConnection(target, socket, options);
    return connection.enqueue(options.timeoutMs, 'the MPD greeting').then(() => connection);
  }

  /**
   * Another connection to the same MPD, on the same clock (other options may be given): for work whose reply may be
   * large, so that MPD ending it for its size ends nothing queued behind it here.
   */
  another(options: Partial<ConnectionOptions> = {}): Promise<MpdConnection> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    return MpdConnection.connect(this.target, { ...this.options, ...options });
  }

  get closed(): boolean {
    return this.closedBy !== undefined;
  }

  /** Called once when the connection ends, with why. */
  onClose(listener: (err: Error) => void): void {
    if (this.closedBy) listener(this.closedBy);
    else this.closeListeners.add(listener);
  }

  /**
   * Sends one command, or several as one command list, and resolves with one Pairs per command; rejects with the
   * MpdAck of a refused command. `timeoutMs: null` waits as long as it takes (for `idle`).
   */
  request(commands: string[], timeoutMs: number | null = this.options.timeoutMs): Promise<Pairs[]> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    const reply = this.enqueue(timeoutMs, commands[0]!.split(' ')[0]!);
    this.socket.write(encodeRequest(commands));
    return reply;
  }

  /** Ends the connection; pending requests reject with `err`. */
  close(err: Error = new PlaybackError('engine-down', 'the MPD connection was closed')): void {
    if (this.closedBy) return;
    this.closedBy = err;
    this.socket.destroy();
    for (const pending of this.queue.splice(0)) {
      this.options.clock.clearTimeout(pending.timer);
      pending.reject(err);
    }
    for (const listener of this.closeListeners) listener(err);
    this.closeListeners.clear();
  }

  private enqueue(timeoutMs: number | null, what: string): Promise<Pairs[]> {
    return new Promise((resolve, reject) => {
      const pending: Pending = { resolve, reject, timer: undefined };
      if (timeoutMs !== null) {
        pending.timer = this.options.clock.setTimeout(
          () => this.close(new PlaybackError('timeout', `MPD did not answer ${what} within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }
      this.queue.push(pending);
    });
  }

  private received(chunk: string): void {
    const limit = this.options.maxReplyBytes;
    if (limit !== undefined) {
      // Counted in UTF-16 units, a bound as good as bytes; a chunk that ends one reply and starts the next counts whole.
      this.replyBytes += chunk.length;
      if (this.replyBytes > limit) {
        this.close(new PlaybackError('failed', `MPD's reply is longer than ${limit} bytes`));
        return;
      }
    }
    this.parser.push(chunk);
  }

  private reply(reply: Reply, greeting?: string): void {
    this.replyBytes = 0;
    if (greeting !== undefined) this.version = greeting;
    const pending = this.queue.shift();
    if (!pending) {
      this.close(new PlaybackError('failed', 'MPD sent a reply nobody asked for'));
      return;
    }
    this.options.clock.clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.results);
    else pending.reject(reply.ack);
  }
}
