// The RNET line: port open/reopen with back-off, one message at a time with a quiet gap after each, replies matched
// by zone with a timeout, and everything else on the bus handed up as unsolicited traffic.
import { SerialLink, type LinkLog, type PortLinkOptions } from '../serial-link.js';
import { FrameParser, classify, encodeZoneInfoRequest, type Frame, type Heard, type ZoneInfo } from './protocol.js';

export type Outcome = 'ok' | 'timeout' | 'closed';

export interface Reply {
  outcome: Outcome;
  info?: ZoneInfo;
}

export type { LinkLog };

export interface LinkOptions extends PortLinkOptions {
  timeoutMs: number;
  /** Quiet time after each message (and after its reply): the docs ask for about 100 ms. */
  gapMs: number;
  /** A frame that answers nothing we asked: keypad events, display feedback, late or foreign replies. */
  onHeard(heard: Heard): void;
}

/** One message on the wire, from the write to the end of the gap after it. */
interface Exchange {
  /** For a request: the 1-based controller and zone whose info answers it. */
  awaits: { controller: number; zone: number } | undefined;
  info: ZoneInfo | undefined;
  outcome: Outcome | undefined;
  timer: NodeJS.Timeout | undefined;
  resolve: (outcome: Outcome) => void;
}

export class RnetLink extends SerialLink {
  private readonly options: LinkOptions;
  private readonly parser = new FrameParser();
  private current: Exchange | undefined;
  /**
   * Set once a frame with a correct checksum arrives. Clients in the field never check checksums and one document
   * example carries a wrong one, so until the controller has shown it computes them as documented, frames with a
   * bad checksum are accepted; from then on they are line noise and dropped.
   */
  private checksumsTrusted = false;
  private loggedChecksums = false;

  constructor(options: LinkOptions) {
    super({ ...options, family: 'rnet' });
    this.options = options;
  }

  /** Asks one zone for all its info; 'ok' with the info, or 'timeout'. */
  request(controller: number, zone: number, timeoutMs = this.options.timeoutMs): Promise<Reply> {
    return this.enqueue(encodeZoneInfoRequest(controller, zone), { controller, zone }, timeoutMs);
  }

  /** Sends one event (a set): RNET answers none, so 'ok' means it went out and the gap after it has passed. */
  send(message: Buffer): Promise<Reply> {
    return this.enqueue(message, undefined, 0);
  }

  protected opened(): void {
    this.parser.reset();
  }

  // ---- exchanges -----------------------------------------------------------------------------------------------

  private enqueue(message: Buffer, awaits: Exchange['awaits'], timeoutMs: number): Promise<Reply> {
    const session = this.session;
    const run = async (): Promise<Reply> => {
      const ex: Exchange = { awaits, info: undefined, outcome: undefined, timer: undefined, resolve: () => undefined };
      const outcome = await this.exchange(session, message, ex, timeoutMs);
      return ex.info ? { outcome, info: ex.info } : { outcome };
    };
    return this.queue(run);
  }

  /** Writes one message and resolves once its reply is in (or timed out) and the gap after it has passed. */
  private exchange(session: number, message: Buffer, ex: Exchange, timeoutMs: number): Promise<Outcome> {
    const port = this.portOf(session);
    if (!port) return Promise.resolve('closed');
    return new Promise((resolve) => {
      ex.resolve = resolve;
      this.current = ex;
      port.write(message);
      if (ex.awaits) ex.timer = setTimeout(() => this.complete(ex, 'timeout'), timeoutMs);
      else this.complete(ex, 'ok');
    });
  }

  /** The reply is in (or the set went out): hold the line quiet for the gap before the next message. */
  private complete(ex: Exchange, outcome: Outcome): void {
    if (this.current !== ex || ex.outcome !== undefined) return;
    clearTimeout(ex.timer);
    ex.outcome = outcome;
    if (outcome === 'closed') return this.release(ex);
    ex.timer = setTimeout(() => this.release(ex), this.options.gapMs);
  }

  private release(ex: Exchange): void {
    clearTimeout(ex.timer);
    if (this.current === ex) this.current = undefined;
    ex.resolve(ex.outcome ?? 'closed');
  }

  /** Fails the exchange in flight; the queue then drains, each waiting message finding its session gone. */
  protected aborted(): void {
    const ex = this.current;
    if (!ex) return;
    ex.outcome = 'closed';
    this.release(ex);
  }

  protected received(session: number, chunk: Buffer): void {
    if (session !== this.session) return;
    for (const frame of this.parser.push(chunk)) {
      if (!this.checksumAccepted(frame)) continue;
      const heard = classify(frame);
      const ex = this.current;
      const wanted = ex?.outcome === undefined ? ex?.awaits : undefined;
      if (wanted && heard.kind === 'zone-info' && heard.info.controller === wanted.controller && heard.info.zone === wanted.zone) {
        ex!.info = heard.info;
        this.complete(ex!, 'ok');
        continue;
      }
      this.options.onHeard(heard);
    }
  }

  private checksumAccepted(frame: Frame): boolean {
    if (frame.checksumOk) {
      this.checksumsTrusted = true;
      return true;
    }
    if (this.checksumsTrusted) {
      this.options.log('debug', 'rnet: dropped a frame with a bad checksum (line noise)');
      return false;
    }
    if (!this.loggedChecksums) {
      this.loggedChecksums = true;
      this.options.log('info', 'rnet: the controller sends checksums that do not match the documented formula; accepting them');
    }
    return true;
  }
}
