// Which zones, players and input devices can take writes now. A zone whose amplifier unit does not answer (its driver
// says so) and everything of an amplifier that is not configured are unavailable, with a reason: listed, readable and
// deletable, but every write that would reach the amplifier is refused (409) instead of pretending it landed.
// Runtime state: followed from the drivers and read at start, never stored.
import type { AmplifierDriver, ZoneAvailability } from '../../../drivers/driver.js';
import type { PlayerRow, ZoneRow } from '../../store/audio-repo.js';
import { conflict, type DomainError } from '../shared/index.js';
import type { Amplifier, Amplifiers } from './amplifiers.js';

/** Where a player or an input device is fed (both rows carry the same columns). */
type InputBinding = Pick<PlayerRow, 'input_amplifier' | 'input_driver'>;

/** A zone that cannot take a change, and why: what refusals and skip lists name. */
export interface Skipped {
  zoneId: string;
  reason: string;
}

export class Availability {
  /** Zones of configured amplifiers whose unit does not answer: the reason as the API shows it, by zone id. */
  private readonly silent = new Map<string, string>();

  constructor(private readonly amplifiers: Amplifiers) {}

  /** Why the zone cannot take writes now; null when it can. */
  zoneReason(zone: Readonly<ZoneRow>): string | null {
    const notConfigured = this.amplifiers.notConfigured(zone.output_amplifier, zone.output_driver);
    return notConfigured ?? this.silent.get(zone.id) ?? null;
  }

  /** Why a player or an input device cannot be used: only when its amplifier is not configured. */
  inputReason(row: InputBinding): string | null {
    return this.amplifiers.notConfigured(row.input_amplifier, row.input_driver);
  }

  /**
   * The driver a write to the zone goes to; a 409 naming the amplifier and the unit (or the missing amplifier) when
   * the zone cannot take it. Runs for every volume change: two map lookups when all is well.
   */
  driverFor(zone: Readonly<ZoneRow>): AmplifierDriver {
    const driver = this.reachable(zone);
    if (driver) return driver;
    throw this.refusal([zone]);
  }

  /** The driver of a zone that can take writes now; undefined when it cannot (the write is then left out). */
  reachable(zone: Readonly<ZoneRow>): AmplifierDriver | undefined {
    const amplifier = this.amplifiers.find(zone.output_amplifier, zone.output_driver);
    return amplifier && (this.silent.size === 0 || !this.silent.has(zone.id)) ? amplifier.driver : undefined;
  }

  /** Refuses (409) a change of zones when any of them cannot take it, naming each; nothing is changed then. */
  requireZones(zones: readonly Readonly<ZoneRow>[]): void {
    const refused = zones.filter((zone) => this.zoneReason(zone) !== null);
    if (refused.length > 0) throw this.refusal(refused);
  }

  /** The zones of a list that cannot take writes now, with their reasons. */
  unavailable(zones: readonly Readonly<ZoneRow>[]): Skipped[] {
    const skipped: Skipped[] = [];
    for (const zone of zones) {
      const reason = this.zoneReason(zone);
      if (reason !== null) skipped.push({ zoneId: zone.id, reason });
    }
    return skipped;
  }

  /** Refuses a change of zones that cannot take it (409): each named with its reason, and how it gets better. */
  refusal(zones: readonly Readonly<ZoneRow>[]): DomainError {
    const named = zones
      .map((zone) => `zone "${zone.name}" (${zone.id}): ${this.zoneReason(zone) ?? 'available'}`)
      .join('; ');
    const unconfigured = zones.some(
      (zone) => this.amplifiers.notConfigured(zone.output_amplifier, zone.output_driver) !== null,
    );
    const fix = unconfigured
      ? 'configure that amplifier again to use its zones, or delete the zones that are gone for good (DELETE /api/zones/{id})'
      : 'a zone takes changes again by itself once its unit answers; an admin can delete a zone that is gone for good';
    return conflict(
      `${zones.length === 1 ? 'this zone cannot' : 'these zones cannot'} take changes now: ${named}. Nothing was changed; ${fix}`,
    );
  }

  /** Refuses a write to a player of an amplifier that is not configured (409); passes one that is usable. */
  requirePlayer(player: Readonly<PlayerRow>): void {
    const reason = this.inputReason(player);
    if (reason === null) return;
    throw conflict(
      `player "${player.name}" (${player.id}) cannot take changes: ${reason}. Nothing was changed; configure that amplifier again to use it, ` +
        `or delete the player (DELETE /api/players/${player.id}) if it is gone for good`,
    );
  }

  /**
   * Records what a zone's driver says about it; true when that changed what the API shows. The reason names the
   * amplifier and the driver's words for the part that does not answer.
   */
  record(zone: Readonly<ZoneRow>, amplifier: Amplifier, said: ZoneAvailability): boolean {
    const before = this.silent.get(zone.id);
    if (said.available) {
      this.silent.delete(zone.id);
      return before !== undefined;
    }
    const reason = `amplifier "${amplifier.name}" (driver ${amplifier.driver.name}): ${said.reason ?? 'this zone does not answer'}`;
    this.silent.set(zone.id, reason);
    return before !== reason;
  }

  /** A zone deleted, or every zone after the database was replaced (a restore): read again from the drivers. */
  forget(zoneId?: string): void {
    if (zoneId === undefined) this.silent.clear();
    else this.silent.delete(zoneId);
  }

  /** How many zones of configured amplifiers cannot answer now (health). */
  get silentZones(): number {
    return this.silent.size;
  }
}

/** The two fields every view of a zone, player or input device carries. */
export function availabilityOf(reason: string | null): { available: boolean; unavailableReason: string | null } {
  return { available: reason === null, unavailableReason: reason };
}
