// Pure helpers shared by the audio services and the amplifier sync: zone views and the events a change publishes.

import { randomUUID } from 'node:crypto';
import type { AmplifierDriver, ZoneState } from '../../../drivers/driver.js';
import type { AmplifierRef, AudioRepo, ZoneRow } from '../../store/audio-repo.js';
import type { Caller, DomainEvent, EventBus, ZoneView } from '../shared/index.js';
import { zoneFor } from '../shared/index.js';
import type { Amplifiers } from './amplifiers.js';
import type { Availability } from './availability.js';
import type { VolumeLimits } from './volume-rule.js';
import { amplifierStatusOf, toneControlsOf, toneViewOf } from './zone-tone.js';

export function hardwareOf(zone: ZoneRow): ZoneState {
  return { power: zone.power === 1, muted: zone.muted === 1, volume: zone.volume, source: zone.source };
}

export function limitsOf(zone: Readonly<ZoneRow>): VolumeLimits {
  return { maxVolume: zone.max_volume, turnOnVolume: zone.turn_on_volume };
}

/**
 * A zone as the caller sees it (the policy decides); `null` is the unrestricted view events carry. `amplifier` is
 * the configured name of the zone's amplifier; `unavailableReason` why the zone cannot take writes now (null: it can);
 * `driver` its amplifier's driver (none when that amplifier is not configured), which tells its tone controls and status.
 */
export function zoneView(
  zone: ZoneRow,
  caller: Caller | null,
  amplifier: string,
  unavailableReason: string | null,
  driver?: AmplifierDriver,
): ZoneView {
  // describe() builds the driver's zone list: asked once per view, not once per part of it.
  const sound = driver?.describe().sound;
  return zoneFor(caller, {
    id: zone.id,
    name: zone.name,
    volume: zone.volume,
    muted: zone.muted === 1,
    power: zone.power === 1,
    playerId: zone.player_id,
    output: { amplifier, driver: zone.output_driver, channel: zone.output_channel },
    maxVolume: zone.max_volume,
    turnOnVolume: zone.turn_on_volume,
    sleepUntil: zone.sleep_until === null ? null : new Date(zone.sleep_until).toISOString(),
    tone: toneViewOf(zone, driver, sound),
    toneControls: toneControlsOf(sound),
    amplifierStatus: amplifierStatusOf(driver?.hardwareFlags?.(zone.output_channel)),
    available: unavailableReason === null,
    unavailableReason,
  });
}

/** zoneView with the zone's amplifier named as configured and its availability as followed now. */
export function zoneViewNow(
  zone: ZoneRow,
  caller: Caller | null,
  amplifiers: Amplifiers,
  availability: Availability,
): ZoneView {
  const driver = amplifiers.find(zone.output_amplifier, zone.output_driver)?.driver;
  return zoneView(
    zone,
    caller,
    amplifiers.nameOf(zone.output_amplifier, zone.output_driver),
    availability.zoneReason(zone),
    driver,
  );
}

/** Publishes what changed on a zone the listeners care about: power, then mute, then volume. */
export function publishZoneEvents(bus: EventBus, before: Readonly<ZoneRow>, after: Readonly<ZoneRow>): void {
  if (before.power !== after.power)
    bus.publish({ type: 'zone.powerChanged', payload: { zoneId: after.id, power: after.power === 1 } });
  if (before.muted !== after.muted)
    bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: after.id, muted: after.muted === 1 } });
  if (before.volume !== after.volume)
    bus.publish({ type: 'zone.volumeChanged', payload: { zoneId: after.id, volume: after.volume } });
}

export function zonesChangedEvent(repo: AudioRepo, playerId: string): DomainEvent {
  return { type: 'player.zonesChanged', payload: { playerId, zoneIds: repo.zonesOfPlayer(playerId).map((z) => z.id) } };
}

/** Volume a new zone starts at when the amplifier cannot say. */
const NEW_ZONE_VOLUME = 0.3;

/** A row for a new zone, starting from what the amplifier reports for that output (if anything). */
export function newZoneRow(
  name: string,
  amplifier: AmplifierRef,
  channel: number,
  hardware: ZoneState | undefined,
  createdAt = new Date().toISOString(),
): ZoneRow {
  return {
    id: randomUUID(),
    name,
    volume: hardware?.volume ?? NEW_ZONE_VOLUME,
    muted: hardware?.muted ? 1 : 0,
    power: hardware?.power ? 1 : 0,
    source: hardware?.source ?? 1,
    player_id: null,
    output_amplifier: amplifier.key,
    output_driver: amplifier.driver,
    output_channel: channel,
    created_at: createdAt,
    max_volume: 1,
    turn_on_volume: null,
    sleep_until: null,
    tone_bass: null,
    tone_treble: null,
    tone_balance: null,
    tone_loudness: null,
  };
}
