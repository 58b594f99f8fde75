// Xantech MRC88 / MRAUDIO8x8 / MX88 driver: desired vs hardware state, zone-activity reports or polling, coalescing.
import type { DriverDescription } from '../driver.js';
import { parseTcpPort } from '../port.js';
import { Refusals, SerialDriver } from '../serial-driver.js';
import { XantechLink, type Outcome, type Reply } from './link.js';
import { XANTECH_DEFAULTS, type XantechOptions } from './options.js';
import { SOURCE_COUNT, VOLUME_STEPS, XANTECH_MODELS, ZONE_COUNTS, isZone, type ZoneCount, type ZoneStatus } from './protocol.js';
import { ZoneBook, type Write } from './zone-book.js';

export { XANTECH_DEFAULTS, type XantechOptions } from './options.js';

/** `ERROR` replies in a row to one command before the driver stops insisting (noise garbles some). */
const MAX_REJECTIONS = 3;

export class XantechDriver extends SerialDriver {
  readonly name = 'xantech';
  /** The line speed used: the option, else the model's factory default. */
  readonly baudRate: number;
  protected readonly link: XantechLink;
  protected readonly zones: ZoneBook;
  private readonly zoneCount: ZoneCount;
  private readonly pollIntervalMs: number;
  private readonly activityPollIntervalMs: number;
  private readonly activityMode: 'auto' | 'off';
  private readonly offlineAfterTimeouts: number;

  /** Zones read on this connection: their known state is current, so writes and diffs use it. */
  private readonly live = new Set<number>();
  /** Zones to read before anything else on this connection. */
  private readonly syncing = new Set<number>();
  /** Zones read at the next turn (the regular poll, or a zone whose set was refused). */
  private readQueue: number[] = [];
  /** Zones whose last set the amp refused: held back until the zone has been read again. */
  private readonly held = new Set<number>();
  private readonly rejections = new Refusals(MAX_REJECTIONS);
  /** Whether the amp sends zone-activity reports on this connection. */
  private reporting = false;
  /** The set on the line, from its write until its outcome is taken in (the gap after its OK included). */
  private writing: Write | undefined;

  private timeouts = 0;

  constructor(options: XantechOptions & { serialPort: string }) {
    super('xantech', options);
    const model = options.model ?? XANTECH_DEFAULTS.model;
    if (!(model in XANTECH_MODELS)) {
      throw new Error(`unknown xantech model "${model}": choose one of ${Object.keys(XANTECH_MODELS).join(', ')}`);
    }
    this.zoneCount = options.zones ?? XANTECH_DEFAULTS.zones;
    if (!(ZONE_COUNTS as readonly number[]).includes(this.zoneCount)) {
      throw new Error(`xantech "zones" must be 8 or 16 (16 for two amplifiers in expanded mode), got ${this.zoneCount}`);
    }
    const activity = options.activityUpdates ?? 'auto';
    if (activity !== 'auto' && activity !== 'off') {
      throw new Error(`xantech "activityUpdates" must be "auto" or "off", got ${JSON.stringify(activity)}`);
    }
    // A malformed tcp:// address is a configuration mistake: say so now rather than retry it forever.
    parseTcpPort(options.serialPort);
    this.zones = new ZoneBook(this.zoneCount);
    this.pollIntervalMs = options.pollIntervalMs ?? XANTECH_DEFAULTS.pollIntervalMs;
    this.activityPollIntervalMs = options.activityPollIntervalMs ?? XANTECH_DEFAULTS.activityPollIntervalMs;
    this.activityMode = activity;
    this.offlineAfterTimeouts = options.offlineAfterTimeouts ?? XANTECH_DEFAULTS.offlineAfterTimeouts;
    this.baudRate = options.baudRate ?? XANTECH_MODELS[model].baudRate;
    this.link = new XantechLink({
      path: options.serialPort,
      baudRate: this.baudRate,
      timeoutMs: options.commandTimeoutMs ?? XANTECH_DEFAULTS.commandTimeoutMs,
      gapMs: options.interCommandGapMs ?? XANTECH_DEFAULTS.interCommandGapMs,
      reconnectMinMs: options.reconnectMinMs ?? XANTECH_DEFAULTS.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? XANTECH_DEFAULTS.reconnectMaxMs,
      log: (level, msg, fields) => this.log(level, msg, fields),
      onUp: () => void this.begin(),
      onDown: (detail) => this.linkDown(detail),
      onReport: (status) => this.onReport(status),
    });
  }

  /** Whether zone-activity reports are on for this connection (false: the driver polls). */
  get activityReports(): boolean {
    return this.reporting;
  }

  describe(): DriverDescription {
    const zones = this.allZones().map((channel) => ({ channel, name: `Zone ${channel}` }));
    const inputs = Array.from({ length: SOURCE_COUNT }, (_, i) => ({ channel: i + 1, name: `Source ${i + 1}`, kind: 'line-in' }));
    return { zones, inputs, volumeSteps: VOLUME_STEPS };
  }

  // ---- desired state -------------------------------------------------------------------------------------------

  private allZones(): number[] {
    return Array.from({ length: this.zoneCount }, (_, i) => i + 1);
  }

  private nextWrite(): Write | undefined {
    return this.zones.nextWrite([...this.live].sort((a, b) => a - b), this.held);
  }

  protected isSettledOnline(): boolean {
    return this.syncing.size === 0 && this.held.size === 0 && this.nextWrite() === undefined;
  }

  // ---- session ---------------------------------------------------------------------------------------------------

  /**
   * The port is open. Zone 1 must answer `?1ZD+` for the link to count as up (an `ERROR` counts: a half command
   * left in the amp's buffer from before spoils the first one). Then zone-activity reports are switched on, or off,
   * and every zone is read before the desired state is pushed.
   */
  protected async begin(): Promise<void> {
    const session = this.link.session;
    this.phase = 'connecting';
    let reply: Reply = { outcome: 'error' };
    for (let attempt = 0; attempt < MAX_REJECTIONS && reply.outcome === 'error'; attempt++) {
      reply = await this.link.query(1);
      if (session !== this.link.session) return;
    }
    if (reply.outcome === 'timeout') return this.link.fail('amplifier not answering ?1ZD+');
    if (reply.outcome !== 'ok' && reply.outcome !== 'error') return;
    if (this.activityMode === 'auto') {
      const za = await this.link.activityUpdates(true);
      if (session !== this.link.session) return;
      this.reporting = za.outcome === 'ok';
      this.log('info', this.reporting
        ? 'xantech: zone-activity reports on; polling only as a safety net'
        : `xantech: the amplifier refused zone-activity reports (${za.outcome}); polling instead`);
    } else {
      await this.link.activityUpdates(false);
      if (session !== this.link.session) return;
      this.reporting = false;
    }
    this.phase = 'online';
    this.link.healthy();
    this.timeouts = 0;
    for (const zone of this.allZones()) this.syncing.add(zone);
    if (reply.status) this.afterRead(1, reply);
    this.goOnline();
  }

  protected resetSession(): void {
    this.readQueue = [];
    this.syncing.clear();
    this.live.clear();
    this.held.clear();
    this.rejections.clear();
    this.reporting = false;
    this.writing = undefined;
  }

  // ---- work loop -----------------------------------------------------------------------------------------------

  protected pollDelayMs(): number {
    return this.reporting ? this.activityPollIntervalMs : this.pollIntervalMs;
  }

  protected queuePoll(): void {
    for (const zone of this.allZones()) this.queueRead(zone);
  }

  private queueRead(zone: number): void {
    if (!this.readQueue.includes(zone)) this.readQueue.push(zone);
  }

  /**
   * Pending writes first, then reads. Writes are computed from the desired state at the moment the line is free, so a
   * burst of changes to one zone goes out as its latest value.
   */
  protected async turn(session: number): Promise<boolean> {
    const write = this.nextWrite();
    if (write) {
      this.writeInFlight = true;
      this.writing = write;
      const reply = await this.link.set(write.zone, write.attribute, write.value);
      this.writeInFlight = false;
      this.writing = undefined;
      if (session !== this.link.session || reply.outcome === 'closed') return false;
      this.afterWrite(write, reply.outcome);
      return true;
    }
    const zone = this.syncing.size > 0 ? Math.min(...this.syncing) : this.readQueue.shift();
    if (zone === undefined) return false;
    const reply = await this.link.query(zone);
    if (session !== this.link.session || reply.outcome === 'closed') return false;
    this.afterRead(zone, reply);
    if (this.readQueue.length === 0 && this.syncing.size === 0 && this.phase === 'online' && !this.pollTimer) {
      this.schedulePoll();
    }
    return true;
  }

  private afterWrite(write: Write, outcome: Outcome): void {
    this.noteOutcome(outcome);
    if (outcome === 'ok') {
      this.zones.acknowledge(write);
      this.rejections.reset(`!${write.zone}`);
      if (write.attribute === 'PR' && write.value === 1) this.resync(write.zone);
    } else if (outcome === 'error') {
      this.rejected(write);
    }
    this.checkSettled();
  }

  /**
   * A zone just powered on may not hold what it held when off (one MRC88 was seen to start at volume 0): read it
   * again as a first read, so what it now holds is learned rather than reported, and the desired state is pushed
   * over it. One query per power-on.
   */
  private resync(zone: number): void {
    this.live.delete(zone);
    this.syncing.add(zone);
  }

  /** The amp answered ERROR (noise garbled the command): retry after the zone is read again; after a few, give up. */
  private rejected(write: Write): void {
    if (this.rejections.retry(`!${write.zone}`)) {
      this.held.add(write.zone);
      if (!this.readQueue.includes(write.zone)) this.readQueue.unshift(write.zone);
      return;
    }
    this.log('warn', `xantech: zone ${write.zone} refused ${write.attribute}${write.value} ${MAX_REJECTIONS} times; keeping its value`);
    const state = this.zones.forget(write);
    if (state) this.emit({ type: 'zone', channel: write.zone, state });
  }

  private afterRead(zone: number, reply: Reply): void {
    this.noteOutcome(reply.outcome);
    this.held.delete(zone);
    const key = `?${zone}`;
    if (reply.outcome === 'error') {
      // A refused query says nothing about the zone (noise garbled it): a sync asks again, a few times.
      if (this.rejections.retry(key)) return;
    } else {
      this.rejections.reset(key);
    }
    this.syncing.delete(zone);
    if (reply.status) this.take(reply.status);
    this.checkSettled();
  }

  /** A zone report, asked for or not. The first one per zone and connection only learns; later ones may be news. */
  private take(status: ZoneStatus): void {
    if (!isZone(status.zone, this.zoneCount)) return;
    const state = this.zones.learn(status, this.live.has(status.zone) ? 'update' : 'sync');
    this.live.add(status.zone);
    if (state) this.emit({ type: 'zone', channel: status.zone, state });
  }

  /** A report the amp sent by itself (zone activity): it is alive, and the zone may have changed. */
  private onReport(status: ZoneStatus): void {
    if (this.phase !== 'online') return;
    this.timeouts = 0;
    const writing = this.writing;
    if (status.power && writing?.zone === status.zone && writing.attribute === 'PR' && writing.value === 1) {
      // The power-on being written, reported before its OK was taken in: what the zone came on with is learned as
      // a first read (as resync does once the OK is in), not taken for a keypad change that overrides the desired.
      this.live.delete(status.zone);
    }
    this.syncing.delete(status.zone);
    this.take(status);
    this.kick();
    this.checkSettled();
  }

  private noteOutcome(outcome: Outcome): void {
    if (outcome === 'ok' || outcome === 'error') {
      this.timeouts = 0;
      return;
    }
    if (outcome !== 'timeout') return;
    this.timeouts++;
    if (this.timeouts >= this.offlineAfterTimeouts) return this.link.fail(`${this.timeouts} commands unanswered`);
    // Ask again at once, so a dead amplifier is found within a few timeouts rather than a few poll intervals.
    if (!this.readQueue.includes(1)) this.readQueue.unshift(1);
  }
}
