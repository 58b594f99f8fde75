// Monoprice MPR-6ZHMAUT / Dayton DAX66 driver: desired vs hardware state, probing, polling, coalescing and events.
import type { DriverDescription, DriverOptions } from '../driver.js';
import { Refusals, SerialDriver } from '../serial-driver.js';
import { MonopriceLink, type Outcome, type Reply } from './link.js';
import { MAX_UNITS, SOURCE_COUNT, VOLUME_STEPS, ZONES_PER_UNIT, unitOf, unitZones } from './protocol.js';
import { ZoneBook, type Write } from './zone-book.js';

export interface MonopriceOptions extends DriverOptions {
  /** Quiet time between commands; the amp desynchronises when pipelined (20..100 ms). */
  interCommandGapMs?: number;
  /** First reconnect delay; doubles per failed attempt up to reconnectMaxMs. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Consecutive unanswered commands to the master unit that mean the amplifier is off or unplugged. */
  offlineAfterTimeouts?: number;
}

/** Defaults and their reasons live here, not spread through the code. */
export const MONOPRICE_DEFAULTS = {
  baudRate: 9600,
  pollIntervalMs: 5000, // existing integrations poll every 5-15 s
  commandTimeoutMs: 1000, // a ?x0 reply takes ~175 ms at 9600 baud
  interCommandGapMs: 30,
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  offlineAfterTimeouts: 3,
} as const;

/** `Command Error.` replies in a row to one query or one set before the driver stops insisting (noise garbles some). */
const MAX_REJECTIONS = 3;

export class MonopriceDriver extends SerialDriver {
  readonly name = 'monoprice';
  protected readonly link: MonopriceLink;
  protected readonly zones = new ZoneBook();
  private readonly pollIntervalMs: number;
  private readonly offlineAfterTimeouts: number;

  private fitted: number[] = [1];
  /** Slave units not probed yet. Each is asked until it answers or times out once: absent ones are never asked again. */
  private readonly unprobed = new Set(Array.from({ length: MAX_UNITS - 1 }, (_, i) => i + 2));
  /** Units read on this connection that still answer: their read-back state is current, so writes and diffs use it. */
  private readonly live = new Set<number>();
  /** Unit addresses (10, 20, 30) to read before anything else on this connection: fitted units and probes. */
  private readonly syncing = new Set<number>();
  /** Addresses read at the next turn: the regular poll (`?x0`) and zones a whole-unit reply left unread (`?xy`). */
  private readQueue: number[] = [];
  /** Zones whose last write the amp rejected: held back until their unit has been read (or asked) again. */
  private readonly held = new Set<number>();
  private readonly rejections = new Refusals(MAX_REJECTIONS);

  private masterTimeouts = 0;

  constructor(options: MonopriceOptions & { serialPort: string }) {
    super('monoprice', options);
    this.pollIntervalMs = options.pollIntervalMs ?? MONOPRICE_DEFAULTS.pollIntervalMs;
    this.offlineAfterTimeouts = options.offlineAfterTimeouts ?? MONOPRICE_DEFAULTS.offlineAfterTimeouts;
    this.link = new MonopriceLink({
      path: options.serialPort,
      baudRate: options.baudRate ?? MONOPRICE_DEFAULTS.baudRate,
      timeoutMs: options.commandTimeoutMs ?? MONOPRICE_DEFAULTS.commandTimeoutMs,
      gapMs: options.interCommandGapMs ?? MONOPRICE_DEFAULTS.interCommandGapMs,
      reconnectMinMs: options.reconnectMinMs ?? MONOPRICE_DEFAULTS.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? MONOPRICE_DEFAULTS.reconnectMaxMs,
      log: (level, msg, fields) => this.log(level, msg, fields),
      onUp: () => void this.begin(),
      onDown: (detail) => this.linkDown(detail),
    });
  }

  describe(): DriverDescription {
    const zones = this.fitted.flatMap((unit) =>
      unitZones(unit).map((channel) => ({ channel, name: `Zone ${(unit - 1) * ZONES_PER_UNIT + (channel % 10)}` })),
    );
    const inputs = Array.from({ length: SOURCE_COUNT }, (_, i) => ({ channel: i + 1, name: `Input ${i + 1}`, kind: 'line-in' }));
    return { zones, inputs, volumeSteps: VOLUME_STEPS };
  }

  // ---- desired state -------------------------------------------------------------------------------------------

  /** The next set for a unit whose state is current on this connection; zones with a refused set wait for a read. */
  private nextWrite(): Write | undefined {
    return this.zones.nextWrite(this.fitted.filter((unit) => this.live.has(unit)).flatMap(unitZones), this.held);
  }

  protected isSettledOnline(): boolean {
    const reading = this.syncing.size > 0 || this.held.size > 0 || this.readQueue.some((a) => a % 10 !== 0);
    return !reading && this.nextWrite() === undefined;
  }

  // ---- session ---------------------------------------------------------------------------------------------------

  /**
   * The port is open: the master must answer `?10` for the link to count as up. Slave units are read (and probed, on
   * the first connection) by the work loop after the master's writes, so an absent unit's timeouts never hold them up.
   */
  protected async begin(): Promise<void> {
    const session = this.link.session;
    this.phase = 'connecting';
    const reply = await this.link.query(10);
    if (session !== this.link.session) return;
    if (reply.outcome === 'timeout' && reply.received === 0) return this.link.fail('amplifier not answering ?10');
    this.phase = 'online';
    this.link.healthy();
    this.masterTimeouts = 0;
    for (const unit of [...this.fitted, ...this.unprobed]) this.syncing.add(unit * 10);
    this.afterRead(10, reply);
    this.goOnline();
  }

  protected resetSession(): void {
    this.readQueue = [];
    this.syncing.clear();
    this.live.clear();
    this.held.clear();
    this.rejections.clear();
  }

  // ---- work loop -----------------------------------------------------------------------------------------------

  protected pollDelayMs(): number {
    return this.pollIntervalMs;
  }

  protected queuePoll(): void {
    for (const unit of this.fitted) this.queueRead(unit * 10);
  }

  private queueRead(address: number): void {
    if (!this.readQueue.includes(address)) this.readQueue.push(address);
  }

  /** Pending writes first, then reads (syncs and probes first). */
  protected async turn(session: number): Promise<boolean> {
    const write = this.nextWrite();
    if (write) {
      this.writeInFlight = true;
      const reply = await this.link.set(write.zone, write.attribute, write.value);
      this.writeInFlight = false;
      if (session !== this.link.session || reply.outcome === 'closed') return false;
      this.afterWrite(write, reply.outcome);
      return true;
    }
    const address = this.syncing.size > 0 ? Math.min(...this.syncing) : this.readQueue.shift();
    if (address === undefined) return false;
    const reply = await this.link.query(address);
    if (session !== this.link.session || reply.outcome === 'closed') return false;
    this.afterRead(address, reply);
    if (this.readQueue.length === 0 && this.phase === 'online') this.schedulePoll();
    return true;
  }

  private afterWrite(write: Write, outcome: Outcome): void {
    const unit = unitOf(write.zone);
    if (outcome === 'ok') {
      this.zones.acknowledge(write);
      this.rejections.reset(`<${write.zone}`);
    } else if (outcome === 'error') {
      this.rejected(write);
    }
    if (unit === 1) this.noteMaster(outcome);
    else if (outcome === 'timeout') this.noteUnit(unit, false);
    this.checkSettled();
  }

  /**
   * The amp answered a set with `Command Error.` (noise garbled it on the way): retry once its unit has been read
   * again, so a command the amp keeps refusing cannot monopolise the line; after a few refusals keep the hardware value.
   */
  private rejected(write: Write): void {
    if (this.rejections.retry(`<${write.zone}`)) {
      this.held.add(write.zone);
      this.queueRead(unitOf(write.zone) * 10);
      return;
    }
    const refused = `${write.attribute}${write.value}`;
    this.log('warn', `monoprice: zone ${write.zone} refused ${refused} ${MAX_REJECTIONS} times; keeping its value`);
    const state = this.zones.forget(write);
    if (state) this.emit({ type: 'zone', channel: write.zone, state });
  }

  /** Takes in the reply to `?x0` (a whole unit) or `?xy` (one zone): its zones, and whether the unit is there. */
  private afterRead(address: number, reply: Reply): void {
    const unit = unitOf(address);
    const answered = reply.received > 0;
    const key = `?${address}`;
    for (const zone of unitZones(unit)) this.held.delete(zone);
    if (!answered && reply.outcome === 'error') {
      // A refused query says nothing about the unit (noise garbled it): a sync or a probe asks again, a few times.
      this.noteMaster('error');
      if (this.rejections.retry(key)) return;
    } else {
      this.rejections.reset(key);
    }
    this.syncing.delete(address);
    if (this.unprobed.delete(unit)) this.probed(unit, answered);
    if (!this.fitted.includes(unit)) return;
    const mode = this.live.has(unit) ? 'update' : 'sync';
    for (const status of reply.statuses) {
      const state = this.zones.learn(status, mode);
      if (state) this.emit({ type: 'zone', channel: status.zone, state });
    }
    if (unit === 1) this.noteMaster(answered ? 'ok' : reply.outcome);
    if (answered || reply.outcome === 'timeout') this.noteUnit(unit, answered);
    if (!answered || address % 10 !== 0) return;
    // Nothing can be diffed against a zone never read: ask for a zone whose line came garbled on its own (`?xy`).
    for (const zone of this.zones.unread(unitZones(unit))) this.queueRead(zone);
  }

  private probed(unit: number, answered: boolean): void {
    if (answered) this.fitted = [...this.fitted, unit].sort();
    if (this.unprobed.size > 0) return;
    this.log('info', `monoprice: units fitted: ${this.fitted.join(', ')}`);
    if (this.fitted.length > 1) this.emit({ type: 'described', description: this.describe() });
  }

  /** A slave unit that stops answering must not stall the line: its writes wait until a read reaches it again. */
  private noteUnit(unit: number, answered: boolean): void {
    if (answered) {
      if (!this.live.has(unit) && unit !== 1) this.log('info', `monoprice: unit ${unit} answers`);
      this.live.add(unit);
    } else if (unit !== 1 && this.live.delete(unit)) {
      this.log('warn', `monoprice: unit ${unit} stopped answering`);
    }
    this.checkSettled();
  }

  private noteMaster(outcome: Outcome): void {
    if (outcome === 'ok' || outcome === 'error') {
      this.masterTimeouts = 0;
      return;
    }
    if (outcome !== 'timeout') return;
    this.masterTimeouts++;
    if (this.masterTimeouts >= this.offlineAfterTimeouts) {
      return this.link.fail(`${this.masterTimeouts} commands unanswered`);
    }
    // Ask again at once, so a dead amplifier is found within a few timeouts rather than a few poll intervals.
    if (!this.readQueue.includes(10)) this.readQueue.unshift(10);
  }
}
