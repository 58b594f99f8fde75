// Desired vs hardware state of the amplifier's zones: which set goes next, and which read-back changes are news.
import type { ZoneState } from '../driver.js';
import { stepToVolume, volumeToStep } from '../driver.js';
import { SOURCE_COUNT, VOLUME_STEPS, attributeValue, isZoneAddress, unitZones, type ZoneStatus } from './protocol.js';

/** The attributes ZoneState carries, as wire attribute names. Order matters: see nextWrite(). */
export type Managed = 'PR' | 'CH' | 'VO' | 'MU';
const MANAGED: readonly Managed[] = ['PR', 'CH', 'VO', 'MU'];
type Desired = Partial<Record<Managed, number>>;

export interface Write {
  zone: number;
  attribute: Managed;
  value: number;
}

export function toZoneState(s: ZoneStatus): ZoneState {
  return { power: s.power, muted: s.mute, volume: stepToVolume(s.volume, VOLUME_STEPS), source: s.source };
}

/**
 * Per zone, the desired state (what the daemon asked for, as wire values) and the known state (the last read-back,
 * updated by our acknowledged writes since the amp sends no data after a set). No I/O, no timers.
 */
export class ZoneBook {
  private readonly desired = new Map<number, Desired>();
  private readonly known = new Map<number, ZoneStatus>();

  /** Stores a change as wire values. Values the amp cannot take are dropped; the complaint is returned for the log. */
  record(channel: number, change: Partial<ZoneState>): string | undefined {
    if (!isZoneAddress(channel)) return `no zone ${channel}; zones are 11..16, 21..26, 31..36`;
    const next: Desired = { ...this.desired.get(channel) };
    let complaint: string | undefined;
    if (typeof change.power === 'boolean') next.PR = change.power ? 1 : 0;
    if (typeof change.muted === 'boolean') next.MU = change.muted ? 1 : 0;
    if (typeof change.volume === 'number' && Number.isFinite(change.volume)) next.VO = volumeToStep(change.volume, VOLUME_STEPS);
    if (change.source !== undefined) {
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= SOURCE_COUNT) next.CH = change.source;
      else complaint = `source must be 1..${SOURCE_COUNT}, got ${change.source} (zone ${channel})`;
    }
    this.desired.set(channel, next);
    return complaint;
  }

  hardware(zone: number): ZoneState | undefined {
    const status = this.known.get(zone);
    return status && toZoneState(status);
  }

  /** Zones of a unit with a desired state that were never read: nothing can be diffed against them. */
  unread(unit: number): number[] {
    return unitZones(unit).filter((zone) => this.desired.has(zone) && !this.known.has(zone));
  }

  /**
   * The next set to send on the given units. Real units ignore sets other than PR to an off zone, so those are only
   * sent while the zone is on: power on therefore goes first, power off last (the amp keeps the other settings), and
   * changes to a zone that stays off wait until it is on again. Source goes before volume and mute so an unmuted zone
   * never plays the previous source. Amps that do take sets while off end in the same state.
   */
  nextWrite(units: Iterable<number>, held: ReadonlySet<number>): Write | undefined {
    for (const unit of units) {
      for (const zone of unitZones(unit)) {
        const status = this.known.get(zone);
        const want = this.desired.get(zone);
        if (!status || !want || held.has(zone)) continue;
        if (status.power) {
          for (const attribute of MANAGED) {
            if (attribute !== 'PR' && this.wants(zone, attribute)) return { zone, attribute, value: want[attribute]! };
          }
        }
        if (this.wants(zone, 'PR')) return { zone, attribute: 'PR', value: want.PR! };
      }
    }
    return undefined;
  }

  /** The amp took our set: it sends no data after one, so this is all we will know until the next read. */
  acknowledge({ zone, attribute, value }: Write): void {
    const status = this.known.get(zone);
    if (!status) return;
    if (attribute === 'PR') status.power = value === 1;
    else if (attribute === 'MU') status.mute = value === 1;
    else if (attribute === 'VO') status.volume = value;
    else status.source = value;
  }

  /** Gives up on a desired value the amp keeps refusing; returns the zone's state to report, if it was ever read. */
  forget({ zone, attribute }: Write): ZoneState | undefined {
    const want = this.desired.get(zone);
    if (want) delete want[attribute];
    return this.known.has(zone) ? this.reported(zone) : undefined;
  }

  /**
   * Takes in one status line. `sync` reads (a unit's first on this connection) only learn the hardware: the desired
   * state is pushed over it. `poll` reads adopt changes nobody here asked for (keypads); the zone's new state is
   * returned when there is such a change, to be reported.
   */
  learn(status: ZoneStatus, mode: 'sync' | 'poll'): ZoneState | undefined {
    const zone = status.zone;
    const before = this.known.get(zone);
    this.known.set(zone, { ...status });
    if (!before || mode === 'sync') return undefined;
    const want = this.desired.get(zone);
    let changed = false;
    for (const attribute of MANAGED) {
      const was = attributeValue(before, attribute);
      const now = attributeValue(status, attribute);
      if (now === was) continue;
      // A change we still have to write (recorded while this poll was on the wire) is newer than the poll: the
      // poll must neither report it nor overwrite it.
      if (want?.[attribute] !== undefined && want[attribute] !== was) continue;
      // An off zone ignores sets, so a differing value there is our write that did not take: keep it for power-on.
      if (attribute !== 'PR' && !status.power && want?.[attribute] !== undefined) continue;
      changed = true;
      if (want?.[attribute] !== undefined) want[attribute] = now;
    }
    return changed ? this.reported(zone) : undefined;
  }

  /** What a zone is (or is about to be, once pending writes land): hardware overlaid with pending desired values. */
  private reported(zone: number): ZoneState {
    const state = toZoneState(this.known.get(zone)!);
    const want = this.desired.get(zone) ?? {};
    if (want.PR !== undefined) state.power = want.PR === 1;
    if (want.MU !== undefined) state.muted = want.MU === 1;
    if (want.VO !== undefined) state.volume = stepToVolume(want.VO, VOLUME_STEPS);
    if (want.CH !== undefined) state.source = want.CH;
    return state;
  }

  /** Whether a desired attribute still differs from what the hardware has. */
  private wants(zone: number, attribute: Managed): boolean {
    const want = this.desired.get(zone)?.[attribute];
    const status = this.known.get(zone);
    return want !== undefined && status !== undefined && want !== attributeValue(status, attribute);
  }
}
