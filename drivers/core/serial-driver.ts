// The serial amplifier driver every family shares: lifecycle, the one work loop (writes first, then reads), the poll,
// liveness per unit, zone availability and the reconciliation book. A family supplies its link (framing, exchanges),
// its topology, how one read and one write go on the wire, and the handshake a new connection begins with.
import type { AmplifierDriver, DriverDescription, DriverEvent, DriverListener, DriverOptions, InputDescription, ZoneAvailability, ZoneState } from '../driver.js';
import { systemClock, type Clock } from './clock.js';
import { DriverEvents } from './events.js';
import type { Outcome } from './link.js';
import type { PortSession, PortSessionOptions } from './port-session.js';
import { ReadPlan, Refusals, type PlannedRead } from './read-plan.js';
import { Units, type Topology } from './units.js';
import type { Fields, ReadKind, Stamp, Write, ZoneBook } from './zone-book.js';

export type Phase = 'new' | 'connecting' | 'online' | 'offline' | 'stopped';

/** What one read showed. */
export interface ReadReply {
  outcome: Outcome;
  /** Whether the unit answered at all (any data, even a garbled line): a unit that did is there. */
  answered: boolean;
  /** What it showed of each zone, as wire values. */
  zones: Array<{ channel: number; fields: Fields }>;
}

/** How a write went: acknowledged ('ok'), or 'sent' when nothing acknowledges it and only a read-back can tell. */
export type WriteOutcome = Outcome | 'sent';

/** The first read of a connection, made by the family's handshake. */
export interface FirstRead {
  address: number;
  reply: ReadReply;
  stamp: Stamp;
}

/** What every serial family takes: the options of drivers/driver.ts plus the line's timings. */
export interface SerialOptions extends DriverOptions {
  /** Quiet time between commands: amplifiers desynchronise when commands are pipelined. */
  interCommandGapMs?: number;
  /** First reconnect delay; doubles per failed attempt up to reconnectMaxMs. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Consecutive unanswered requests to the master unit that mean the amplifier is off, booting or unplugged. */
  offlineAfterTimeouts?: number;
}

const TIMINGS = ['baudRate', 'pollIntervalMs', 'commandTimeoutMs', 'interCommandGapMs', 'reconnectMinMs', 'reconnectMaxMs', 'offlineAfterTimeouts'] as const;

/** A family's defaults, with their reasons where the family declares them. */
export type SerialTimings = Required<Pick<SerialOptions, (typeof TIMINGS)[number]>>;

/** What a family's link is built with, besides its own framing. */
export type LineOptions = Omit<PortSessionOptions, 'family'> & { timeoutMs: number; gapMs: number };

export interface CoreOptions {
  family: string;
  topology: Topology;
  defaults: SerialTimings;
  /** Units fitted without being found (Xantech's expansion when configured); the master always is. */
  configured?: readonly number[];
  /** Units neither configured nor remembered are probed once on the first connection. */
  probeOthers: boolean;
  /** Refusals in a row of one read or write before the driver stops insisting (noise garbles some). */
  maxRefusals: number;
  volumeSteps: number;
  inputs: InputDescription[];
}

/** The options with their serial port, or the error naming the missing option and how to give it. */
export function withSerialPort<O extends DriverOptions>(family: string, options: O, advice: string): O & { serialPort: string } {
  const { serialPort } = options;
  if (typeof serialPort !== 'string' || serialPort === '') {
    throw new Error(`the ${family} driver needs "serialPort": pass --serial-port /dev/serial/by-id/<adapter>${advice}`);
  }
  return { ...options, serialPort };
}

/** Read-backs in a row that show a write did not arrive, before the driver keeps the zone's own value. */
const MAX_LOST_WRITES = 3;

export abstract class SerialDriver implements AmplifierDriver {
  /** The family's name, as configuration chooses it. */
  readonly name: string;
  protected abstract readonly link: PortSession;
  protected abstract readonly book: ZoneBook;
  protected readonly clock: Clock;
  /** The options given, each defaulted by the family. */
  protected readonly timings: SerialTimings;
  protected readonly events: DriverEvents;
  protected readonly topology: Topology;
  protected readonly plan: ReadPlan;
  protected readonly units: Units;
  protected phase: Phase = 'new';
  /** The write on the line, from its send until its outcome is taken in. */
  protected writing: Write | undefined;
  private readonly refusals: Refusals;
  private readonly lostWrites = new Map<number, number>();
  private pollTimer: unknown;
  private pumping = false;

  protected constructor(
    private readonly core: CoreOptions,
    private readonly options: SerialOptions & { serialPort: string },
  ) {
    this.name = core.family;
    this.clock = options.clock ?? systemClock;
    this.timings = Object.fromEntries(TIMINGS.map((key) => [key, options[key] ?? core.defaults[key]])) as SerialTimings;
    this.events = new DriverEvents(core.family, options.log);
    this.topology = core.topology;
    this.plan = new ReadPlan(core.topology);
    this.refusals = new Refusals(core.maxRefusals);
    this.units = new Units(core.topology, { configured: core.configured ?? [], probeOthers: core.probeOthers, offlineAfterTimeouts: this.timings.offlineAfterTimeouts });
  }

  /** The options of the family's link: the port, the timings, and this driver's session callbacks. */
  protected lineOptions(baudRate = this.timings.baudRate): LineOptions {
    const { openPort } = this.options;
    return {
      path: this.options.serialPort,
      baudRate,
      timeoutMs: this.timings.commandTimeoutMs,
      gapMs: this.timings.interCommandGapMs,
      reconnectMinMs: this.timings.reconnectMinMs,
      reconnectMaxMs: this.timings.reconnectMaxMs,
      clock: this.clock,
      ...(openPort ? { openPort } : {}),
      log: (level, msg, fields) => this.log(level, msg, fields),
      onUp: () => void this.begin(),
      onDown: (detail) => this.linkDown(detail),
    };
  }

  get online(): boolean {
    return this.phase === 'online';
  }

  describe(): DriverDescription {
    const zones = this.units.fittedUnits().flatMap((unit) => this.topology.channels(unit).map((channel) => ({ channel, name: this.topology.zoneName(channel) })));
    return { zones, inputs: this.core.inputs, volumeSteps: this.core.volumeSteps };
  }

  async start(remembered: ReadonlyMap<number, ZoneState>): Promise<void> {
    if (this.phase !== 'new') return;
    for (const [channel, state] of remembered) {
      if (this.checkChannel(channel)) continue;
      this.book.remember(channel, state);
      this.units.remember(channel);
    }
    this.phase = 'connecting';
    this.link.start();
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    if (this.phase === 'stopped') return;
    const complaint = this.checkChannel(channel);
    const availability = complaint ? undefined : this.units.availability(channel);
    if (availability && !availability.available) {
      this.log('debug', `${this.core.family}: zone ${channel} is unavailable (${availability.reason}); the change is not sent`);
      return;
    }
    const refused = complaint ?? this.book.record(channel, change);
    if (refused) this.log('warn', `${this.core.family}: ${refused}`);
    this.kick();
    this.checkSettled();
  }

  hardwareState(channel: number): ZoneState | undefined {
    return this.book.hardware(channel);
  }

  availability(channel: number): ZoneAvailability {
    const complaint = this.checkChannel(channel);
    return complaint ? { available: false, reason: complaint } : this.units.availability(channel);
  }

  settled(): Promise<void> {
    return this.events.settled(this.isSettled());
  }

  onEvent(listener: DriverListener): () => void {
    return this.events.subscribe(listener);
  }

  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.dropSession();
    await this.link.stop();
    this.checkSettled();
  }

  // ---- what each family supplies ---------------------------------------------------------------------------------

  /**
   * The port is open: the family's first exchanges (its master must answer). Resolves with that first read, or
   * undefined when the session is over (the family failed the link, or the port went away).
   */
  protected abstract handshake(session: number): Promise<FirstRead | undefined>;
  /** One read on the wire. */
  protected abstract read(address: number): Promise<ReadReply>;
  /** One write on the wire. */
  protected abstract send(write: Write): Promise<WriteOutcome>;
  /** How long until the next poll. */
  protected pollDelayMs(): number {
    return this.timings.pollIntervalMs;
  }
  /** Undefined for a channel the family can address, else the complaint naming the valid ones. */
  protected abstract checkChannel(channel: number): string | undefined;
  /** A write went through (Xantech reads a zone again after powering it on). */
  protected confirmed(_write: Write): void {}
  /** The session ended: forget what the family learned on it. */
  protected resetSession(): void {}

  // ---- session ---------------------------------------------------------------------------------------------------

  /** The link's onUp: the handshake, then every fitted unit is read (unknown ones probed) before anything is written. */
  protected async begin(): Promise<void> {
    const session = this.link.session;
    this.phase = 'connecting';
    const first = await this.handshake(session);
    if (session !== this.link.session || !first) return;
    this.phase = 'online';
    this.link.healthy();
    this.units.newSession();
    for (const unit of this.units.fittedUnits()) for (const address of this.unitReads(unit)) this.plan.sync(address);
    for (const unit of this.units.unprobedUnits()) this.plan.sync(this.topology.probeRead(unit));
    this.afterRead({ address: first.address, purpose: 'sync' }, first.reply, first.stamp);
    this.events.status(true);
    this.schedulePoll();
    this.kick();
    this.checkSettled();
  }

  /** The link's onDown: offline until it reopens; intents stay, to be written on return. */
  protected linkDown(detail: string): void {
    if (this.phase === 'stopped') return;
    this.phase = 'offline';
    this.dropSession();
    this.events.status(false, detail);
    this.checkSettled();
  }

  /** A read with the time it was sent: a change it shows supersedes only intents made before then. */
  protected async stampedRead(address: number): Promise<FirstRead> {
    const stamp = this.book.stamp();
    return { address, reply: await this.read(address), stamp };
  }

  private dropSession(): void {
    this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.plan.reset();
    this.refusals.clear();
    this.lostWrites.clear();
    this.writing = undefined;
    this.resetSession();
  }

  // ---- the work loop -----------------------------------------------------------------------------------------------

  /** Wakes the loop on a microtask, so a synchronous burst of setZone calls is seen as one. */
  protected kick(): void {
    if (this.phase !== 'online' || this.pumping) return;
    queueMicrotask(() => void this.pump());
  }

  /** The only sender while online, one exchange at a time; each turn picks its work when the line is free. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    const session = this.link.session;
    try {
      while (this.phase === 'online' && session === this.link.session) {
        if (!(await this.turn(session))) break;
      }
    } catch (err) {
      // Nothing above should throw; if it does, the link is in an unknown state, so start it afresh.
      this.log('error', `${this.core.family}: work loop failed: ${(err as Error).stack ?? String(err)}`);
      if (session === this.link.session) this.link.fail('internal error');
    } finally {
      this.pumping = false;
      this.writing = undefined;
      if (session !== this.link.session) this.kick(); // a new session began while this loop was winding down
      this.checkSettled();
    }
  }

  /** Writes first, chosen when the line is free (so a burst goes out as its latest value); then reads. */
  private async turn(session: number): Promise<boolean> {
    const write = this.nextWrite();
    if (write) return this.writeTurn(session, write);
    const read = this.plan.next();
    if (!read) return false;
    const { reply, stamp } = await this.stampedRead(read.address);
    if (session !== this.link.session || reply.outcome === 'closed') return false;
    this.afterRead(read, reply, stamp);
    if (this.plan.empty() && this.pollTimer === undefined && this.phase === 'online') this.schedulePoll();
    return true;
  }

  private nextWrite(): Write | undefined {
    return this.book.nextWrite([...this.plan.live].sort((a, b) => a - b), this.plan.held);
  }

  private async writeTurn(session: number, write: Write): Promise<boolean> {
    this.writing = write;
    const outcome = await this.send(write);
    this.writing = undefined;
    if (session !== this.link.session || outcome === 'closed') return false;
    if (outcome === 'ok' || outcome === 'sent') {
      this.refusals.reset(`!${write.channel}`);
      if (outcome === 'ok') {
        this.units.alive();
        this.emitZone(write.channel, this.book.confirm(write));
      } else {
        // Nothing acknowledges it: the zone is read back before the intent counts as done.
        this.book.sent(write);
        this.plan.verify.add(write.channel);
      }
      this.confirmed(write);
    } else if (outcome === 'error') {
      this.units.alive();
      this.refused(write);
    } else {
      this.silence(this.topology.unitOf(write.channel)!);
    }
    this.checkSettled();
    return true;
  }

  /** The amp refused a write (noise garbled it): tried again once the zone has been read, a few times; then given up. */
  private refused(write: Write): void {
    const { channel } = write;
    if (this.refusals.retry(`!${channel}`)) {
      this.plan.held.add(channel);
      this.plan.queueRead(this.topology.zoneRead(channel), true);
      return;
    }
    const times = this.refusals.limit;
    this.log('warn', `${this.core.family}: zone ${channel} refused ${write.attribute} ${write.value} ${times} times; keeping its value`);
    this.emitZone(channel, this.book.giveUp(channel, [write.attribute]));
  }

  /** Takes in one read: the unit's liveness, and each zone it shows. */
  protected afterRead(read: PlannedRead, reply: ReadReply, stamp: Stamp): void {
    const { address } = read;
    const unit = this.topology.unitOf(address)!;
    const covered = this.topology.covers(address);
    for (const channel of covered) this.plan.held.delete(channel);
    const key = `?${address}`;
    if (!reply.answered && reply.outcome === 'error') {
      // A refused read says nothing about the unit (noise garbled it): a sync or a probe asks again, a few times.
      this.units.alive();
      if (this.refusals.retry(key)) return this.checkSettled();
    } else {
      this.refusals.reset(key);
    }
    this.plan.done(address);
    if (!reply.answered) {
      // A refusal of every try means no such zone on the master (Xantech's expansion), but never that the master is gone.
      if (reply.outcome === 'timeout' || unit !== this.units.master) this.silence(unit);
      return this.checkSettled();
    }
    this.answered(unit, address);
    for (const { channel, fields } of reply.zones) {
      if (!covered.includes(channel)) continue;
      const kind = read.purpose === 'verify' ? this.verified(channel, fields) : this.plan.live.has(channel) ? 'update' : 'first';
      this.plan.touched.delete(channel);
      this.learn(channel, fields, kind, stamp);
      this.plan.live.add(channel);
      if (kind === 'lost' && this.lostWrites.get(channel)! >= MAX_LOST_WRITES) {
        this.lostWrites.delete(channel);
        this.log('warn', `${this.core.family}: zone ${channel} ignored the same change ${MAX_LOST_WRITES} times; keeping its own value`);
        this.emitZone(channel, this.book.giveUp(channel, ['power', 'source', 'volume']));
      }
    }
    // A zone the reply should have shown and did not (a garbled line): read on its own when writes wait for it.
    if (covered.length > 1) {
      for (const channel of covered) if (!this.plan.live.has(channel) && this.book.hasIntents(channel)) this.plan.sync(this.topology.zoneRead(channel));
    }
    this.checkSettled();
  }

  /** Takes in what a read or report showed of a zone, and reports it when the daemon must hear of it. */
  protected learn(channel: number, fields: Fields, kind: ReadKind, stamp: Stamp): void {
    this.emitZone(channel, this.book.learn(channel, fields, kind, stamp));
  }

  /**
   * A read-back after writes (the amp acknowledges nothing). A difference is a keypad's change when one acted on the
   * zone meanwhile; otherwise a write lost on the line, written again, a few times.
   */
  private verified(channel: number, fields: Fields): ReadKind {
    this.plan.verify.delete(channel);
    if (this.plan.touched.has(channel) || this.book.shows(channel, fields)) {
      this.lostWrites.delete(channel);
      return 'update';
    }
    const lost = (this.lostWrites.get(channel) ?? 0) + 1;
    this.lostWrites.set(channel, lost);
    this.log('debug', `${this.core.family}: zone ${channel} did not take a write; sending it again`);
    return 'lost';
  }

  private answered(unit: number, address: number): void {
    const found = this.units.answered(unit);
    if (!found) return;
    this.log('info', `${this.core.family}: ${this.topology.unitName(unit)} answers`);
    // Found, or back after a silence: every zone of it is read before anything is written there.
    for (const other of this.topology.pollReads(unit)) if (other !== address) this.plan.sync(other);
    if (found === 'found') this.events.emit({ type: 'described', description: this.describe() });
    else for (const channel of this.topology.channels(unit)) this.events.emit({ type: 'availability', channel, available: true });
  }

  /** A unit did not answer: the master counts towards offline; another unit's zones become unavailable. */
  protected silence(unit: number): void {
    const verdict = this.units.silence(unit);
    if (verdict === 'offline') {
      this.link.fail(`${this.units.unansweredCount} requests to ${this.topology.unitName(unit)} unanswered (powered off or unplugged?)`);
    } else if (verdict === 'retry') {
      // Ask again at once, so a dead amplifier is found within a few timeouts rather than a few poll intervals.
      this.plan.queueRead(this.topology.probeRead(unit), true);
    } else if (verdict === 'lost') {
      const { reason } = this.units.availability(this.topology.channels(unit)[0]!);
      this.log('warn', `${this.core.family}: ${reason}; its zones are unavailable until it answers`);
      this.plan.forgetUnit(unit);
      for (const channel of this.topology.channels(unit)) {
        this.emitZone(channel, this.book.dropIntents(channel));
        this.events.emit({ type: 'availability', channel, available: false, reason: reason! });
      }
    }
    this.checkSettled();
  }

  // ---- poll ----------------------------------------------------------------------------------------------------

  protected schedulePoll(): void {
    this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = this.clock.setTimeout(() => {
      this.pollTimer = undefined;
      this.queuePoll();
      this.kick();
    }, this.pollDelayMs());
  }

  /** Every fitted unit is read; one that stopped answering is asked through its probe until it answers again. */
  private queuePoll(): void {
    for (const unit of this.units.fittedUnits()) for (const address of this.unitReads(unit)) this.plan.queueRead(address);
  }

  private unitReads(unit: number): number[] {
    return this.units.answers(unit) ? this.topology.pollReads(unit) : [this.topology.probeRead(unit)];
  }

  // ---- settled and events --------------------------------------------------------------------------------------

  protected isSettled(): boolean {
    if (this.phase === 'connecting') return false;
    if (this.phase !== 'online') return true;
    return this.writing === undefined && !this.plan.urgent() && this.nextWrite() === undefined;
  }

  protected checkSettled(): void {
    this.events.release(() => this.isSettled());
  }

  protected emitZone(channel: number, state: ZoneState | undefined): void {
    if (state) this.events.emit({ type: 'zone', channel, state });
  }

  protected emit(event: DriverEvent): void {
    this.events.emit(event);
  }

  protected log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.events.log(level, msg, fields);
  }
}
