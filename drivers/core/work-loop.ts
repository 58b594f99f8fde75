// The work loop every serial family shares: one sender on the line, writes first (chosen when the line is free, so a
// burst goes out as its latest value), then reads; what each read and write shows, taken into the reconciliation
// book, the read plan and each unit's liveness; and the poll. serial-driver.ts builds the driver's lifecycle on it.
import type { DriverDescription, DriverEvent } from '../driver.js';
import type { Clock } from './clock.js';
import type { DriverEvents } from './events.js';
import { type PlannedRead, ReadPlan, Refusals } from './read-plan.js';
import type { ReconnectingPort } from './reconnecting-port.js';
import type { FirstRead, ReadReply, SerialTimings, WriteOutcome } from './serial-options.js';
import { type Topology, Units } from './units.js';
import type { Fields, ReadKind, Reported, Stamp, Write, ZoneBook } from './zone-book.js';

export type Phase = 'new' | 'connecting' | 'online' | 'offline' | 'stopped';

/** Read-backs in a row that show a write did not arrive, before the driver keeps the zone's own value. */
const MAX_LOST_WRITES = 3;
/** The longest a silent unit goes without being asked again (it is asked less often the longer it stays silent). */
export const SILENT_PROBE_MAX_MS = 60_000;
/** How long a write, or a change seen on the amplifier, keeps the watched poll rate after it (someone is at it). */
export const ACTIVITY_MS = 30_000;

export abstract class WorkLoop {
  protected abstract readonly link: ReconnectingPort;
  protected abstract readonly book: ZoneBook;
  protected phase: Phase = 'new';
  /** The write on the line, from its send until its outcome is taken in. */
  protected writing: Write | undefined;
  protected readonly plan: ReadPlan;
  protected readonly units: Units;
  private readonly refusals: Refusals;
  private readonly lostWrites = new Map<number, number>();
  private pollTimer: unknown;
  /** When the pending poll is due, and when the last one began (undefined: none yet on this connection). */
  private pollDueAt = 0;
  private pollStartedAt: number | undefined;
  /** The daemon's hint that someone watches the zones (an event-stream client is connected). */
  private watched = false;
  private activeUntil = Number.NEGATIVE_INFINITY;
  private pumping = false;

  protected constructor(
    protected readonly family: string,
    protected readonly topology: Topology,
    protected readonly clock: Clock,
    protected readonly timings: SerialTimings,
    protected readonly events: DriverEvents,
    options: { configured: readonly number[]; probeOthers: boolean; maxRefusals: number },
  ) {
    this.plan = new ReadPlan(topology);
    this.refusals = new Refusals(options.maxRefusals);
    this.units = new Units(topology, { ...options, offlineAfterTimeouts: timings.offlineAfterTimeouts });
  }

  abstract describe(): DriverDescription;
  /** One read on the wire. */
  protected abstract read(address: number): Promise<ReadReply>;
  /** One write on the wire. */
  protected abstract send(write: Write): Promise<WriteOutcome>;
  /** A write went through (Xantech reads a zone again after powering it on). */
  protected confirmed(_write: Write): void {
    // Most families need nothing more.
  }
  /** The connection ended: forget what the family learned on it. */
  protected resetSession(): void {
    // Most families learn nothing per connection.
  }
  /** How long until the next poll. */
  protected pollDelayMs(): number {
    return this.timings.pollIntervalMs;
  }
  /**
   * How often a zone is read while someone watches or just acted (from the start of one poll to the next), or
   * undefined for a family told of keypad changes without polling: there attention changes nothing.
   */
  protected watchedPollMs(): number | undefined {
    return undefined;
  }

  /** The daemon's hint: someone watches the zones, so keypad changes are read sooner (docs/drivers.md). */
  watching(watched: boolean): void {
    if (watched === this.watched) return;
    this.watched = watched;
    this.attentionChanged();
  }

  /** Someone acted (a write, a change seen on the amplifier): the watched rate holds for ACTIVITY_MS. */
  protected activity(): void {
    if (this.watchedPollMs() === undefined) return;
    const was = this.attentive();
    this.activeUntil = this.clock.now() + ACTIVITY_MS;
    if (!was) this.attentionChanged();
  }

  /** Whether the poll runs at the watched rate, zone by zone. */
  protected attentive(): boolean {
    return this.watchedPollMs() !== undefined && (this.watched || this.clock.now() < this.activeUntil);
  }

  /** A read with the time it was sent: a change it shows supersedes only intents made before then. */
  protected async stampedRead(address: number): Promise<FirstRead> {
    const stamp = this.book.stamp();
    return { address, reply: await this.read(address), stamp };
  }

  /** The connection ended (or the driver stopped): what was learned on it goes; intents stay, to be written on return. */
  protected dropSession(): void {
    this.clock.clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.pollStartedAt = undefined;
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
    const connection = this.link.connection;
    try {
      while (this.phase === 'online' && connection === this.link.connection) {
        if (!(await this.turn(connection))) break;
      }
    } catch (err) {
      // Nothing above should throw; if it does, the link is in an unknown state, so start it afresh.
      this.log('error', `${this.family}: work loop failed: ${(err as Error).stack ?? String(err)}`);
      if (connection === this.link.connection) this.link.fail('internal error');
    } finally {
      this.pumping = false;
      this.writing = undefined;
      if (connection !== this.link.connection) this.kick(); // a new connection began while this loop was winding down
      this.checkSettled();
    }
  }

  /** Writes first, chosen when the line is free (so a burst goes out as its latest value); then reads. */
  private async turn(connection: number): Promise<boolean> {
    const write = this.nextWrite();
    if (write) return this.writeTurn(connection, write);
    const read = this.plan.next();
    if (!read) return false;
    const { reply, stamp } = await this.stampedRead(read.address);
    if (connection !== this.link.connection || reply.outcome === 'closed') return false;
    this.afterRead(read, reply, stamp);
    if (this.plan.empty() && this.pollTimer === undefined && this.phase === 'online') this.schedulePoll();
    return true;
  }

  private nextWrite(): Write | undefined {
    return this.book.nextWrite(
      [...this.plan.live].sort((a, b) => a - b),
      this.plan.held,
    );
  }

  private async writeTurn(connection: number, write: Write): Promise<boolean> {
    this.writing = write;
    const outcome = await this.send(write);
    this.writing = undefined;
    if (connection !== this.link.connection || outcome === 'closed') return false;
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
    this.log(
      'warn',
      `${this.family}: zone ${channel} refused ${write.attribute} ${write.value} ${times} times; keeping its value`,
    );
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
    const found = this.units.answered(unit);
    for (const { channel, fields } of reply.zones) {
      if (!covered.includes(channel)) continue;
      const kind =
        read.purpose === 'verify' ? this.verified(channel, fields) : this.plan.live.has(channel) ? 'update' : 'first';
      this.plan.touched.delete(channel);
      this.learn(channel, fields, kind, stamp);
      this.plan.live.add(channel);
      if (kind === 'lost' && this.lostWrites.get(channel)! >= MAX_LOST_WRITES) {
        this.lostWrites.delete(channel);
        this.log(
          'warn',
          `${this.family}: zone ${channel} ignored the same change ${MAX_LOST_WRITES} times; keeping its own value`,
        );
        this.emitZone(
          channel,
          this.book.giveUp(channel, ['power', 'source', 'volume', 'bass', 'treble', 'balance', 'loudness']),
        );
      }
    }
    // A zone the reply should have shown and did not (a garbled line): read on its own when writes wait for it.
    if (covered.length > 1) {
      for (const channel of covered)
        if (!this.plan.live.has(channel) && this.book.hasIntents(channel))
          this.plan.sync(this.topology.zoneRead(channel));
    }
    if (found) this.unitAnswers(unit, address, found);
    this.checkSettled();
  }

  /** Takes in what a read or report showed of a zone, and reports it when the daemon must hear of it. */
  protected learn(channel: number, fields: Fields, kind: ReadKind, stamp: Stamp): void {
    const reported = this.book.learn(channel, fields, kind, stamp);
    // A keypad's change: someone is at the amplifier, and may well turn it again.
    if (reported && kind === 'update') this.activity();
    this.emitZone(channel, reported);
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
    this.log('debug', `${this.family}: zone ${channel} did not take a write; sending it again`);
    return 'lost';
  }

  /**
   * A unit found, or back after a silence, once what this read showed of it is taken in: every other zone of it is
   * read before anything is written there, and the daemon hears of it.
   */
  private unitAnswers(unit: number, address: number, found: 'found' | 'back'): void {
    this.log('info', `${this.family}: ${this.topology.unitName(unit)} answers`);
    for (const other of this.topology.pollReads(unit)) if (other !== address) this.plan.sync(other);
    if (found === 'found') this.events.emit({ type: 'described', description: this.describe() });
    else
      for (const channel of this.topology.channels(unit))
        this.events.emit({ type: 'availability', channel, available: true });
  }

  /** A unit did not answer: the master counts towards offline; another unit's zones become unavailable. */
  protected silence(unit: number): void {
    const verdict = this.units.silence(unit);
    if (verdict === 'offline') {
      this.link.fail(
        `${this.units.unansweredCount} requests to ${this.topology.unitName(unit)} unanswered (powered off or unplugged?)`,
      );
    } else if (verdict === 'retry') {
      // Ask again at once, so a dead amplifier is found within a few timeouts rather than a few poll intervals.
      this.plan.queueRead(this.topology.probeRead(unit), true);
    } else if (verdict === 'lost') {
      const { reason } = this.units.availability(this.topology.channels(unit)[0]!);
      this.log('warn', `${this.family}: ${reason}; its zones are unavailable until it answers`);
      this.plan.forgetUnit(unit);
      for (const channel of this.topology.channels(unit)) {
        this.emitZone(channel, this.book.dropIntents(channel));
        this.events.emit({ type: 'availability', channel, available: false, reason: reason! });
      }
    }
    this.checkSettled();
  }

  // ---- poll ----------------------------------------------------------------------------------------------------

  /**
   * Idle, the next poll comes pollDelayMs after the last one ended. Watched, WATCHED_POLL_MS after the last one began
   * (at once when it took longer), so each zone is read that often.
   */
  protected schedulePoll(): void {
    const now = this.clock.now();
    const watched = this.attentive() ? this.watchedPollMs()! : undefined;
    this.armPoll(watched === undefined ? this.pollDelayMs() : Math.max(0, (this.pollStartedAt ?? now) + watched - now));
  }

  private armPoll(delayMs: number): void {
    this.clock.clearTimeout(this.pollTimer);
    this.pollDueAt = this.clock.now() + delayMs;
    this.pollTimer = this.clock.setTimeout(() => {
      this.pollTimer = undefined;
      this.queuePoll();
      this.kick();
    }, delayMs);
  }

  /** Someone began watching (or acted): a poll waiting for the idle interval comes at the watched one instead. */
  private attentionChanged(): void {
    if (this.phase !== 'online' || this.pollTimer === undefined || !this.attentive()) return;
    const now = this.clock.now();
    const due = (this.pollStartedAt ?? now) + this.watchedPollMs()!;
    if (due < this.pollDueAt) this.armPoll(Math.max(0, due - now));
  }

  /**
   * Every fitted unit is read; one that stopped answering is asked through its probe until it answers again, less
   * often the longer it stays silent, but at least once a minute (SILENT_PROBE_MAX_MS). Watched, each zone is read on
   * its own: no read then holds the line much longer than a write, so a write waits behind one short exchange at most.
   */
  private queuePoll(): void {
    const watched = this.attentive();
    this.pollStartedAt = this.clock.now();
    const interval = watched ? this.watchedPollMs()! : this.pollDelayMs();
    const maxSkips = Math.max(0, Math.ceil(SILENT_PROBE_MAX_MS / interval) - 1);
    for (const unit of this.units.fittedUnits()) {
      if (!this.units.probeDue(unit, maxSkips)) continue;
      const reads =
        watched && this.units.answers(unit)
          ? this.topology.channels(unit).map((channel) => this.topology.zoneRead(channel))
          : this.unitReads(unit);
      for (const address of reads) this.plan.queueRead(address);
    }
  }

  protected unitReads(unit: number): number[] {
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

  protected emitZone(channel: number, reported: Reported | undefined): void {
    if (reported) this.events.emit({ type: 'zone', channel, ...reported });
  }

  protected emit(event: DriverEvent): void {
    this.events.emit(event);
  }

  protected log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.events.log(level, msg, fields);
  }
}
