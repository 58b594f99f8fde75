// The Monoprice line: its framing, and a query or a set as a request that ends at the amp's prompt (or, on amps that
// send none, once the line is quiet). Exchanges, timeouts and the resync after one are the core link's.
import { Link, type Outcome, type Request } from '../core/link.js';
import type { ReconnectingPortOptions } from '../core/reconnecting-port.js';
import type { WriteOutcome } from '../core/serial-options.js';
import {
  encodeQuery,
  encodeSet,
  type Frame,
  LineFramer,
  ReplyCollector,
  type SetAttribute,
  unitZones,
  ZONES_PER_UNIT,
  type ZoneStatus,
} from './protocol.js';

export interface Reply {
  outcome: Outcome;
  /** Status lines of the zones asked for. */
  statuses: ZoneStatus[];
  /** Data lines received, garbled ones included: any means the unit answered. */
  received: number;
}

export interface LinkOptions extends Omit<ReconnectingPortOptions, 'family'> {
  timeoutMs: number;
  gapMs: number;
}

/** A request answered through a collector; `Command Error.` in the gap after a set's prompt makes it refused. */
function collected(bytes: string, collector: ReplyCollector, quietMs?: number): Request<Frame> {
  return {
    bytes,
    reply: (frame) => collector.accept(frame) ?? 'more',
    late: (frame, outcome) => (outcome === 'ok' && frame.kind === 'error' ? 'error' : undefined),
    ...(quietMs === undefined ? {} : { quietMs }),
  };
}

export class MonopriceLink extends Link<Frame> {
  private readonly gapMs: number;
  /** Learned from query replies: false for amps that send no prompt after a command, so a set gets no answer at all. */
  private prompts = true;

  constructor(options: LinkOptions) {
    super({
      ...options,
      family: 'monoprice',
      framer: new LineFramer(),
      // Anything still buffered belongs to an earlier exchange; starting clean is what keeps the framing in step.
      freshFramePerRequest: true,
      // A bare CR flushes a half command the amp holds (a replug mid-command) and drains a late reply to its prompt.
      recovery: () => collected('\r', new ReplyCollector(0), options.gapMs),
      recoverOnConnect: true,
      unsolicited: (frame) => options.log('debug', 'monoprice: stray line', { frame }),
    });
    this.gapMs = options.gapMs;
  }

  /** Reads a whole unit (`?x0`, six status lines) or one zone (`?xy`). */
  async query(address: number): Promise<Reply> {
    const unit = address % 10 === 0;
    const collector = new ReplyCollector(unit ? ZONES_PER_UNIT : 1, unit ? unitZones(address / 10) : [address]);
    const outcome = await this.request(collected(encodeQuery(address), collector));
    if (outcome === 'closed') return { outcome, statuses: [], received: 0 };
    if (collector.received > 0) this.learnPrompting(collector.prompted);
    return { outcome, statuses: collector.statuses, received: collector.received };
  }

  /**
   * Sends one set: 'ok' once the amp prompted after it (it answers a set with its prompt at most, never with data);
   * 'sent' on an amp that prompts for nothing, where the set ends once the line is quiet and only a read shows it took.
   */
  async set(zone: number, attribute: SetAttribute, value: number): Promise<WriteOutcome> {
    const collector = new ReplyCollector(0);
    const outcome = await this.request(
      collected(encodeSet(zone, attribute, value), collector, this.prompts ? undefined : this.gapMs),
    );
    return outcome === 'ok' && !collector.prompted ? 'sent' : outcome;
  }

  private learnPrompting(prompted: boolean): void {
    if (prompted === this.prompts) return;
    this.prompts = prompted;
    this.log(
      'info',
      prompted
        ? 'monoprice: the amplifier prompts after each command again'
        : 'monoprice: the amplifier sends no prompt after a command; a set is taken as done once the line is quiet',
    );
  }
}
