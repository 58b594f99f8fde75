// The byte link to a Xantech amp: port open/reopen with back-off, one command in flight, replies matched with timeouts.
import { SerialLink, type LinkLog, type PortLinkOptions } from '../serial-link.js';
import { Framer, encodeActivityUpdates, encodeQuery, encodeSet, type Frame, type SetAttribute, type ZoneStatus } from './protocol.js';

export type Outcome = 'ok' | 'timeout' | 'error' | 'closed';

export interface Reply {
  outcome: Outcome;
  /** The zone report a `?{z}ZD+` query came back with. */
  status?: ZoneStatus;
}

export type { LinkLog };

export interface LinkOptions extends PortLinkOptions {
  timeoutMs: number;
  gapMs: number;
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

export class XantechLink extends SerialLink {
  private readonly options: LinkOptions;
  private readonly framer = new Framer();
  private current: Exchange | undefined;
  /** After a timeout the late answer may still come: the next command waits for the line to go quiet first. */
  private needsDrain = false;
  private lastDataAt = 0;
  /** Timers of the gap after an exchange; cleared when the session ends so stop() leaves none behind. */
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  constructor(options: LinkOptions) {
    // A TCP connect crosses a network and an adapter: allow it a few command timeouts.
    super({ ...options, family: 'xantech', connectTimeoutMs: options.timeoutMs * CONNECT_TIMEOUTS });
    this.options = options;
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

  protected opened(): void {
    this.framer.reset();
    this.needsDrain = false; // a late answer on the old connection cannot reach this one
  }

  // ---- exchanges -----------------------------------------------------------------------------------------------

  private enqueue(command: string, matcher: (ex: Exchange) => Matcher): Promise<Reply> {
    const session = this.session;
    const run = async (): Promise<Reply> => {
      if (this.needsDrain && session === this.session) {
        this.needsDrain = false;
        await this.drain(session);
      }
      const ex: Exchange = { command, match: () => undefined, timer: undefined, resolve: () => undefined };
      ex.match = matcher(ex);
      const outcome = await this.exchange(session, ex);
      if (outcome !== 'closed') await this.wait(session, this.options.gapMs);
      return outcome === 'closed' ? { outcome } : { outcome, status: ex.status };
    };
    return this.queue(run);
  }

  /** Writes one command and resolves with its outcome once its answer came or the timeout passed. */
  private exchange(session: number, ex: Exchange): Promise<Outcome> {
    const port = this.portOf(session);
    if (!port) return Promise.resolve('closed');
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

  protected aborted(): void {
    if (this.current) this.complete(this.current, 'closed');
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
  }

  /** Resolves after `ms`, or at once when the session ends. */
  private wait(session: number, ms: number): Promise<void> {
    if (session !== this.session || ms <= 0) return Promise.resolve();
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
    while (session === this.session && performance.now() < deadline) {
      const sinceData = performance.now() - this.lastDataAt;
      if (sinceData >= quietMs) return;
      await this.wait(session, quietMs - sinceData);
    }
  }

  protected received(session: number, chunk: Buffer): void {
    if (session !== this.session) return;
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
}
