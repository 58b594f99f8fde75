// Desired vs hardware state of the Xantech zones: which set goes next, and which read-back changes are news.
import type { ZoneState } from '../driver.js';
import { stepToVolume, volumeToStep } from '../driver.js';
import { SOURCE_COUNT, VOLUME_STEPS, attributeValue, isZone, type ZoneStatus } from './protocol.js';

/** The attributes ZoneState carries, as wire attribute names. Order matters: see nextWrite(). */
export type Managed = 'PR' | 'SS' | 'VO' | 'MU';
const MANAGED: readonly Managed[] = ['PR', 'SS', 'VO', 'MU'];
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
 * Per zone, the desired state (what the daemon asked for, as wire values) and the known state (the last report,
 * updated by our acknowledged sets). No I/O, no timers.
 */
export class ZoneBook {
  private readonly desired = new Map<number, Desired>();
  private readonly known = new Map<number, ZoneStatus>();

  constructor(private readonly zones: number) {}

  /** Stores a change as wire values. Values the amp cannot take are dropped; the complaint is returned for the log. */
  record(channel: number, change: Partial<ZoneState>): string | undefined {
    if (!isZone(channel, this.zones)) return `no zone ${channel}; zones are 1..${this.zones}`;
    const next: Desired = { ...this.desired.get(channel) };
    let complaint: string | undefined;
    if (typeof change.power === 'boolean') next.PR = change.power ? 1 : 0;
    if (typeof change.muted === 'boolean') next.MU = change.muted ? 1 : 0;
    if (typeof change.volume === 'number' && Number.isFinite(change.volume)) next.VO = volumeToStep(change.volume, VOLUME_STEPS);
    if (change.source !== undefined) {
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= SOURCE_COUNT) next.SS = change.source;
      else complaint = `source must be 1..${SOURCE_COUNT}, got ${change.source} (zone ${channel})`;
    }
    this.desired.set(channel, next);
    return complaint;
  }

  hardware(zone: number): ZoneState | undefined {
    const status = this.known.get(zone);
    return status && toZoneState(status);
  }

  /**
   * The next set to send among the zones read on this connection. Power on goes first and power off last, and other
   * changes wait while a zone stays off: amplifiers of this style drop sets to an off zone, and one that takes them
   * ends in the same state. Source goes before volume and mute, so an unmuted zone never plays the old source and a
   * volume reset by a source switch (reported on one MRC88) is overwritten by the volume that follows.
   */
  nextWrite(zones: Iterable<number>, held: ReadonlySet<number>): Write | undefined {
    for (const zone of zones) {
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
    return undefined;
  }

  /** The amp answered OK: it applied the set, and its next report will say so. */
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
   * Takes in one zone report. `sync` (the first read of a zone on this connection) only learns the hardware: the
   * desired state is pushed over it. `update` (a poll reply or an activity report) adopts changes nobody here asked
   * for (keypads) and returns the zone's new state when there is such a change, to be reported. Reports of our own
   * sets match what acknowledge() recorded, so they are never news.
   */
  learn(status: ZoneStatus, mode: 'sync' | 'update'): ZoneState | undefined {
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
      // A change still to be written (recorded while this report was on the wire) is newer than the report.
      if (want?.[attribute] !== undefined && want[attribute] !== was) continue;
      // An off zone may drop sets, so a differing value there is our set that did not take: keep it for power-on.
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
    if (want.SS !== undefined) state.source = want.SS;
    return state;
  }

  private wants(zone: number, attribute: Managed): boolean {
    const want = this.desired.get(zone)?.[attribute];
    const status = this.known.get(zone);
    return want !== undefined && status !== undefined && want !== attributeValue(status, attribute);
  }
}
