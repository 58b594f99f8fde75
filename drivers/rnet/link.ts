// The RNET line: its framing (with the checksum trust below), a zone info request answered by that zone's info, and
// events, which nothing answers. Everything else on the bus is handed up as unsolicited traffic.
import type { Framer } from '../core/link.js';
import { Link, type Outcome } from '../core/link.js';
import type { LinkLog, ReconnectingPortOptions } from '../core/reconnecting-port.js';
import { classify, encodeZoneInfoRequest, type Frame, FrameParser, type Heard, type ZoneInfo } from './protocol.js';

export interface Reply {
  outcome: Outcome;
  info?: ZoneInfo;
}

export interface LinkOptions extends Omit<ReconnectingPortOptions, 'family'> {
  timeoutMs: number;
  /** Quiet time after each message (and after its reply): the docs ask for about 100 ms. */
  gapMs: number;
  /** A frame that answers nothing we asked: keypad events, display feedback, late or foreign replies. */
  onHeard(heard: Heard): void;
}

/**
 * Frames from the bus, classified. Clients in the field never check checksums and one document example carries a
 * wrong one, so until the controller has shown it computes them as documented (a frame with a correct checksum),
 * frames with a bad checksum are accepted; from then on they are line noise and dropped.
 */
class BusFramer implements Framer<Heard> {
  private readonly parser = new FrameParser();
  private checksumsTrusted = false;
  private loggedChecksums = false;

  constructor(private readonly log: LinkLog) {}

  push(chunk: Buffer): Heard[] {
    return this.parser
      .push(chunk)
      .filter((frame) => this.accepted(frame))
      .map(classify);
  }

  reset(): void {
    this.parser.reset();
  }

  private accepted(frame: Frame): boolean {
    if (frame.checksumOk) {
      this.checksumsTrusted = true;
      return true;
    }
    if (this.checksumsTrusted) {
      this.log('debug', 'rnet: dropped a frame with a bad checksum (line noise)');
      return false;
    }
    if (!this.loggedChecksums) {
      this.loggedChecksums = true;
      this.log('info', 'rnet: the controller sends checksums that do not match the documented formula; accepting them');
    }
    return true;
  }
}

export class RnetLink extends Link<Heard> {
  constructor(options: LinkOptions) {
    super({ ...options, family: 'rnet', framer: new BusFramer(options.log), unsolicited: options.onHeard });
  }

  /** Asks one zone for all its info; 'ok' with the info, or 'timeout'. */
  async zoneInfo(controller: number, zone: number): Promise<Reply> {
    let info: ZoneInfo | undefined;
    const outcome = await this.request({
      bytes: encodeZoneInfoRequest(controller, zone),
      reply: (heard) => {
        if (heard.kind !== 'zone-info' || heard.info.controller !== controller || heard.info.zone !== zone)
          return undefined;
        info = heard.info;
        return 'ok';
      },
    });
    return info ? { outcome, info } : { outcome };
  }

  /** Sends one event (a set): RNET answers none, so 'ok' means it went out and the gap after it has passed. */
  send(message: Buffer): Promise<Outcome> {
    return this.request({ bytes: message });
  }
}
