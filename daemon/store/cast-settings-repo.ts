// The rooms that wake for a cast, per player: whether an admin chose them (else the zones attached when the cast
// starts), which, and after how many minutes the woken zones power off once the cast ends. Read at a cast's start
// and end and by the API: straight from SQLite.
import type { Db } from './db.js';
import { preparedOnUse } from './statements.js';

export interface CastSettingsRow {
  player_id: string;
  wake_chosen: 0 | 1;
  off_after_minutes: number | null;
}

export interface CastWakeZoneRow {
  player_id: string;
  zone_id: string;
}

/** A player's cast settings: the chosen zones (null: those attached at the cast's start) and the power-off delay. */
export interface CastSettings {
  wakeZoneIds: string[] | null;
  offAfterMinutes: number | null;
}

export const DEFAULT_CAST_SETTINGS: CastSettings = { wakeZoneIds: null, offAfterMinutes: null };

export class CastSettingsRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = preparedOnUse({
      settings: () =>
        db.prepare('SELECT player_id, wake_chosen, off_after_minutes FROM player_cast_settings WHERE player_id = ?'),
      zones: () => db.prepare('SELECT zone_id FROM player_cast_wake_zones WHERE player_id = ? ORDER BY zone_id'),
      upsert: () =>
        db.prepare(
          `INSERT INTO player_cast_settings (player_id, wake_chosen, off_after_minutes)
         VALUES (@player_id, @wake_chosen, @off_after_minutes)
         ON CONFLICT (player_id) DO UPDATE SET wake_chosen = excluded.wake_chosen,
           off_after_minutes = excluded.off_after_minutes`,
        ),
      clearZones: () => db.prepare('DELETE FROM player_cast_wake_zones WHERE player_id = ?'),
      addZone: () => db.prepare('INSERT INTO player_cast_wake_zones (player_id, zone_id) VALUES (?, ?)'),
      reset: () => db.prepare('DELETE FROM player_cast_settings WHERE player_id = ?'),
    });
  }

  /** The player's settings; the defaults when none were stored. */
  of(playerId: string): CastSettings {
    const row = this.s.settings.get(playerId) as CastSettingsRow | undefined;
    if (!row) return DEFAULT_CAST_SETTINGS;
    const zones = (this.s.zones.all(playerId) as Array<{ zone_id: string }>).map((z) => z.zone_id);
    return { wakeZoneIds: row.wake_chosen === 1 ? zones : null, offAfterMinutes: row.off_after_minutes };
  }

  /** Stores the player's settings whole (inside the caller's transaction); the defaults leave no row. */
  set(playerId: string, settings: CastSettings): void {
    this.s.clearZones.run(playerId);
    if (settings.wakeZoneIds === null && settings.offAfterMinutes === null) {
      this.s.reset.run(playerId);
      return;
    }
    this.s.upsert.run({
      player_id: playerId,
      wake_chosen: settings.wakeZoneIds === null ? 0 : 1,
      off_after_minutes: settings.offAfterMinutes,
    });
    for (const zoneId of settings.wakeZoneIds ?? []) this.s.addZone.run(playerId, zoneId);
  }
}
