// The abstract serial amplifier driver: lifecycle, session phases, poll timer and the one-sender work loop; families
// supply the protocol-specific parts (what a session begins with, what one turn of the loop sends, when all is done).
import type { AmplifierDriver, DriverDescription, DriverListener, DriverOptions, ZoneAvailability, ZoneState } from './driver.js';
import { DriverEvents } from './driver-events.js';

export type Phase = 'new' | 'connecting' | 'online' | 'offline' | 'stopped';

/** What the base needs of a family's link: its session counter and its lifecycle (drivers/serial-link.ts). */
export interface SessionLink {
  readonly session: number;
  start(): void;
  fail(detail: string): void;
  stop(): Promise<void>;
}

/** What the base needs of a family's zone book. */
export interface DesiredStateBook {
  /** Records a desired change; returns a complaint for values it dropped. */
  record(channel: number, change: Partial<ZoneState>): string | undefined;
  hardware(channel: number): ZoneState | undefined;
}

export abstract class SerialDriver implements AmplifierDriver {
  abstract readonly name: string;
  protected abstract readonly link: SessionLink;
  protected abstract readonly zones: DesiredStateBook;
  protected readonly events: DriverEvents;
  protected phase: Phase = 'new';
  /** A write is on the wire: not settled, whatever the book says. */
  protected writeInFlight = false;
  protected pollTimer: NodeJS.Timeout | undefined;
  private pumping = false;

  protected constructor(
    private readonly family: string,
    options: DriverOptions,
  ) {
    this.events = new DriverEvents(family, options.log);
  }

  get online(): boolean {
    return this.phase === 'online';
  }

  abstract describe(): DriverDescription;

  async start(desired: ReadonlyMap<number, ZoneState>): Promise<void> {
    if (this.phase !== 'new') return;
    for (const [channel, state] of desired) this.record(channel, state);
    this.phase = 'connecting';
    this.link.start();
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    if (this.phase === 'stopped') return;
    this.record(channel, change);
    this.kick();
    this.checkSettled();
  }

  hardwareState(channel: number): ZoneState | undefined {
    return this.zones.hardware(channel);
  }

  availability(channel: number): ZoneAvailability {
    return this.describe().zones.some((zone) => zone.channel === channel)
      ? { available: true }
      : { available: false, reason: `${this.family}: no zone ${channel} is fitted` };
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

  /** Whether every change recorded so far has reached the hardware, while online. */
  protected abstract isSettledOnline(): boolean;
  /** The port is open: the family's handshake, which ends in goOnline() or link.fail(). */
  protected abstract begin(): Promise<void>;
  /** Forgets what was learned on the connection that ended (the poll timer is already cleared). */
  protected abstract resetSession(): void;
  /** Queues the reads of a regular poll. */
  protected abstract queuePoll(): void;
  /** One step of the work loop: a write or a read. False when there is nothing to do or the session ended. */
  protected abstract turn(session: number): Promise<boolean>;

  /** How long until the next poll; families that get reports may poll less often. */
  protected abstract pollDelayMs(): number;

  // ---- shared scaffolding ------------------------------------------------------------------------------------------

  /** Bad values are logged and dropped, never thrown: callers are not the hardware. */
  protected record(channel: number, change: Partial<ZoneState>): void {
    const complaint = this.zones.record(channel, change);
    if (complaint) this.log('warn', `${this.family}: ${complaint}`);
  }

  protected isSettled(): boolean {
    if (this.phase === 'connecting') return false;
    if (this.phase !== 'online') return true;
    return !this.writeInFlight && this.isSettledOnline();
  }

  protected checkSettled(): void {
    this.events.release(() => this.isSettled());
  }

  /** The handshake succeeded: report online, start polling and push whatever is pending. */
  protected goOnline(): void {
    this.setStatus(true);
    this.schedulePoll();
    this.kick();
    this.checkSettled();
  }

  /** The link's onDown: offline until it reopens. */
  protected linkDown(detail: string): void {
    if (this.phase === 'stopped') return;
    this.phase = 'offline';
    this.dropSession();
    this.setStatus(false, detail);
    this.checkSettled();
  }

  protected dropSession(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.resetSession();
  }

  protected setStatus(online: boolean, detail?: string): void {
    this.events.status(online, detail);
  }

  protected schedulePoll(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      this.queuePoll();
      this.kick();
    }, this.pollDelayMs());
  }

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
      this.log('error', `${this.family}: work loop failed: ${(err as Error).stack ?? String(err)}`);
      if (session === this.link.session) this.link.fail('internal error');
    } finally {
      this.pumping = false;
      this.writeInFlight = false;
      if (session !== this.link.session) this.kick(); // a new session began while this loop was winding down
      this.checkSettled();
    }
  }

  protected emit(event: Parameters<DriverEvents['emit']>[0]): void {
    this.events.emit(event);
  }

  protected log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.events.log(level, msg, fields);
  }
}

/** Refusals in a row per command (noise garbles some), so that one the amplifier keeps refusing is given up. */
export class Refusals {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Counts one refusal of `key`: true while it is worth another try; at the limit false, and the count starts over. */
  retry(key: string): boolean {
    const count = (this.counts.get(key) ?? 0) + 1;
    if (count < this.limit) {
      this.counts.set(key, count);
      return true;
    }
    this.counts.delete(key);
    return false;
  }

  /** The command went through: its count starts over. */
  reset(key: string): void {
    this.counts.delete(key);
  }

  clear(): void {
    this.counts.clear();
  }
}
