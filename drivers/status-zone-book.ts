// Desired vs hardware state for amplifiers that report a zone as one status line and take one set per attribute
// (Monoprice, Xantech): which set goes next, and which read-back changes are news. No I/O, no timers.
import type { ZoneState } from './driver.js';
import { stepToVolume, volumeToStep } from './driver.js';

/** What a zone status line says about the attributes ZoneState carries (volume in device steps). */
export interface StatusFields {
  zone: number;
  power: boolean;
  mute: boolean;
  volume: number;
  source: number;
}

/** The managed attributes as wire names; only the source attribute's name differs between families. */
export type Managed<S extends string> = 'PR' | S | 'VO' | 'MU';

export interface Write<S extends string> {
  zone: number;
  attribute: Managed<S>;
  value: number;
}

export interface BookSpec<S extends string> {
  /** The wire name of the source attribute (`CH`, `SS`). */
  source: S;
  volumeSteps: number;
  sourceCount: number;
  /** Undefined for a zone of this amplifier, else the complaint naming the valid zones. */
  checkZone(channel: number): string | undefined;
}

export function statusToZoneState(s: StatusFields, volumeSteps: number): ZoneState {
  return { power: s.power, muted: s.mute, volume: stepToVolume(s.volume, volumeSteps), source: s.source };
}

export class StatusZoneBook<S extends string, Z extends StatusFields> {
  /** Order matters: see nextWrite(). */
  private readonly managed: ReadonlyArray<Managed<S>>;
  /** Wire values by attribute name (`PR`, the source attribute, `VO`, `MU`). */
  private readonly desired = new Map<number, Record<string, number | undefined>>();
  private readonly known = new Map<number, Z>();

  constructor(private readonly spec: BookSpec<S>) {
    this.managed = ['PR', spec.source, 'VO', 'MU'];
  }

  /** Stores a change as wire values. Values the amp cannot take are dropped; the complaint is returned for the log. */
  record(channel: number, change: Partial<ZoneState>): string | undefined {
    const wrongZone = this.spec.checkZone(channel);
    if (wrongZone) return wrongZone;
    const next: Record<string, number | undefined> = { ...this.desired.get(channel) };
    let complaint: string | undefined;
    if (typeof change.power === 'boolean') next.PR = change.power ? 1 : 0;
    if (typeof change.muted === 'boolean') next.MU = change.muted ? 1 : 0;
    if (typeof change.volume === 'number' && Number.isFinite(change.volume)) next.VO = volumeToStep(change.volume, this.spec.volumeSteps);
    if (change.source !== undefined) {
      const { sourceCount } = this.spec;
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= sourceCount) next[this.spec.source] = change.source;
      else complaint = `source must be 1..${sourceCount}, got ${change.source} (zone ${channel})`;
    }
    this.desired.set(channel, next);
    return complaint;
  }

  hardware(zone: number): ZoneState | undefined {
    const status = this.known.get(zone);
    return status && statusToZoneState(status, this.spec.volumeSteps);
  }

  /** Those of `zones` with a desired state that were never read: nothing can be diffed against them. */
  unread(zones: readonly number[]): number[] {
    return zones.filter((zone) => this.desired.has(zone) && !this.known.has(zone));
  }

  /**
   * The next set to send among the given zones (those read on this connection). Amplifiers of this style ignore sets
   * other than PR to an off zone, so those are only sent while the zone is on: power on therefore goes first, power
   * off last (the amp keeps the other settings), and changes to a zone that stays off wait until it is on again.
   * Source goes before volume and mute, so an unmuted zone never plays the previous source and a volume reset by a
   * source switch (reported on one MRC88) is overwritten by the volume that follows. A mute, though, goes before
   * both: a zone asked to go silent (a scene's apply, a zone just powered on with changes waiting) is never heard
   * while its source or volume changes. Amps that take sets while off end in the same state.
   */
  nextWrite(zones: Iterable<number>, held: ReadonlySet<number>): Write<S> | undefined {
    for (const zone of zones) {
      const status = this.known.get(zone);
      const want = this.desired.get(zone);
      if (!status || !want || held.has(zone)) continue;
      if (status.power) {
        if (want.MU === 1 && this.wants(zone, 'MU')) return { zone, attribute: 'MU', value: 1 };
        for (const attribute of this.managed) {
          if (attribute !== 'PR' && this.wants(zone, attribute)) return { zone, attribute, value: want[attribute]! };
        }
      }
      if (this.wants(zone, 'PR')) return { zone, attribute: 'PR', value: want.PR! };
    }
    return undefined;
  }

  /** The amp took our set: this is what it now holds, until the next read or report says otherwise. */
  acknowledge({ zone, attribute, value }: Write<S>): void {
    const status = this.known.get(zone);
    if (!status) return;
    if (attribute === 'PR') status.power = value === 1;
    else if (attribute === 'MU') status.mute = value === 1;
    else if (attribute === 'VO') status.volume = value;
    else status.source = value;
  }

  /** Gives up on a desired value the amp keeps refusing; returns the zone's state to report, if it was ever read. */
  forget({ zone, attribute }: Write<S>): ZoneState | undefined {
    const want = this.desired.get(zone);
    if (want) delete want[attribute];
    return this.known.has(zone) ? this.reported(zone) : undefined;
  }

  /**
   * Takes in one status line. `sync` (the first read of a zone on this connection) only learns the hardware: the
   * desired state is pushed over it. `update` (a poll reply, an activity report) adopts changes nobody here asked for
   * (keypads) and returns the zone's new state when there is such a change, to be reported. Read-backs of our own
   * sets match what acknowledge() recorded, so they are never news.
   */
  learn(status: Z, mode: 'sync' | 'update'): ZoneState | undefined {
    const zone = status.zone;
    const before = this.known.get(zone);
    this.known.set(zone, { ...status });
    if (!before || mode === 'sync') return undefined;
    const want = this.desired.get(zone);
    let changed = false;
    for (const attribute of this.managed) {
      const was = this.value(before, attribute);
      const now = this.value(status, attribute);
      if (now === was) continue;
      // A change we still have to write (recorded while this read was on the wire) is newer than the read: the
      // read must neither report it nor overwrite it.
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
    const state = statusToZoneState(this.known.get(zone)!, this.spec.volumeSteps);
    const want: Record<string, number | undefined> = this.desired.get(zone) ?? {};
    if (want.PR !== undefined) state.power = want.PR === 1;
    if (want.MU !== undefined) state.muted = want.MU === 1;
    if (want.VO !== undefined) state.volume = stepToVolume(want.VO, this.spec.volumeSteps);
    const source = want[this.spec.source];
    if (source !== undefined) state.source = source;
    return state;
  }

  /** A managed attribute's wire value in a status line. */
  private value(status: StatusFields, attribute: Managed<S>): number {
    if (attribute === 'PR') return status.power ? 1 : 0;
    if (attribute === 'MU') return status.mute ? 1 : 0;
    if (attribute === 'VO') return status.volume;
    return status.source;
  }

  /** Whether a desired attribute still differs from what the hardware has. */
  private wants(zone: number, attribute: Managed<S>): boolean {
    const want = this.desired.get(zone)?.[attribute];
    const status = this.known.get(zone);
    return want !== undefined && status !== undefined && want !== this.value(status, attribute);
  }
}
