// The port under every serial family's link: opened and reopened with back-off, a connection counter that makes work
// begun on a port that has since gone away stale, and one queue per bus. Exchanges are link.ts's.
import { type BytePort, type OpenPort, openPort, parseTcpPort } from '../port.js';
import type { Clock } from './clock.js';

export type LinkLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

/** The options every family's link takes for its port. */
export interface ReconnectingPortOptions {
  /** A serial device, or `tcp://host:port` for an IP-serial adapter (drivers/port.ts). */
  path: string;
  baudRate: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  log: LinkLog;
  /** The port is open: the connection can start. */
  onUp(): void;
  /** The port closed, failed to open, or fail() was called; a reopen is already scheduled. */
  onDown(detail: string): void;
  /** Prefix of log lines (`monoprice`, `rnet`, ...). */
  family: string;
  /** How long a TCP connect may take (drivers/port.ts has the default). */
  connectTimeoutMs?: number;
  /** drivers/port.ts openPort unless a test passes its own. */
  openPort?: OpenPort;
  clock: Clock;
}

function isNetworkPath(path: string): boolean {
  try {
    return parseTcpPort(path) !== undefined;
  } catch {
    return false; // a malformed tcp: path never opens, so it never closes either
  }
}

export abstract class ReconnectingPort {
  private readonly portOptions: ReconnectingPortOptions;
  private port: BytePort | undefined;
  private connectionId = 0;
  private stopped = false;
  private backoffMs: number;
  private reconnectTimer: unknown;
  /** Cancels an open under way, so stop() leaves no connect attempt (and its timer) behind. */
  private opening: AbortController | undefined;
  /** The queue: each exchange starts when the previous one has finished, its gap included. */
  private chain: Promise<unknown> = Promise.resolve();

  protected readonly clock: Clock;

  constructor(options: ReconnectingPortOptions) {
    this.portOptions = options;
    this.clock = options.clock;
    this.backoffMs = options.reconnectMinMs;
  }

  /** A new connection is open, before onUp: reset framing and per-connection state. */
  protected abstract opened(): void;
  /** Bytes from the port of the given connection. */
  protected abstract received(connection: number, chunk: Buffer): void;
  /** The connection ended: fail the exchange in flight and anything waiting on the line. */
  protected abstract aborted(): void;

  /** Bumped whenever the port opens or goes away: work begun in an older connection is stale. */
  get connection(): number {
    return this.connectionId;
  }

  /** The open port, if `connection` is still the current one; undefined once it went away or while it is opening. */
  protected portOf(connection: number): BytePort | undefined {
    return connection === this.connectionId && !this.stopped ? this.port : undefined;
  }

  /** Runs `exchange` once every exchange queued before it has finished: one at a time on the bus. */
  protected queue<T>(exchange: () => Promise<T>): Promise<T> {
    const result = this.chain.then(exchange);
    this.chain = result.catch(() => undefined);
    return result;
  }

  start(): void {
    void this.open();
  }

  /** The device is unusable though the port is open (it stopped answering): close, and reopen with back-off. */
  fail(detail: string): void {
    if (this.port) this.down(detail);
  }

  protected log(level: Parameters<LinkLog>[0], msg: string, fields?: Record<string, unknown>): void {
    this.portOptions.log(level, msg, fields);
  }

  /** The connection is up: the next loss starts the back-off from its minimum again. */
  healthy(): void {
    this.backoffMs = this.portOptions.reconnectMinMs;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connectionId++;
    this.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.opening?.abort(new Error('the driver stopped'));
    this.aborted();
    const port = this.port;
    this.port = undefined;
    await port?.close();
  }

  private async open(): Promise<void> {
    this.reconnectTimer = undefined;
    const connection = ++this.connectionId;
    const { path, baudRate, connectTimeoutMs, clock } = this.portOptions;
    const open = this.portOptions.openPort ?? openPort;
    let port: BytePort;
    const opening = new AbortController();
    this.opening = opening;
    try {
      port = await open({
        path,
        baudRate,
        clock,
        signal: opening.signal,
        ...(connectTimeoutMs ? { connectTimeoutMs } : {}),
      });
    } catch (err) {
      if (connection === this.connectionId) this.down(`cannot open ${path}: ${(err as Error).message}`);
      return;
    } finally {
      if (this.opening === opening) this.opening = undefined;
    }
    if (connection !== this.connectionId) {
      void port.close(); // stopped (or superseded) while opening
      return;
    }
    this.port = port;
    this.opened();
    port.on('data', (chunk: Buffer) => this.received(connection, chunk));
    port.on('close', () => {
      if (connection === this.connectionId) this.down(this.lostDetail);
    });
    // A read or write failure: the port is unusable (a 'close' follows), so reopen rather than wait for timeouts.
    port.on('error', (err: Error) => {
      this.portOptions.log('warn', `${this.portOptions.family}: port error: ${err.message}`);
      if (connection === this.connectionId) this.down(`${path}: ${err.message}`);
    });
    this.portOptions.onUp();
  }

  /** The port is gone or unusable: drop it, fail what is in flight, and schedule a reopen with back-off. */
  private down(detail: string): void {
    if (this.stopped) return;
    this.connectionId++;
    this.aborted();
    const port = this.port;
    this.port = undefined;
    void port?.close();
    this.portOptions.log('warn', `${this.portOptions.family}: offline: ${detail}; retrying in ${this.backoffMs} ms`);
    this.clock.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = this.clock.setTimeout(() => void this.open(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.portOptions.reconnectMaxMs);
    this.portOptions.onDown(detail);
  }

  /** Why the port went away, in the words that fit how it is attached. */
  private get lostDetail(): string {
    const { path } = this.portOptions;
    return isNetworkPath(path)
      ? `${path}: the adapter closed the connection (adapter restarted or network down?)`
      : `${path} closed (unplugged or connection lost?)`;
  }
}
