// Zones: the amplifier outputs as each caller sees them; the admin's settings and deletion; volume, mute and power
// under the volume rule, each operation checking its caller once, where it loads the zone.
import type { ZoneState } from '../../../drivers/driver.js';
import type { ZoneRow } from '../../store/audio-repo.js';
import type { Caller, DomainEvent, ZoneView } from '../shared/index.js';
import { conflict, invalid, requireAdmin, visibleZones } from '../shared/index.js';
import { refOf } from './amplifiers.js';
import type { AudioParts } from './audio-parts.js';
import { limitsOf, newZoneRow, zonesChangedEvent, zoneViewNow } from './audio-views.js';
import type { Skipped } from './availability.js';
import { effectiveVolume, requestedVolume, type VolumeRequest } from './volume-rule.js';
import { checkToneChange, knownTone, toneColumns, toneDiffers, toneViewOf } from './zone-tone.js';

/** What a change of a zone's settings naming none of them is told (the REST schema says the same). */
export const ZONE_SETTINGS_NONE = 'send at least one of "name", "maxVolume" and "turnOnVolume"';

export class ZonesService {
  constructor(private readonly parts: AudioParts) {}

  list(caller: Caller): ZoneView[] {
    return visibleZones(caller, this.parts.repo.zones()).map((zone) => this.view(zone, caller));
  }

  get(caller: Caller, id: string): ZoneView {
    return this.view(this.parts.lookup.zoneToSee(caller, id), caller);
  }

  create(
    caller: Caller,
    input: { name: string; output: { amplifier?: string; driver?: string; channel: number } },
  ): ZoneView {
    requireAdmin(caller, 'creating a zone');
    const { store, repo, meta, amplifiers, availability, bus } = this.parts;
    const amplifier = amplifiers.placeOn(input.output, 'output');
    const ref = refOf(amplifier);
    const row = newZoneRow(input.name, ref, input.output.channel, amplifier.driver.hardwareState(input.output.channel));
    store.transaction(() => {
      const taken = repo.zoneByOutput(ref, input.output.channel);
      if (taken) throw conflict(`output ${input.output.channel} already belongs to zone "${taken.name}" (${taken.id})`);
      repo.insertZone(row);
      meta.clearDeleted('zone', ref, input.output.channel);
    });
    availability.record(row, amplifier, amplifier.driver.availability(input.output.channel));
    const view = this.view(row, null);
    bus.publish({ type: 'zone.created', payload: { zone: view } });
    return view;
  }

  /**
   * The zone outputs of the configured amplifiers that have no zone (one deleted, or never described): what a new
   * zone may use. An admin's question, like creating the zone.
   */
  freeOutputs(caller: Caller): Array<{ amplifier: string; driver: string; channel: number }> {
    requireAdmin(caller, 'listing free zone outputs');
    const { repo, amplifiers } = this.parts;
    return amplifiers.list.flatMap((amplifier) =>
      amplifier.driver
        .describe()
        .zones.map((z) => z.channel)
        .filter((channel) => !repo.zoneByOutput(refOf(amplifier), channel))
        .sort((a, b) => a - b)
        .map((channel) => ({ amplifier: amplifier.name, driver: amplifier.driver.name, channel })),
    );
  }

  /**
   * An admin's settings of a zone: name and volume limits. Lowering maxVolume below the current volume pulls the
   * zone down at once; a turn-on volume above a lowered limit is kept and applied clamped (raising the limit again
   * makes it take effect), but a request that sets a turn-on volume above the limit it leaves is refused. Settings are the
   * admin's data, not a hardware write, so a zone that cannot answer takes them too: its volume is left as it is
   * and held to the new limit once it answers again (or its amplifier is configured again).
   */
  update(
    caller: Caller,
    id: string,
    update: { name?: string; maxVolume?: number; turnOnVolume?: number | null },
  ): ZoneView {
    const { repo, availability, commits, bus } = this.parts;
    const zone = this.parts.lookup.zoneToAdminister(caller, id, 'changing a zone');
    if (update.name === undefined && update.maxVolume === undefined && update.turnOnVolume === undefined) {
      throw invalid(ZONE_SETTINGS_NONE, { body: [ZONE_SETTINGS_NONE] });
    }
    const settings = {
      name: update.name ?? zone.name,
      max_volume: update.maxVolume ?? zone.max_volume,
      turn_on_volume: update.turnOnVolume === undefined ? zone.turn_on_volume : update.turnOnVolume,
    };
    if (update.turnOnVolume != null && update.turnOnVolume > settings.max_volume) {
      const limit = `${Math.round(settings.max_volume * 100)}%`;
      const detail = `"turnOnVolume" must be at most the zone's limit "maxVolume" (${settings.max_volume}, ${limit}), got ${update.turnOnVolume}: lower it or raise the limit`;
      throw invalid(detail, { turnOnVolume: [`must be at most the volume limit, ${limit}`] });
    }
    const limited = { ...zone, ...settings };
    const driver = availability.reachable(zone);
    const next = driver ? { ...limited, volume: effectiveVolume(limitsOf(limited), zone.volume) } : limited;
    const pulledDown = next.volume !== zone.volume;
    void commits.commit(pulledDown ? [{ before: zone, next }] : [], {
      durable: true,
      alongside: () => repo.setZoneSettings(id, settings),
    });
    if (pulledDown) driver!.setZone(zone.output_channel, { volume: next.volume });
    const view = this.view(repo.zone(id)!, null);
    bus.publish({ type: 'zone.updated', payload: { zone: view } });
    return view;
  }

  /** Works for a zone that cannot answer too (one gone for good, or of an amplifier that is not configured). */
  remove(caller: Caller, id: string): void {
    const { store, repo, users, meta, availability, commits, bus } = this.parts;
    const zone = this.parts.lookup.zoneToAdminister(caller, id, 'deleting a zone');
    let dropped: string[] = [];
    const volumes = commits.playerVolumes(zone.player_id ? [zone.player_id] : []);
    let volumeEvents: DomainEvent[] = [];
    let emptiedScenes: string[] = [];
    store.transaction(() => {
      emptiedScenes = repo.deleteZone(id);
      dropped = users.dropAssignmentTarget('zone', id);
      // Remembered so the next start does not recreate the zone from the amplifier's description.
      meta.markDeleted('zone', { key: zone.output_amplifier, driver: zone.output_driver }, zone.output_channel);
      volumeEvents = commits.playerVolumeEvents(volumes);
    });
    availability.forget(id);
    const events: DomainEvent[] = [{ type: 'zone.deleted', payload: { zoneId: id } }];
    if (zone.player_id) events.unshift(zonesChangedEvent(repo, zone.player_id));
    for (const sceneId of emptiedScenes) events.push({ type: 'scene.deleted', payload: { sceneId, zoneIds: [id] } });
    for (const event of [...events, ...volumeEvents]) bus.publish(event);
    if (dropped.length > 0) bus.publish({ type: 'assignments.dropped', payload: { userIds: dropped } });
  }

  /** A zone's volume: an absolute value, or a delta applied to the current one; clamped to its limit. */
  setVolume(caller: Caller, id: string, request: number | VolumeRequest): Promise<void> {
    const zone = this.parts.lookup.zoneToChange(caller, id);
    return this.change(zone, {
      volume: requestedVolume(typeof request === 'number' ? { volume: request } : request, zone.volume),
    });
  }

  setMuted(caller: Caller, id: string, muted: boolean): Promise<void> {
    return this.change(this.parts.lookup.zoneToChange(caller, id), { muted });
  }

  setPower(caller: Caller, id: string, power: boolean): Promise<void> {
    return this.change(this.parts.lookup.zoneToChange(caller, id), { power });
  }

  /**
   * A zone's tone: one or more of bass, treble and balance (-1..1) and loudness, under the same access and ownership
   * rule as its volume. A value off the scale is a 400, a control the zone's amplifier lacks a 409 with its reason, a
   * zone that cannot answer a 409; nothing changes then. Writes land while the amplifier pages (the page still wins
   * there until it ends).
   */
  setTone(caller: Caller, id: string, change: Record<string, unknown>): Promise<void> {
    const { availability, repo, store, bus } = this.parts;
    const zone = this.parts.lookup.zoneToChange(caller, id);
    const driver = availability.driverFor(zone);
    const tone = checkToneChange(zone.name, driver.describe().sound, change);
    const before = toneViewOf(zone, driver);
    // The whole tone the zone shows is stored, so a later read of the controls not written is no change.
    const committed = store.commitSoon(() =>
      repo.setZoneTone(zone.id, toneColumns({ ...knownTone(zone, driver), ...tone })),
    );
    driver.setTone?.(zone.output_channel, tone);
    const after = toneViewOf(repo.zone(zone.id)!, driver);
    if (toneDiffers(before, after))
      bus.publish({ type: 'zone.toneChanged', payload: { zoneId: zone.id, tone: after } });
    return committed;
  }

  /**
   * Powers off every zone the caller may see that is on and returns their ids. Zones that cannot answer are skipped
   * (their last known state is kept) and listed with the reason: those last known to be on.
   */
  async allOff(caller: Caller): Promise<{ zoneIds: string[]; skipped: Skipped[] }> {
    const { availability, commits } = this.parts;
    const on = this.parts.lookup.zonesToChange(caller).filter((zone) => zone.power === 1);
    const skipped = availability.unavailable(on);
    const reachable = skipped.length === 0 ? on : on.filter((zone) => !skipped.some((s) => s.zoneId === zone.id));
    for (const zone of reachable) availability.driverFor(zone).setZone(zone.output_channel, { power: false });
    await commits.commit(reachable.map((zone) => ({ before: zone, next: { ...zone, power: 0 } })));
    return { zoneIds: reachable.map((zone) => zone.id), skipped };
  }

  /** Whether a zone with this id exists (assignment lists name only existing ones). */
  exists(id: string): boolean {
    return this.parts.lookup.exists('zone', id);
  }

  /**
   * Volume, mute or power of a zone its operation loaded for the caller; powering on brings the turn-on volume,
   * powering off ends the sleep timer (ZoneCommits). A zone that cannot answer is a 409 and nothing changes.
   */
  private change(
    zone: Readonly<ZoneRow>,
    change: Partial<Pick<ZoneState, 'volume' | 'muted' | 'power'>>,
  ): Promise<void> {
    const next = { ...zone };
    if (change.muted !== undefined) next.muted = change.muted ? 1 : 0;
    if (change.power !== undefined) next.power = change.power ? 1 : 0;
    next.volume = effectiveVolume(limitsOf(zone), change.volume ?? zone.volume, {
      poweringOn: zone.power === 0 && next.power === 1,
    });
    const sent: Partial<ZoneState> = { ...change };
    if (change.volume !== undefined || next.volume !== zone.volume) sent.volume = next.volume;
    const driver = this.parts.availability.driverFor(zone);
    const committed = this.parts.commits.commit([{ before: zone, next }]);
    driver.setZone(zone.output_channel, sent);
    return committed;
  }

  private view(zone: Readonly<ZoneRow>, caller: Caller | null): ZoneView {
    return zoneViewNow(zone, caller, this.parts.amplifiers, this.parts.availability);
  }
}
