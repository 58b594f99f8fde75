// The Xantech line: its framing, and a query, a set or the activity switch as a request ending at the matching report
// or at OK/ERROR. Reports nobody asked for (zone activity) go to the driver; after a timeout the line is drained.
import { Link, type Outcome, type Request } from '../core/link.js';
import type { ReconnectingPortOptions } from '../core/reconnecting-port.js';
import {
  encodeActivityUpdates,
  encodeQuery,
  encodeSet,
  type Frame,
  Framer,
  type SetAttribute,
  type ZoneStatus,
} from './protocol.js';

export interface Reply {
  outcome: Outcome;
  /** The zone report a `?{z}ZD+` query came back with. */
  status?: ZoneStatus;
}

export interface LinkOptions extends Omit<ReconnectingPortOptions, 'family'> {
  timeoutMs: number;
  gapMs: number;
  /** A zone report nobody asked for: zone-activity mode, or a report left over from an earlier exchange. */
  onReport(status: ZoneStatus): void;
}

/** How many command timeouts a TCP connect may take. */
const CONNECT_TIMEOUTS = 3;

const acknowledged = (bytes: string): Request<Frame> => ({
  bytes,
  reply: (frame) => (frame.kind === 'ok' ? 'ok' : frame.kind === 'error' ? 'error' : undefined),
});

export class XantechLink extends Link<Frame> {
  constructor(options: LinkOptions) {
    super({
      ...options,
      family: 'xantech',
      // A TCP connect crosses a network and an adapter: allow it a few command timeouts.
      connectTimeoutMs: options.timeoutMs * CONNECT_TIMEOUTS,
      framer: new Framer(),
      // A late answer may still come after a timeout: wait until nothing has arrived for two gaps (at most a timeout).
      recovery: () => ({ bytes: '', quietMs: Math.max(2 * options.gapMs, 5) }),
      unsolicited: (frame) => {
        if (frame.kind === 'status') options.onReport(frame.status);
        else options.log('debug', 'xantech: stray frame', { frame });
      },
    });
  }

  /** `?{z}ZD+`: complete at that zone's report. */
  async query(zone: number): Promise<Reply> {
    let status: ZoneStatus | undefined;
    const outcome = await this.request({
      bytes: encodeQuery(zone),
      reply: (frame) => {
        if (frame.kind === 'error') return 'error';
        if (frame.kind !== 'status' || frame.status.zone !== zone) return undefined;
        status = frame.status;
        return 'ok';
      },
    });
    return outcome === 'closed' || !status ? { outcome } : { outcome, status };
  }

  /** `!{z}VO20+` and the like: complete at OK or ERROR. */
  set(zone: number, attribute: SetAttribute, value: number): Promise<Outcome> {
    return this.request(acknowledged(encodeSet(zone, attribute, value)));
  }

  /** `!ZA1+` / `!ZA0+`. */
  activityUpdates(on: boolean): Promise<Outcome> {
    return this.request(acknowledged(encodeActivityUpdates(on)));
  }
}
