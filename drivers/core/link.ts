// One request at a time on the line and the frames that answer it: written, matched, timed out, followed by a quiet
// gap. Frames no request takes go to the family; after a timeout the line is brought back in step before the next
// request. Families supply the framer, the requests' bytes and their matchers.
import { ReconnectingPort, type ReconnectingPortOptions } from './reconnecting-port.js';

export type Outcome = 'ok' | 'timeout' | 'error' | 'closed';

/** Turns the bytes of a connection into frames; reset() forgets a partial one (a new connection, a fresh request). */
export interface Framer<F> {
  push(chunk: Buffer): F[];
  reset(): void;
  /** Bytes held since the last frame (diagnostics). */
  readonly buffered?: string;
}

export interface Request<F> {
  /** What goes on the wire; empty sends nothing (waiting for the line to go quiet). */
  bytes: Buffer | string;
  /**
   * Each frame while the answer is awaited: 'ok' or 'error' completes the request, 'more' takes the frame and waits
   * on, undefined leaves it to the family (a report nobody asked for, bus traffic). Without it the request is
   * complete once written (RNET events, which nothing answers), unless it ends when the line is quiet.
   */
  reply?(frame: F): 'ok' | 'error' | 'more' | undefined;
  /** A frame in the gap after completion that changes the outcome (Monoprice: `Command Error.` after a set's prompt). */
  late?(frame: F, outcome: Outcome): Outcome | undefined;
  /** Also complete ('ok') once the line has been quiet this long, counted from the write (or the last data). */
  quietMs?: number;
  /** Instead of the link's timeout. */
  timeoutMs?: number;
}

export interface LinkOptions<F> extends ReconnectingPortOptions {
  timeoutMs: number;
  /** Quiet time held after every exchange: amplifiers desynchronise when commands are pipelined. */
  gapMs: number;
  framer: Framer<F>;
  /** A frame no request took. */
  unsolicited(frame: F): void;
  /**
   * What brings the line back in step after a reply timed out, before the next request, so that a late answer is not
   * taken for the next one's: a bare CR answered by a prompt, or waiting for the line to go quiet. None: frames carry
   * their own addresses (RNET).
   */
  recovery?(): Request<F>;
  /** Whether every new connection starts with the recovery (Monoprice: a half command left from before a replug). */
  recoverOnConnect?: boolean;
  /** Forget a partial frame before each request: on a line-oriented amp what is buffered belongs to an earlier one. */
  freshFramePerRequest?: boolean;
}

/** One request on the wire, from the write to the end of the gap after its answer. */
interface Exchange<F> {
  request: Request<F>;
  /** The recovery itself: its own timeout does not call for another. */
  recovery: boolean;
  /** Undefined while the answer is awaited; then what it came to, during the gap that follows. */
  outcome: Outcome | undefined;
  timer: unknown;
  quiet: unknown;
  resolve(outcome: Outcome): void;
}

export class Link<F> extends ReconnectingPort {
  private readonly options: LinkOptions<F>;
  private current: Exchange<F> | undefined;
  private recover = false;
  private lastDataAt = -Infinity;

  constructor(options: LinkOptions<F>) {
    super(options);
    this.options = options;
  }

  /** Sends `request` once every request before it has finished; resolves with its outcome once the gap has passed. */
  request(request: Request<F>): Promise<Outcome> {
    const connection = this.connection;
    return this.queue(async () => {
      const { recovery } = this.options;
      if (this.recover && recovery && connection === this.connection) {
        this.recover = false;
        await this.exchange(connection, recovery(), true);
      }
      return this.exchange(connection, request, false);
    });
  }

  protected opened(): void {
    this.options.framer.reset();
    this.recover = this.options.recoverOnConnect ?? false;
  }

  private exchange(connection: number, request: Request<F>, recovery: boolean): Promise<Outcome> {
    const port = this.portOf(connection);
    // No port in this connection: it is still opening or already gone, and nothing is sent before it is up.
    if (!port) return Promise.resolve('closed');
    if (this.options.freshFramePerRequest) this.options.framer.reset();
    return new Promise((resolve) => {
      const ex: Exchange<F> = { request, recovery, outcome: undefined, timer: undefined, quiet: undefined, resolve };
      this.current = ex;
      ex.timer = this.clock.setTimeout(() => this.complete(ex, 'timeout'), request.timeoutMs ?? this.options.timeoutMs);
      const sends = request.bytes.length > 0;
      // A failed write is the port's 'error', which takes the connection down.
      if (sends) port.write(request.bytes);
      if (request.quietMs !== undefined) this.awaitQuiet(ex, sends ? this.clock.now() : this.lastDataAt);
      else if (!request.reply) this.complete(ex, 'ok');
    });
  }

  private awaitQuiet(ex: Exchange<F>, since: number): void {
    this.clock.clearTimeout(ex.quiet);
    const wait = Math.max(0, since + ex.request.quietMs! - this.clock.now());
    ex.quiet = this.clock.setTimeout(() => this.complete(ex, 'ok'), wait);
  }

  /** The answer is complete: hold the line for the gap, during which a late frame may still change the outcome. */
  private complete(ex: Exchange<F>, outcome: Outcome): void {
    if (this.current !== ex || ex.outcome !== undefined) return;
    this.clock.clearTimeout(ex.timer);
    this.clock.clearTimeout(ex.quiet);
    ex.outcome = outcome;
    if (outcome === 'timeout') {
      const { bytes } = ex.request;
      const sent = typeof bytes === 'string' ? JSON.stringify(bytes) : bytes.toString('hex');
      this.options.log('debug', `${this.options.family}: timeout on ${sent}`, {
        buffered: this.options.framer.buffered,
      });
      if (!ex.recovery) this.recover = true;
    }
    if (outcome === 'closed') return this.release(ex);
    ex.timer = this.clock.setTimeout(() => this.release(ex), this.options.gapMs);
  }

  private release(ex: Exchange<F>): void {
    this.clock.clearTimeout(ex.timer);
    this.clock.clearTimeout(ex.quiet);
    if (this.current === ex) this.current = undefined;
    ex.resolve(ex.outcome ?? 'closed');
  }

  /** The connection ended: the exchange in flight is 'closed'; the queue drains, each request finding its connection gone. */
  protected aborted(): void {
    const ex = this.current;
    if (!ex) return;
    ex.outcome = 'closed';
    this.release(ex);
  }

  protected received(connection: number, chunk: Buffer): void {
    if (connection !== this.connection) return;
    this.lastDataAt = this.clock.now();
    const ex = this.current;
    if (ex && ex.outcome === undefined && ex.request.quietMs !== undefined) this.awaitQuiet(ex, this.lastDataAt);
    for (const frame of this.options.framer.push(chunk)) this.take(frame);
  }

  private take(frame: F): void {
    const ex = this.current;
    if (ex && ex.outcome === undefined && ex.request.reply) {
      const verdict = ex.request.reply(frame);
      if (verdict === 'ok' || verdict === 'error') return this.complete(ex, verdict);
      if (verdict === 'more') return;
    } else if (ex?.outcome !== undefined && ex.request.late) {
      const outcome = ex.request.late(frame, ex.outcome);
      if (outcome) {
        ex.outcome = outcome;
        return;
      }
    }
    this.options.unsolicited(frame);
  }
}
