// Which stream player plays an announcement on which zones: one per amplifier (a player only feeds zones of its own
// amplifier), among the players the caller may use, preferring one that is idle and feeds no other room, so that as
// little as possible is interrupted.
import type { PlayerRow, ZoneRow } from '../../store/audio-repo.js';
import { type Caller, canSeePlayer, canSeeZone, isAdmin } from '../shared/index.js';
import type { ZoneReason } from './announcement-view.js';

/** One stream player and the zones it announces on. */
export interface Leg {
  playerId: string;
  zoneIds: string[];
  /** Zones the player feeds that are not announced on: muted while it announces, so they do not hear it. */
  muted: string[];
}

export interface LegChoice {
  legs: Leg[];
  /** Zones no stream player can reach, with why. */
  skipped: ZoneReason[];
}

export interface LegSources {
  players(): readonly Readonly<PlayerRow>[];
  zonesOfPlayer(playerId: string): readonly Readonly<ZoneRow>[];
  /** Whether the player's engine is up and idle enough to be asked (an announcement needs a running MPD). */
  up(playerId: string): boolean;
  /** Whether `up` asks for a running MPD (the reason a zone is skipped says so). */
  running: boolean;
  playing(playerId: string): boolean;
  /** The configured name of an amplifier, for the reason a zone is skipped. */
  amplifierName(key: string, driver: string): string;
}

const amplifierOf = (row: { key: string; driver: string }) => `${row.key}\u0000${row.driver}`;

/**
 * Picks a player per amplifier among the zones: the one asked for when it is a candidate, else an idle one feeding no
 * other room, else an idle one, else the one feeding the fewest other rooms. A non-admin may only use players assigned
 * to it (the transport of any other is another user's) whose other rooms it may see (it mutes them for the length of
 * the announcement).
 */
export function chooseLegs(
  caller: Caller,
  zones: readonly Readonly<ZoneRow>[],
  requested: string | undefined,
  sources: LegSources,
): LegChoice {
  const groups = new Map<string, Array<Readonly<ZoneRow>>>();
  for (const zone of zones) {
    const key = amplifierOf({ key: zone.output_amplifier, driver: zone.output_driver });
    const group = groups.get(key);
    if (group) group.push(zone);
    else groups.set(key, [zone]);
  }
  const announced = new Set(zones.map((zone) => zone.id));
  const legs: Leg[] = [];
  const skipped: ZoneReason[] = [];
  for (const [key, group] of groups) {
    const candidates = sources
      .players()
      .filter((player) => player.output_kind !== null && canSeePlayer(caller, player.id))
      .filter(
        (player) =>
          amplifierOf({ key: player.input_amplifier, driver: player.input_driver }) === key && sources.up(player.id),
      )
      .map((player) => ({
        player,
        others: sources
          .zonesOfPlayer(player.id)
          .filter((zone) => !announced.has(zone.id))
          .map((zone) => zone.id),
      }))
      .filter(({ others }) => others.every((id) => canSeeZone(caller, id)));
    const score = ({ player, others }: (typeof candidates)[number]) =>
      (sources.playing(player.id) ? 2 : 0) + (others.length > 0 ? 1 : 0) + others.length / 1000;
    const chosen =
      candidates.find(({ player }) => player.id === requested) ??
      [...candidates].sort((a, b) => score(a) - score(b))[0];
    if (!chosen) {
      const first = group[0]!;
      const amplifier = sources.amplifierName(first.output_amplifier, first.output_driver);
      const runs = sources.running ? ' that runs' : '';
      const reason = isAdmin(caller)
        ? `no stream player${runs} feeds amplifier "${amplifier}"`
        : `no stream player assigned to you${runs} feeds amplifier "${amplifier}" without also feeding rooms outside your assignments`;
      for (const zone of group) skipped.push({ zoneId: zone.id, reason });
      continue;
    }
    legs.push({ playerId: chosen.player.id, zoneIds: group.map((zone) => zone.id), muted: chosen.others });
  }
  return { legs, skipped };
}
