// Which parts of the amplifier answer. The master unit's silence is the whole amplifier offline (a `status` event,
// writes kept as intents); another unit's silence makes its zones unavailable until it answers again. Which units
// are fitted: the configured ones, those the daemon remembers zones of, and those a probe finds.
import type { ZoneAvailability } from '../driver.js';

/** How a family addresses its amplifier: units (Monoprice units, RNET controllers, Xantech amps), zones and reads. */
export interface Topology {
  /** Every unit the family can address, the master first. */
  readonly units: readonly number[];
  /** The unit a zone channel or a read address belongs to; undefined for neither. */
  unitOf(address: number): number | undefined;
  /** The zone channels of a unit. */
  channels(unit: number): number[];
  /** The zone's name in the description ("Zone 7"). */
  zoneName(channel: number): string;
  /** What an installer calls a unit: "unit 2", "controller 2", "the expansion amplifier (zones 9-16)". */
  unitName(unit: number): string;
  /** The reads of one poll of a unit (Monoprice: the whole unit at once; Xantech, RNET: each zone). */
  pollReads(unit: number): number[];
  /** The one read that finds out whether a unit is there. */
  probeRead(unit: number): number;
  /** The smallest read that shows a zone. */
  zoneRead(channel: number): number;
  /** The channels a read shows. */
  covers(address: number): number[];
}

export interface UnitsOptions {
  /** Units fitted without being found: the master, and units the configuration names (Xantech's expansion). */
  configured: readonly number[];
  /** Whether units neither configured nor remembered are probed once, on the first connection (Monoprice, RNET). */
  probeOthers: boolean;
  /** Consecutive unanswered requests to the master that mean the amplifier is off or unplugged. */
  offlineAfterTimeouts: number;
}

/** What a silence means: the amplifier offline, the master asked again at once, or a unit whose zones are lost. */
export type Silence = 'offline' | 'retry' | 'lost' | undefined;

export class Units {
  readonly master: number;
  private readonly fitted = new Set<number>();
  /** Units not probed yet and not known to be fitted: asked once, absent ones never again. */
  private readonly unprobed = new Set<number>();
  /**
   * Fitted units that stopped answering (their zones are unavailable), each with its unanswered probes so far and
   * the polls it was left out of since the last one.
   */
  private readonly silent = new Map<number, { missed: number; skipped: number }>();
  private masterTimeouts = 0;

  constructor(
    private readonly topology: Topology,
    private readonly options: UnitsOptions,
  ) {
    this.master = topology.units[0]!;
    for (const unit of [this.master, ...options.configured]) this.fitted.add(unit);
    if (options.probeOthers) for (const unit of topology.units) if (!this.fitted.has(unit)) this.unprobed.add(unit);
  }

  /** Channels the daemon knows: their units count as fitted (described), whether they answer or not. */
  remember(channel: number): void {
    const unit = this.topology.unitOf(channel);
    if (unit === undefined) return;
    this.fitted.add(unit);
    this.unprobed.delete(unit);
  }

  fittedUnits(): number[] {
    return [...this.fitted].sort((a, b) => a - b);
  }

  unprobedUnits(): number[] {
    return [...this.unprobed].sort((a, b) => a - b);
  }

  /** A fitted unit not known to be silent. */
  answers(unit: number): boolean {
    return this.fitted.has(unit) && !this.silent.has(unit);
  }

  /** A new connection: the master's count starts over. */
  newSession(): void {
    this.masterTimeouts = 0;
  }

  /** The line answered (a refusal, an acknowledgement): the master is there. */
  alive(): void {
    this.masterTimeouts = 0;
  }

  /** A read reached the unit: 'found' when it was not known to be fitted, 'back' when it had fallen silent. */
  answered(unit: number): 'found' | 'back' | undefined {
    this.unprobed.delete(unit);
    if (unit === this.master) this.masterTimeouts = 0;
    if (!this.fitted.has(unit)) {
      this.fitted.add(unit);
      return 'found';
    }
    return this.silent.delete(unit) ? 'back' : undefined;
  }

  /** The unit did not answer a request. */
  silence(unit: number): Silence {
    this.unprobed.delete(unit);
    if (unit === this.master) return ++this.masterTimeouts >= this.options.offlineAfterTimeouts ? 'offline' : 'retry';
    if (!this.fitted.has(unit)) return undefined;
    const silent = this.silent.get(unit);
    if (silent) {
      silent.missed++; // a probe went unanswered
      return undefined;
    }
    this.silent.set(unit, { missed: 0, skipped: 0 });
    return 'lost';
  }

  /**
   * Whether this poll asks a silent unit again; true for any other unit. After its n-th unanswered probe a silent unit
   * is left out of 2^n - 1 polls (1, 3, 7, ...), at most `maxSkips`: one that stays away costs a command timeout now
   * and then rather than at every poll, and one that comes back is asked again within maxSkips + 1 polls.
   */
  probeDue(unit: number, maxSkips: number): boolean {
    const silent = this.silent.get(unit);
    if (!silent || silent.skipped >= Math.min(2 ** silent.missed - 1, maxSkips)) {
      if (silent) silent.skipped = 0;
      return true;
    }
    silent.skipped++;
    return false;
  }

  get unansweredCount(): number {
    return this.masterTimeouts;
  }

  availability(channel: number): ZoneAvailability {
    const unit = this.topology.unitOf(channel);
    if (unit === undefined || !this.topology.channels(unit).includes(channel)) {
      return { available: false, reason: `the amplifier has no zone ${channel}` };
    }
    if (this.fitted.has(unit) && !this.silent.has(unit)) return { available: true };
    return { available: false, reason: `${this.topology.unitName(unit)} does not answer` };
  }
}
