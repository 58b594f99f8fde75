// A zone's sleep timer as state: set or cancelled by a caller, cleared when the zone goes off, and the power-off when
// it is due. The timers' schedule (one timer for the zone due first) lives in scenes/sleep-timers.ts.

import type { Caller, ZoneView } from '../shared/index.js';
import { conflict, invalid } from '../shared/index.js';
import type { AudioParts } from './audio-parts.js';
import { zoneViewNow } from './audio-views.js';

export class ZoneSleep {
  constructor(private readonly parts: AudioParts) {}

  /**
   * Sets (untilMs, epoch ms) or cancels (null) a zone's sleep timer. Only a zone that is on and can answer can get
   * one: an off zone has nothing to switch off, and one that cannot answer could not be switched off (409). A
   * cancel writes nothing to the amplifier, so it works on any zone. Stored durably, so a timer outlives a restart.
   */
  set(caller: Caller, zoneId: string, untilMs: number | null): ZoneView {
    const { repo, availability, commits, amplifiers } = this.parts;
    const zone = this.parts.lookup.zoneToChange(caller, zoneId);
    if (untilMs !== null) availability.requireZones([zone]);
    if (untilMs !== null && zone.power === 0)
      throw conflict(`zone "${zone.name}" is off: switch it on before setting a sleep timer`);
    if (untilMs !== null && !Number.isFinite(untilMs))
      throw invalid(`a sleep timer needs a finite time, got ${untilMs}`);
    const until = untilMs === null ? null : Math.round(untilMs);
    if (until !== zone.sleep_until)
      void commits.commit([{ before: zone, next: { ...zone, sleep_until: until } }], { durable: true });
    return zoneViewNow(repo.zone(zoneId)!, caller, amplifiers, availability);
  }

  /**
   * A sleep timer is due: powers the zone off if its timer is still set and due at `now` (a cancel may have won).
   * A zone that cannot answer then is not switched off: its timer is cleared and the reason returned (for the log).
   * It is not kept waiting: a power-off landing hours later, whenever the unit answers again, would surprise whoever
   * listens then.
   */
  expired(zoneId: string, now: number): string | undefined {
    const { repo, availability, commits } = this.parts;
    const zone = repo.zone(zoneId);
    if (!zone || zone.sleep_until === null || zone.sleep_until > now) return undefined;
    const reason = availability.zoneReason(zone);
    if (reason !== null) {
      void commits.commit([{ before: zone, next: { ...zone, sleep_until: null } }], { durable: true });
      return reason;
    }
    if (zone.power === 1) availability.driverFor(zone).setZone(zone.output_channel, { power: false });
    void commits.commit([{ before: zone, next: { ...zone, power: 0 } }], { durable: true });
    return undefined;
  }

  /** Every running sleep timer, for scheduling. */
  timers(): { zoneId: string; sleepUntil: number }[] {
    return this.parts.repo
      .zones()
      .filter((zone) => zone.sleep_until !== null)
      .map((zone) => ({ zoneId: zone.id, sleepUntil: zone.sleep_until! }));
  }
}
