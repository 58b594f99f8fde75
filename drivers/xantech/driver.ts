// Xantech MRC88 / MRAUDIO8x8 / MX88 driver: the family's zones (8, 16 with an expansion amplifier), zone-activity
// reports and wire on the shared driver core, which keeps the ownership rule, the work loop, liveness and availability.
import type { Outcome } from '../core/link.js';
import { SerialDriver } from '../core/serial-driver.js';
import type { FirstRead, ReadReply } from '../core/serial-options.js';
import type { Topology } from '../core/units.js';
import { type Attribute, bit, type Fields, statusFields, type Write, ZoneBook } from '../core/zone-book.js';
import { type Reply, XantechLink } from './link.js';
import { XANTECH_DEFAULTS, type XantechOptions } from './options.js';
import {
  isZone,
  MAX_ZONES,
  type SetAttribute,
  SOURCE_COUNT,
  VOLUME_STEPS,
  XANTECH_MODELS,
  XANTECH_SOUND,
  type ZoneCount,
  type ZoneStatus,
} from './protocol.js';

export { XANTECH_DEFAULTS, type XantechOptions } from './options.js';

/** `ERROR` replies in a row to one command before the driver stops insisting (noise garbles some). */
const MAX_REFUSALS = 3;
const SET_NAMES: Record<Attribute, SetAttribute | undefined> = {
  power: 'PR',
  source: 'SS',
  volume: 'VO',
  muted: 'MU',
  bass: 'BS',
  treble: 'TR',
  balance: 'BA',
  loudness: undefined,
};
const ZONES_PER_AMP = 8;

/**
 * Zones 1..8 on the amplifier the port is wired to, 9..16 on an expansion amplifier linked to it; each zone is read
 * on its own (`?{z}ZD+`). Zones the first one does not have are refused with ERROR.
 */
const TOPOLOGY: Topology = {
  units: [1, 2],
  unitOf: (zone) => (isZone(zone) ? Math.ceil(zone / ZONES_PER_AMP) : undefined),
  channels: (unit) => Array.from({ length: ZONES_PER_AMP }, (_, i) => (unit - 1) * ZONES_PER_AMP + i + 1),
  zoneName: (zone) => `Zone ${zone}`,
  unitName: (unit) => (unit === 1 ? 'the amplifier' : `the expansion amplifier (zones 9-${MAX_ZONES})`),
  pollReads: (unit) => TOPOLOGY.channels(unit),
  probeRead: (unit) => (unit - 1) * ZONES_PER_AMP + 1,
  zoneRead: (zone) => zone,
  covers: (zone) => [zone],
};

export class XantechDriver extends SerialDriver {
  /** The line speed used: the option, else the model's factory default. */
  readonly baudRate: number;
  protected readonly link: XantechLink;
  protected readonly book: ZoneBook;
  private readonly zoneCount: ZoneCount;
  private readonly activityPollIntervalMs: number;
  private readonly activityMode: 'auto' | 'off';
  /** Whether the amp sends zone-activity reports on this connection. */
  private reporting = false;

  constructor(options: XantechOptions & { serialPort: string }) {
    const zoneCount = options.zones ?? XANTECH_DEFAULTS.zones;
    super(
      {
        family: 'xantech',
        topology: TOPOLOGY,
        defaults: XANTECH_DEFAULTS,
        configured: zoneCount === 16 ? [2] : [],
        probeOthers: false,
        maxRefusals: MAX_REFUSALS,
        volumeSteps: VOLUME_STEPS,
        sound: XANTECH_SOUND,
        inputs: Array.from({ length: SOURCE_COUNT }, (_, i) => ({
          channel: i + 1,
          name: `Source ${i + 1}`,
          kind: 'line-in',
        })),
      },
      options,
    );
    // The options' values were checked by the factory (createXantechDriver) against the family's schema.
    const model = options.model ?? XANTECH_DEFAULTS.model;
    const activity = options.activityUpdates ?? 'auto';
    this.zoneCount = zoneCount;
    this.activityPollIntervalMs = options.activityPollIntervalMs ?? XANTECH_DEFAULTS.activityPollIntervalMs;
    this.activityMode = activity;
    this.baudRate = options.baudRate ?? XANTECH_MODELS[model].baudRate;
    this.book = new ZoneBook({
      volumeSteps: VOLUME_STEPS,
      sourceCount: SOURCE_COUNT,
      sound: XANTECH_SOUND,
      checkChannel: (c) => this.checkChannel(c),
      now: () => this.clock.now(),
    });
    this.link = new XantechLink({ ...this.lineOptions(this.baudRate), onReport: (status) => this.onReport(status) });
  }

  /** Whether zone-activity reports are on for this connection (false: the driver polls). */
  get activityReports(): boolean {
    return this.reporting;
  }

  protected checkChannel(channel: number): string | undefined {
    return isZone(channel) ? undefined : `no zone ${channel}; zones are 1..${this.zoneCount}`;
  }

  protected override pollDelayMs(): number {
    return this.reporting ? this.activityPollIntervalMs : super.pollDelayMs();
  }

  protected override resetSession(): void {
    this.reporting = false;
  }

  /**
   * Zone 1 must answer `?1ZD+` for the link to count as up (an `ERROR` counts: a half command left in the amp's buffer
   * from before spoils the first one). Then zone-activity reports are switched on, or off.
   */
  protected async handshake(connection: number): Promise<FirstRead | undefined> {
    let first = await this.stampedRead(1);
    for (let attempt = 1; attempt < MAX_REFUSALS && first.reply.outcome === 'error'; attempt++) {
      if (connection !== this.link.connection) return undefined;
      first = await this.stampedRead(1);
    }
    if (connection !== this.link.connection || first.reply.outcome === 'closed') return undefined;
    if (first.reply.outcome === 'timeout') {
      this.link.fail('amplifier not answering ?1ZD+');
      return undefined;
    }
    const on = this.activityMode === 'auto';
    const outcome = await this.link.activityUpdates(on);
    if (connection !== this.link.connection) return undefined;
    this.reporting = on && outcome === 'ok';
    if (on) {
      this.log(
        'info',
        this.reporting
          ? 'xantech: zone-activity reports on; polling only as a safety net'
          : `xantech: the amplifier refused zone-activity reports (${outcome}); polling instead`,
      );
    }
    return first;
  }

  protected async read(zone: number): Promise<ReadReply> {
    return replyOf(await this.link.query(zone));
  }

  protected send(write: Write): Promise<Outcome> {
    const name = SET_NAMES[write.attribute];
    // The book keeps no intent for a control the family lacks (XANTECH_SOUND).
    if (!name) throw new Error(`xantech: no command for ${write.attribute}`);
    return this.link.set(write.channel, name, write.value);
  }

  /**
   * A zone just powered on may not hold what it held when off (one MRC88 was seen to start at volume 0): it is read
   * again as a first read, so what it came on with is learned rather than taken for a keypad's change, and intents
   * waiting for the power-on are written over it. One query per power-on.
   */
  protected override confirmed(write: Write): void {
    if (write.attribute !== 'power' || write.value !== 1) return;
    this.plan.live.delete(write.channel);
    this.plan.sync(write.channel);
  }

  /** A report the amp sent by itself (zone activity): it is alive, and the zone may have changed. */
  private onReport(status: ZoneStatus): void {
    const channel = status.zone;
    const unit = this.topology.unitOf(channel);
    if (this.phase !== 'online' || unit === undefined || !this.units.answers(unit)) return;
    this.units.alive();
    const writing = this.writing;
    // The power-on being written, reported before its OK was taken in: what the zone came on with is a first read.
    const ours = status.power && writing?.channel === channel && writing.attribute === 'power' && writing.value === 1;
    const kind = ours || !this.plan.live.has(channel) ? 'first' : 'update';
    this.plan.done(channel);
    this.learn(channel, fieldsOf(status), kind, this.book.stamp());
    this.plan.live.add(channel);
    this.kick();
    this.checkSettled();
  }
}

/** What a zone report shows: the zone's state and tone, and whether it is being paged (PS). */
function fieldsOf(status: ZoneStatus): Fields {
  return { ...statusFields(status), paging: bit(status.paged) };
}

function replyOf(reply: Reply): ReadReply {
  const zones = reply.status ? [{ channel: reply.status.zone, fields: fieldsOf(reply.status) }] : [];
  return { outcome: reply.outcome, answered: reply.status !== undefined, zones };
}
