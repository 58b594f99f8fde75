// Monoprice MPR-6ZHMAUT / Dayton DAX66 driver: the family's addressing (up to three chained units of six zones) and
// wire on the shared driver core, which keeps the ownership rule, the work loop, liveness and availability.
import { SerialDriver } from '../core/serial-driver.js';
import type { FirstRead, ReadReply, SerialOptions, WriteOutcome } from '../core/serial-options.js';
import type { Topology } from '../core/units.js';
import { type Attribute, bit, statusFields, type Write, ZoneBook } from '../core/zone-book.js';
import { MonopriceLink } from './link.js';
import { MONOPRICE_DEFAULTS } from './options.js';
import {
  isZoneAddress,
  MAX_UNITS,
  MONOPRICE_SOUND,
  type SetAttribute,
  SOURCE_COUNT,
  unitOf,
  unitZones,
  VOLUME_STEPS,
  ZONES_PER_UNIT,
} from './protocol.js';

export type MonopriceOptions = SerialOptions;

export { MONOPRICE_DEFAULTS } from './options.js';

/**
 * How often each zone is read while someone watches or just acted, from the start of one poll to the next: a keypad
 * change then reaches the daemon within about this long. A zone read takes ~65 ms of line time, so one unit's six
 * zones leave the line free most of the second; three units' 18 (~1.2 s, more with writes between) are read back to
 * back, the least that sees a change within 1.5 s.
 */
export const WATCHED_POLL_MS = 1000;

/** `Command Error.` replies in a row to one query or one set before the driver stops insisting (noise garbles some). */
const MAX_REFUSALS = 3;

const SET_NAMES: Record<Attribute, SetAttribute | undefined> = {
  power: 'PR',
  source: 'CH',
  volume: 'VO',
  muted: 'MU',
  bass: 'BS',
  treble: 'TR',
  balance: 'BL',
  loudness: undefined,
};

/**
 * Units 1..3 (master, slaves) of zones x1..x6. A whole unit is read at once (`?x0`, one round trip for six zones);
 * a slave that does not answer its `?x0` is not there (or no longer).
 */
const TOPOLOGY: Topology = {
  units: Array.from({ length: MAX_UNITS }, (_, i) => i + 1),
  unitOf: (address) =>
    isZoneAddress(address) || (address % 10 === 0 && isZoneAddress(address + 1)) ? unitOf(address) : undefined,
  channels: unitZones,
  zoneName: (channel) => `Zone ${(unitOf(channel) - 1) * ZONES_PER_UNIT + (channel % 10)}`,
  unitName: (unit) => `unit ${unit}`,
  pollReads: (unit) => [unit * 10],
  probeRead: (unit) => unit * 10,
  zoneRead: (channel) => channel,
  covers: (address) => (address % 10 === 0 ? unitZones(address / 10) : [address]),
};

export class MonopriceDriver extends SerialDriver {
  protected readonly link: MonopriceLink;
  protected readonly book: ZoneBook;

  constructor(options: MonopriceOptions & { serialPort: string }) {
    super(
      {
        family: 'monoprice',
        topology: TOPOLOGY,
        defaults: MONOPRICE_DEFAULTS,
        probeOthers: true,
        maxRefusals: MAX_REFUSALS,
        volumeSteps: VOLUME_STEPS,
        sound: MONOPRICE_SOUND,
        inputs: Array.from({ length: SOURCE_COUNT }, (_, i) => ({
          channel: i + 1,
          name: `Input ${i + 1}`,
          kind: 'line-in',
        })),
      },
      options,
    );
    this.book = new ZoneBook({
      volumeSteps: VOLUME_STEPS,
      sourceCount: SOURCE_COUNT,
      sound: MONOPRICE_SOUND,
      checkChannel: (c) => this.checkChannel(c),
      now: () => this.clock.now(),
    });
    this.link = new MonopriceLink(this.lineOptions());
  }

  protected override watchedPollMs(): number {
    return WATCHED_POLL_MS;
  }

  protected checkChannel(channel: number): string | undefined {
    return isZoneAddress(channel) ? undefined : `no zone ${channel}; zones are 11..16, 21..26, 31..36`;
  }

  /** The master must answer `?10` for the link to count as up (a `Command Error.` counts: the line is alive). */
  protected async handshake(connection: number): Promise<FirstRead | undefined> {
    const first = await this.stampedRead(10);
    if (connection !== this.link.connection) return undefined;
    if (first.reply.outcome === 'timeout' && !first.reply.answered) {
      this.link.fail('amplifier not answering ?10');
      return undefined;
    }
    return first;
  }

  protected async read(address: number): Promise<ReadReply> {
    const reply = await this.link.query(address);
    const zones = reply.statuses.map((status) => ({
      channel: status.zone,
      fields: { ...statusFields(status), paging: bit(status.pa), doNotDisturb: bit(status.dnd) },
    }));
    return { outcome: reply.outcome, answered: reply.received > 0, zones };
  }

  protected send(write: Write): Promise<WriteOutcome> {
    const name = SET_NAMES[write.attribute];
    // The book keeps no intent for a control the family lacks (MONOPRICE_SOUND).
    if (!name) throw new Error(`monoprice: no command for ${write.attribute}`);
    return this.link.set(write.channel, name, write.value);
  }
}
