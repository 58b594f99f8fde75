// Loads players and zones for a caller (the policy applied where the data is read) and checks what a route needs:
// one lookup shared by the audio service and the pop-free apply.
import type { Amplifiers } from './amplifiers.js';
import type { Availability } from './availability.js';
import type { AudioRepo, PlayerRow, ZoneRow } from '../../store/audio-repo.js';
import type { Caller } from '../shared/access.js';
import { canSeePlayer, canSeeZone } from '../shared/policy.js';
import { invalid, notFound } from '../shared/errors.js';

export class AudioLookup {
  constructor(
    private readonly repo: AudioRepo,
    private readonly amplifiers: Amplifiers,
    /** Which zones can take writes now: the pop-free apply skips those that cannot. */
    readonly availability: Availability,
  ) {}

  existingPlayer(id: string): PlayerRow {
    const player = this.repo.player(id);
    if (!player) throw notFound(`no player with id ${id}`);
    return player;
  }

  /** Loads a player for a caller: one outside the caller's assignments does not exist for it. */
  visiblePlayer(caller: Caller, id: string): PlayerRow {
    const player = this.repo.player(id);
    if (!player || !canSeePlayer(caller, id)) throw notFound(`no player with id ${id}`);
    return player;
  }

  visibleZone(caller: Caller, id: string): ZoneRow {
    const zone = this.repo.zone(id);
    if (!zone || !canSeeZone(caller, id)) throw notFound(`no zone with id ${id}`);
    return zone;
  }

  /** All zones named in a body; any unknown or invisible id fails the whole request with 400. */
  zonesOfBody(caller: Caller, zoneIds: string[]): ZoneRow[] {
    const ids = [...new Set(zoneIds.map((id) => id.toLowerCase()))];
    const zones: ZoneRow[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const zone = this.repo.zone(id);
      if (zone && canSeeZone(caller, id)) zones.push(zone);
      else missing.push(id);
    }
    if (missing.length) {
      throw invalid(`unknown zone ids: ${missing.join(', ')}`, { zoneIds: [`unknown zone ids: ${missing.join(', ')}`] });
    }
    return zones;
  }

  /** A player can only feed zones of its own amplifier: its input and the zone's output are on one amplifier. */
  checkSameAmplifier(player: Readonly<PlayerRow>, zones: readonly ZoneRow[]): void {
    const foreign = zones.filter((zone) => zone.output_amplifier !== player.input_amplifier || zone.output_driver !== player.input_driver);
    if (foreign.length === 0) return;
    const nameOf = (key: string, driver: string) => this.amplifiers.nameOf(key, driver);
    const named = foreign
      .map((zone) => `"${zone.name}" (${zone.id}, amplifier "${nameOf(zone.output_amplifier, zone.output_driver)}", driver "${zone.output_driver}")`)
      .join(', ');
    const detail =
      `player "${player.name}" feeds an input of the "${nameOf(player.input_amplifier, player.input_driver)}" amplifier and can only feed zones of that ` +
      `amplifier; these zones belong to another one: ${named}`;
    throw invalid(detail, { zoneIds: [detail] });
  }
}
