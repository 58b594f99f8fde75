// The serial link to the amp: port open/reopen with back-off, one command in flight, replies matched with timeouts.
import { SerialLink, type LinkLog, type PortLinkOptions } from '../serial-link.js';
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

export type { LinkLog };

export interface LinkOptions extends PortLinkOptions {
  timeoutMs: number;
  gapMs: number;
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

export class MonopriceLink extends SerialLink {
  private readonly options: LinkOptions;
  private readonly framer = new LineFramer();
  private current: Exchange | undefined;
  private needsResync = false;
  /** Learned from query replies: false for amps that send no prompt after a command, so a set gets no answer at all. */
  private prompts = true;

  constructor(options: LinkOptions) {
    super({ ...options, family: 'monoprice' });
    this.options = options;
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

  protected opened(): void {
    this.framer.reset();
    // A bare CR first flushes whatever half command the amp holds from before (a replug mid-command).
    this.needsResync = true;
  }

  // ---- exchanges -----------------------------------------------------------------------------------------------

  private enqueue(command: string, collector: () => ReplyCollector): Promise<Reply> {
    const session = this.session;
    const run = async (): Promise<Reply> => {
      if (this.needsResync && session === this.session) {
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
    return this.queue(run);
  }

  /** Writes one command and resolves once its reply is complete (or timed out) and the gap after it has passed. */
  private exchange(session: number, command: string, reply: ReplyCollector, endsWhenQuiet: boolean): Promise<Outcome> {
    const port = this.portOf(session);
    // No port in the current session: it is still opening, and the driver sends nothing before it is up.
    if (!port) return Promise.resolve('closed');
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
  protected aborted(): void {
    const ex = this.current;
    if (!ex) return;
    ex.outcome = 'closed';
    this.release(ex);
  }

  protected received(session: number, chunk: Buffer): void {
    if (session !== this.session) return;
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
