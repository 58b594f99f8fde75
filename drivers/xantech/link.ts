// The byte link to a Xantech amp: port open/reopen with back-off, one command in flight, replies matched with timeouts.
import { openPort, type BytePort } from '../port.js';
import { Framer, encodeActivityUpdates, encodeQuery, encodeSet, type Frame, type SetAttribute, type ZoneStatus } from './protocol.js';

export type Outcome = 'ok' | 'timeout' | 'error' | 'closed';

export interface Reply {
  outcome: Outcome;
  /** The zone report a `?{z}ZD+` query came back with. */
  status?: ZoneStatus;
}

export type LinkLog = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface LinkOptions {
  /** A serial device or `tcp://host:port`. */
  path: string;
  baudRate: number;
  timeoutMs: number;
  gapMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  log: LinkLog;
  /** The port is open: the session can start. */
  onUp(): void;
  /** The port closed, failed to open, or fail() was called; a reopen is already scheduled. */
  onDown(detail: string): void;
  /** A zone report nobody asked for: zone-activity mode, or a report left over from an earlier exchange. */
  onReport(status: ZoneStatus): void;
}

/** A frame either completes the exchange ('ok'/'error'), or is not its answer (undefined). */
type Matcher = (frame: Frame) => 'ok' | 'error' | undefined;

interface Exchange {
  command: string;
  match: Matcher;
  status?: ZoneStatus;
  timer: NodeJS.Timeout | undefined;
  resolve: (outcome: Outcome) => void;
}

/** How many command timeouts a TCP connect may take. */
const CONNECT_TIMEOUTS = 3;

const acknowledgement: Matcher = (frame) => (frame.kind === 'ok' ? 'ok' : frame.kind === 'error' ? 'error' : undefined);

export class XantechLink {
  private readonly options: LinkOptions;
  private readonly framer = new Framer();
  private port: BytePort | undefined;
  private sessionId = 0;
  private stopped = false;
  private current: Exchange | undefined;
  /** The queue: each command starts when the previous one has finished, gap included. */
  private chain: Promise<unknown> = Promise.resolve();
  /** After a timeout the late answer may still come: the next command waits for the line to go quiet first. */
  private needsDrain = false;
  private lastDataAt = 0;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Timers of the gap after an exchange; cleared when the session ends so stop() leaves none behind. */
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  /** Ports that have said 'close': stop() must not wait for a second one. */
  private readonly closedPorts = new WeakSet<BytePort>();

  constructor(options: LinkOptions) {
    this.options = options;
    this.backoffMs = options.reconnectMinMs;
  }

  /** Bumped whenever the port opens or goes away: work begun in an older session is stale. */
  get session(): number {
    return this.sessionId;
  }

  start(): void {
    void this.open();
  }

  /** `?{z}ZD+`: complete at that zone's report. */
  query(zone: number): Promise<Reply> {
    return this.enqueue(encodeQuery(zone), (ex) => (frame) => {
      if (frame.kind === 'error') return 'error';
      if (frame.kind !== 'status' || frame.status.zone !== zone) return undefined;
      ex.status = frame.status;
      return 'ok';
    });
  }

  /** `!{z}VO20+` and the like: complete at OK or ERROR. */
  set(zone: number, attribute: SetAttribute, value: number): Promise<Reply> {
    return this.enqueue(encodeSet(zone, attribute, value), () => acknowledgement);
  }

  /** `!ZA1+` / `!ZA0+`. */
  activityUpdates(on: boolean): Promise<Reply> {
    return this.enqueue(encodeActivityUpdates(on), () => acknowledgement);
  }

  /** The amplifier is unusable though the port is open (it stopped answering): close, and reopen with back-off. */
  fail(detail: string): void {
    if (this.port) this.down(detail);
  }

  /** The session is up: the next loss starts the back-off from its minimum again. */
  healthy(): void {
    this.backoffMs = this.options.reconnectMinMs;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sessionId++;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.abort();
    const port = this.port;
    this.port = undefined;
    if (port) await this.closeAndWait(port);
  }

  // ---- port ----------------------------------------------------------------------------------------------------

  private async open(): Promise<void> {
    this.reconnectTimer = undefined;
    const session = ++this.sessionId;
    const { path, baudRate } = this.options;
    let port: BytePort;
    try {
      // A TCP connect crosses a network and an adapter: allow it a few command timeouts.
      port = await openPort({ path, baudRate, connectTimeoutMs: this.options.timeoutMs * CONNECT_TIMEOUTS });
    } catch (err) {
      if (session === this.sessionId) this.down(`cannot open ${path}: ${(err as Error).message}`);
      return;
    }
    if (session !== this.sessionId) {
      port.close(); // stopped while opening
      return;
    }
    this.port = port;
    this.framer.reset();
    this.needsDrain = false; // a late answer on the old connection cannot reach this one
    let closed = false;
    port.on('data', (chunk: Buffer) => this.onData(session, chunk));
    port.on('close', () => {
      closed = true;
      this.closedPorts.add(port);
      if (session === this.sessionId) this.down(`${path} closed (unplugged or connection dropped)`);
    });
    port.on('error', (err: Error) => {
      this.options.log('warn', `xantech: port error: ${err.message}`);
      if (session === this.sessionId && !closed) this.down(`${path}: ${err.message}`);
    });
    this.options.onUp();
  }

  /** The port is gone or unusable: drop it, fail what is in flight, and schedule a reopen with back-off. */
  private down(detail: string): void {
    if (this.stopped) return;
    this.sessionId++;
    this.abort();
    const port = this.port;
    this.port = undefined;
    port?.close();
    this.options.log('warn', `xantech: offline: ${detail}; retrying in ${this.backoffMs} ms`);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.open(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs);
    this.options.onDown(detail);
  }

  // ---- exchanges -----------------------------------------------------------------------------------------------

  private enqueue(command: string, matcher: (ex: Exchange) => Matcher): Promise<Reply> {
    const session = this.sessionId;
    const run = async (): Promise<Reply> => {
      if (this.needsDrain && session === this.sessionId) {
        this.needsDrain = false;
        await this.drain(session);
      }
      const ex: Exchange = { command, match: () => undefined, timer: undefined, resolve: () => undefined };
      ex.match = matcher(ex);
      const outcome = await this.exchange(session, ex);
      if (outcome !== 'closed') await this.wait(session, this.options.gapMs);
      return outcome === 'closed' ? { outcome } : { outcome, status: ex.status };
    };
    const result = this.chain.then(run);
    this.chain = result.catch(() => undefined);
    return result;
  }

  /** Writes one command and resolves with its outcome once its answer came or the timeout passed. */
  private exchange(session: number, ex: Exchange): Promise<Outcome> {
    const port = this.port;
    if (session !== this.sessionId || this.stopped || !port) return Promise.resolve('closed');
    return new Promise((resolve) => {
      ex.resolve = resolve;
      ex.timer = setTimeout(() => this.complete(ex, 'timeout'), this.options.timeoutMs);
      this.current = ex;
      port.write(ex.command);
    });
  }

  private complete(ex: Exchange, outcome: Outcome): void {
    if (this.current !== ex) return;
    clearTimeout(ex.timer);
    this.current = undefined;
    if (outcome === 'timeout') {
      this.options.log('debug', `xantech: timeout on ${JSON.stringify(ex.command)}`, { buffered: this.framer.buffered });
      this.needsDrain = true;
    }
    ex.resolve(outcome);
  }

  private abort(): void {
    if (this.current) this.complete(this.current, 'closed');
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
  }

  /** Resolves after `ms`, or at once when the session ends. */
  private wait(session: number, ms: number): Promise<void> {
    if (session !== this.sessionId || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        resolve,
        timer: setTimeout(() => {
          this.waits.delete(entry);
          resolve();
        }, ms),
      };
      this.waits.add(entry);
    });
  }

  /** Waits until nothing has arrived for two gaps (at most one timeout), so a late answer is not taken for the next. */
  private async drain(session: number): Promise<void> {
    const quietMs = Math.max(2 * this.options.gapMs, 5);
    const deadline = performance.now() + this.options.timeoutMs;
    while (session === this.sessionId && performance.now() < deadline) {
      const sinceData = performance.now() - this.lastDataAt;
      if (sinceData >= quietMs) return;
      await this.wait(session, quietMs - sinceData);
    }
  }

  private onData(session: number, chunk: Buffer): void {
    if (session !== this.sessionId) return;
    this.lastDataAt = performance.now();
    for (const frame of this.framer.push(chunk)) {
      const ex = this.current;
      const done = ex?.match(frame);
      if (ex && done) {
        this.complete(ex, done);
      } else if (frame.kind === 'status') {
        this.options.onReport(frame.status);
      } else {
        this.options.log('debug', 'xantech: stray frame', { frame });
      }
    }
  }

  /** Closes a port and resolves at its 'close' event (bounded: a port that never says so does not hang stop()). */
  private closeAndWait(port: BytePort): Promise<void> {
    if (this.closedPorts.has(port)) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 1000);
      timer.unref();
      port.on('close', () => {
        clearTimeout(timer);
        resolve();
      });
      port.close();
    });
  }
}
