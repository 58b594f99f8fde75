// The volume rule every path goes through: a zone never plays above its limit, and powers on at its turn-on volume.
import { invalid } from '../shared/index.js';

/** A zone's speaker-safety settings, as stored. */
export interface VolumeLimits {
  /** The most the zone may play at (0..1). */
  maxVolume: number;
  /** The volume the zone starts at whenever it powers on, if set (applied clamped to maxVolume). */
  turnOnVolume: number | null;
}

/**
 * Computed volumes (a group's proportional change, an average, a delta) are rounded to this many steps of full
 * scale: far finer than any amplifier (Monoprice has 38 steps), coarse enough that 0.8 × 0.5 reads back as 0.4.
 */
const COMPUTED_RESOLUTION = 1_000_000;

/** Rounds a computed volume so float noise never reaches the API or the events. */
export function roundVolume(volume: number): number {
  return Math.round(volume * COMPUTED_RESOLUTION) / COMPUTED_RESOLUTION;
}

/** Clamps a fraction into 0..1 (what a relative change lands on before the zone's own limit applies). */
export function clampUnit(volume: number): number {
  return Math.min(1, Math.max(0, volume));
}

/**
 * THE RULE. The volume a zone ends at after a change:
 * - powering on (off → on) without an explicit volume: the turn-on volume when one is set;
 * - otherwise the requested volume;
 * in both cases at most maxVolume and at least 0. Requests above the limit are clamped, not refused.
 */
export function effectiveVolume(
  limits: VolumeLimits,
  requested: number,
  transition: { poweringOn?: boolean; explicit?: boolean } = {},
): number {
  const wanted =
    transition.poweringOn && !transition.explicit && limits.turnOnVolume !== null ? limits.turnOnVolume : requested;
  return Math.max(0, Math.min(wanted, limits.maxVolume));
}

/** What a volume request asks for: an absolute value, or a change of the daemon's current value. */
export type VolumeRequest = { volume: number } | { delta: number };

/** The value a request lands on from `current`, before the zone limits apply. */
export function requestedVolume(request: VolumeRequest, current: number): number {
  return 'volume' in request ? request.volume : clampUnit(roundVolume(current + request.delta));
}

/** What a volume request with both or neither of `volume` and `delta` is told (the REST schema says the same). */
export const VOLUME_REQUEST_FIELDS = {
  several: 'send either "volume" (0 to 1) or "delta" (-1 to 1), not both',
  none: '"volume" (a number from 0 to 1) or "delta" (a change from -1 to 1) is required',
};

/** Exactly one of `volume` and `delta`: a body with both or neither is refused before anything changes. */
export function volumeRequestOf(body: { volume?: number; delta?: number }): VolumeRequest {
  const hasVolume = body.volume !== undefined;
  const hasDelta = body.delta !== undefined;
  if (hasVolume === hasDelta) {
    const detail = hasVolume ? VOLUME_REQUEST_FIELDS.several : VOLUME_REQUEST_FIELDS.none;
    throw invalid(detail, { volume: [detail], delta: [detail] });
  }
  return hasVolume ? { volume: body.volume! } : { delta: body.delta! };
}

/** Proportional group change: the factor that moves the zones' average to `target`; null when the average is 0. */
export function groupFactor(volumes: readonly number[], target: number): number | null {
  const average = averageVolume(volumes);
  return average === undefined || average === 0 ? null : target / average;
}

/** The average of some volumes (rounded like any computed volume); undefined for none. */
export function averageVolume(volumes: readonly number[]): number | undefined {
  if (volumes.length === 0) return undefined;
  let sum = 0;
  for (const volume of volumes) sum += volume;
  return roundVolume(sum / volumes.length);
}

/** The average volume of a player's zones among `zones` (rounded like any computed volume); undefined for none. */
export function averageZoneVolume(
  zones: readonly { player_id: string | null; volume: number }[],
  playerId: string,
): number | undefined {
  let sum = 0;
  let count = 0;
  for (const zone of zones) {
    if (zone.player_id !== playerId) continue;
    sum += zone.volume;
    count++;
  }
  return count === 0 ? undefined : roundVolume(sum / count);
}
