// Loads players and zones for a caller and checks, in the same call, what the operation may do with them: the one
// place an audio operation checks its caller (docs/conventions.md, 8). An operation calls one loader for what it acts
// on, which checks the role once; the other zones it names are loaded by visibility alone.

import type { AudioRepo, PlayerRow, ZoneRow } from '../../store/audio-repo.js';
import type { Caller } from '../shared/index.js';
import {
  canSeePlayer,
  canSeeZone,
  invalid,
  notFound,
  requireAdmin,
  requireWriter,
  visibleZones,
} from '../shared/index.js';
import type { Amplifiers } from './amplifiers.js';
import type { Availability } from './availability.js';

export class AudioLookup {
  constructor(
    private readonly repo: AudioRepo,
    private readonly amplifiers: Amplifiers,
    /** Which zones can take writes now: the pop-free apply skips those that cannot. */
    readonly availability: Availability,
  ) {}

  /** A player to read: one outside the caller's assignments does not exist for it (404). */
  playerToSee(caller: Caller, id: string): PlayerRow {
    return found(this.repo.player(id), canSeePlayer(caller, id), 'player', id);
  }

  /** A player to change: a Viewer is refused (403) before anything is looked up, then as playerToSee. */
  playerToChange(caller: Caller, id: string): PlayerRow {
    requireWriter(caller);
    return this.playerToSee(caller, id);
  }

  /** A player an admin renames or deletes (`what` names the operation in the 403); any player, configured or not. */
  playerToAdminister(caller: Caller, id: string, what: string): PlayerRow {
    requireAdmin(caller, what);
    return found(this.repo.player(id), true, 'player', id);
  }

  zoneToSee(caller: Caller, id: string): ZoneRow {
    return found(this.repo.zone(id), canSeeZone(caller, id), 'zone', id);
  }

  zoneToChange(caller: Caller, id: string): ZoneRow {
    requireWriter(caller);
    return this.zoneToSee(caller, id);
  }

  zoneToAdminister(caller: Caller, id: string, what: string): ZoneRow {
    requireAdmin(caller, what);
    return found(this.repo.zone(id), true, 'zone', id);
  }

  /** Every zone the caller may see, to change (All off): a Viewer is refused. */
  zonesToChange(caller: Caller): readonly ZoneRow[] {
    requireWriter(caller);
    return visibleZones(caller, this.repo.zones());
  }

  /**
   * The zones a body names besides what the operation loaded (its role was checked there); any unknown or invisible
   * id fails the whole request with 400.
   */
  zonesNamed(caller: Caller, zoneIds: string[]): ZoneRow[] {
    const ids = [...new Set(zoneIds)];
    const zones: ZoneRow[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const zone = this.repo.zone(id);
      if (zone && canSeeZone(caller, id)) zones.push(zone);
      else missing.push(id);
    }
    if (missing.length) {
      throw invalid(`unknown zone ids: ${missing.join(', ')}`, {
        zoneIds: [`unknown zone ids: ${missing.join(', ')}`],
      });
    }
    return zones;
  }

  /** Whether an id names an existing player or zone (for assignment lists: no caller involved). */
  exists(kind: 'player' | 'zone', id: string): boolean {
    return kind === 'player' ? this.repo.player(id) !== undefined : this.repo.zone(id) !== undefined;
  }

  /** A player can only feed zones of its own amplifier: its input and the zone's output are on one amplifier. */
  checkSameAmplifier(player: Readonly<PlayerRow>, zones: readonly ZoneRow[]): void {
    const foreign = zones.filter(
      (zone) => zone.output_amplifier !== player.input_amplifier || zone.output_driver !== player.input_driver,
    );
    if (foreign.length === 0) return;
    const nameOf = (key: string, driver: string) => this.amplifiers.nameOf(key, driver);
    const named = foreign
      .map(
        (zone) =>
          `"${zone.name}" (${zone.id}, amplifier "${nameOf(zone.output_amplifier, zone.output_driver)}", driver "${zone.output_driver}")`,
      )
      .join(', ');
    const detail =
      `player "${player.name}" feeds an input of the "${nameOf(player.input_amplifier, player.input_driver)}" amplifier and can only feed zones of that ` +
      `amplifier; these zones belong to another one: ${named}`;
    throw invalid(detail, { zoneIds: [detail] });
  }
}

/** The row, when it exists and the caller may see it; a 404 otherwise (what is not visible does not exist). */
function found<T>(row: T | undefined, visible: boolean, what: 'player' | 'zone', id: string): T {
  if (row === undefined || !visible) throw notFound(`no ${what} with id ${id}`);
  return row;
}
