// The serial link to the amp: port open/reopen with back-off, one command in flight, replies matched with timeouts.
import { openPort, parseTcpPort, type BytePort } from '../port.js';
import {
  LineFramer,
  ReplyCollector,
  ZONES_PER_UNIT,
  encodeQuery,
  encodeSet,
  unitZones,
  type SetAttribute,
  type ZoneStatus,
} from './protocol.js';

export type Outcome = 'ok' | 'timeout' | 'error' | 'closed';

export interface Reply {
  outcome: Outcome;
  /** Status lines of the zones asked for. */
  statuses: ZoneStatus[];
  /** Data lines received, garbled ones included: any means the unit answered. */
  received: number;
}

export type LinkLog = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface LinkOptions {
  /** A serial device, or `tcp://host:port` for an IP-serial adapter (drivers/port.ts). */
  path: string;
  baudRate: number;
  timeoutMs: number;
  gapMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  log: LinkLog;
  /** The port is open: the session can start (the link flushes the amp's input before the first command). */
  onUp(): void;
  /** The port closed, failed to open, or fail() was called; a reopen is already scheduled. */
  onDown(detail: string): void;
}

/** One command on the wire, from the write to the end of the quiet gap that follows its reply. */
interface Exchange {
  command: string;
  reply: ReplyCollector;
  /** Also complete once the line has been quiet for the gap: the resync, and sets to an amp that prompts for nothing. */
  endsWhenQuiet: boolean;
  /** Undefined while the reply is awaited; then what it came to, during the gap that follows. */
  outcome: Outcome | undefined;
  timer: NodeJS.Timeout | undefined;
  quiet: NodeJS.Timeout | undefined;
  resolve: (outcome: Outcome) => void;
}

const closedReply = (): Reply => ({ outcome: 'closed', statuses: [], received: 0 });

function isNetworkPath(path: string): boolean {
  try {
    return parseTcpPort(path) !== undefined;
  } catch {
    return false; // a malformed tcp: path never opens, so it never closes either
  }
}

export class MonopriceLink {
  private readonly options: LinkOptions;
  private readonly framer = new LineFramer();
  private port: BytePort | undefined;
  private sessionId = 0;
  private stopped = false;
  private current: Exchange | undefined;
  /** The queue: each command starts when the previous one has finished, gap included. */
  private chain: Promise<unknown> = Promise.resolve();
  private needsResync = false;
  /** Learned from query replies: false for amps that send no prompt after a command, so a set gets no answer at all. */
  private prompts = true;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Cancels an open under way, so stop() leaves no connect attempt (and its timer) behind. */
  private opening: AbortController | undefined;

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

  /** Reads a whole unit (`?x0`, six status lines) or one zone (`?xy`). */
  query(address: number): Promise<Reply> {
    const unit = address % 10 === 0;
    const zones = unit ? unitZones(address / 10) : [address];
    return this.enqueue(encodeQuery(address), () => new ReplyCollector(unit ? ZONES_PER_UNIT : 1, zones));
  }

  /** Sends one set: 'ok' once the amp took it (it answers a set with its prompt at most, never with data). */
  set(zone: number, attribute: SetAttribute, value: number): Promise<Reply> {
    return this.enqueue(encodeSet(zone, attribute, value), () => new ReplyCollector(0));
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
    this.opening?.abort(new Error('the driver stopped'));
    this.abort();
    const port = this.port;
    this.port = undefined;
    await port?.close();
  }

  // ---- port ----------------------------------------------------------------------------------------------------

  private async open(): Promise<void> {
    this.reconnectTimer = undefined;
    const session = ++this.sessionId;
    const { path, baudRate } = this.options;
    let port: BytePort;
    const opening = new AbortController();
    this.opening = opening;
    try {
      port = await openPort({ path, baudRate, signal: opening.signal });
    } catch (err) {
      if (session === this.sessionId) this.down(`cannot open ${path}: ${(err as Error).message}`);
      return;
    } finally {
      if (this.opening === opening) this.opening = undefined;
    }
    if (session !== this.sessionId) {
      void port.close(); // stopped while opening
      return;
    }
    this.port = port;
    this.framer.reset();
    // A bare CR first flushes whatever half command the amp holds from before (a replug mid-command).
    this.needsResync = true;
    port.on('data', (chunk: Buffer) => this.onData(session, chunk));
    port.on('close', () => {
      if (session === this.sessionId) this.down(this.lostDetail);
    });
    // A read or write failure: the port is unusable (a 'close' follows), so reopen rather than wait for timeouts.
    port.on('error', (err: Error) => {
      this.options.log('warn', `monoprice: port error: ${err.message}`);
      if (session === this.sessionId) this.down(`${path}: ${err.message}`);
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
    void port?.close();
    this.options.log('warn', `monoprice: offline: ${detail}; retrying in ${this.backoffMs} ms`);
    this.reconnectTimer = setTimeout(() => void this.open(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.reconnectMaxMs);
    this.options.onDown(detail);
  }

  /** Why the port went away, in the words that fit how it is attached. */
  private get lostDetail(): string {
    const { path } = this.options;
    return isNetworkPath(path)
      ? `${path}: the adapter closed the connection (adapter restarted or network down?)`
      : `${path} closed (unplugged?)`;
  }

  // ---- exchanges -----------------------------------------------------------------------------------------------

  private enqueue(command: string, collector: () => ReplyCollector): Promise<Reply> {
    const session = this.sessionId;
    const run = async (): Promise<Reply> => {
      if (this.needsResync && session === this.sessionId) {
        // Drain the line until a prompt before the next command: a late reply must not be taken for its answer.
        this.needsResync = false;
        await this.exchange(session, '\r', new ReplyCollector(0), true);
      }
      const reply = collector();
      const outcome = await this.exchange(session, command, reply, reply.lines === 0 && !this.prompts);
      if (outcome === 'closed') return closedReply();
      if (reply.received > 0) this.learnPrompting(reply.prompted);
      return { outcome, statuses: reply.statuses, received: reply.received };
    };
    const result = this.chain.then(run);
    this.chain = result.catch(() => undefined);
    return result;
  }

  /** Writes one command and resolves once its reply is complete (or timed out) and the gap after it has passed. */
  private exchange(session: number, command: string, reply: ReplyCollector, endsWhenQuiet: boolean): Promise<Outcome> {
    const port = this.port;
    // No port in the current session: it is still opening, and the driver sends nothing before it is up.
    if (session !== this.sessionId || this.stopped || !port) return Promise.resolve('closed');
    // Anything still buffered belongs to an earlier exchange; starting clean is what keeps the framing in step.
    this.framer.reset();
    return new Promise((resolve) => {
      const ex: Exchange = { command, reply, endsWhenQuiet, resolve, outcome: undefined, timer: undefined, quiet: undefined };
      ex.timer = setTimeout(() => this.complete(ex, 'timeout'), this.options.timeoutMs);
      this.current = ex;
      if (endsWhenQuiet) this.restartQuiet(ex);
      port.write(command); // a failed write is the port's 'error', which takes the link down
    });
  }

  /**
   * The reply is complete: hold the line for the gap (the amp desynchronises when commands are pipelined). A set's
   * `Command Error.` follows its echo and prompt, so one arriving in the gap turns the outcome into 'error'.
   */
  private complete(ex: Exchange, outcome: Outcome): void {
    if (this.current !== ex || ex.outcome !== undefined) return;
    clearTimeout(ex.timer);
    clearTimeout(ex.quiet);
    ex.outcome = outcome;
    if (outcome === 'timeout') {
      this.options.log('debug', `monoprice: timeout on ${JSON.stringify(ex.command)}`, { buffered: this.framer.buffered });
      this.needsResync = true;
    }
    if (outcome === 'closed') return this.release(ex);
    ex.timer = setTimeout(() => this.release(ex), this.options.gapMs);
  }

  private release(ex: Exchange): void {
    clearTimeout(ex.timer);
    clearTimeout(ex.quiet);
    if (this.current === ex) this.current = undefined;
    ex.resolve(ex.outcome ?? 'closed');
  }

  private restartQuiet(ex: Exchange): void {
    clearTimeout(ex.quiet);
    ex.quiet = setTimeout(() => this.complete(ex, 'ok'), this.options.gapMs);
  }

  /** Fails the exchange in flight; the queue then drains, each waiting command finding its session gone. */
  private abort(): void {
    const ex = this.current;
    if (!ex) return;
    ex.outcome = 'closed';
    this.release(ex);
  }

  private onData(session: number, chunk: Buffer): void {
    if (session !== this.sessionId) return;
    const ex = this.current;
    if (ex?.endsWhenQuiet && ex.outcome === undefined) this.restartQuiet(ex);
    for (const frame of this.framer.push(chunk)) {
      if (ex && ex.outcome === undefined) {
        const done = ex.reply.accept(frame);
        if (done) this.complete(ex, done);
      } else if (ex?.outcome === 'ok' && frame.kind === 'error') {
        ex.outcome = 'error';
      } else {
        this.options.log('debug', 'monoprice: stray line', { frame });
      }
    }
  }

  private learnPrompting(prompted: boolean): void {
    if (prompted === this.prompts) return;
    this.prompts = prompted;
    this.options.log(
      'info',
      prompted
        ? 'monoprice: the amplifier prompts after each command again'
        : 'monoprice: the amplifier sends no prompt after a command; a set is taken as done once the line is quiet',
    );
  }
}
