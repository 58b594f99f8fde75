// The receivers switched on per player: one row per receiver an admin switched on (AirPlay, UPnP/DLNA, Squeezelite),
// with Squeezelite's music server. Read rarely (a switch, the start, a restore): straight from SQLite.
import type { Db } from './db.js';
import { preparedOnUse } from './statements.js';

/**
 * A receiver kind as the table holds it: the table does not check it (migration 10), the receivers' service does,
 * against the drivers' registry; a row may name a kind a later build knew.
 */
export type ReceiverKindColumn = string;

export interface PlayerReceiverRow {
  player_id: string;
  kind: ReceiverKindColumn;
  /** Squeezelite only: its music server, `host` or `host:port`; null: found on the LAN. */
  server: string | null;
}

export class ReceiversRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = preparedOnUse({
      ofPlayer: () => db.prepare('SELECT player_id, kind, server FROM player_receivers WHERE player_id = ?'),
      switchOn: () =>
        db.prepare(
          `INSERT INTO player_receivers (player_id, kind, server) VALUES (@player_id, @kind, @server)
         ON CONFLICT (player_id, kind) DO UPDATE SET server = excluded.server`,
        ),
      switchOff: () => db.prepare('DELETE FROM player_receivers WHERE player_id = ? AND kind = ?'),
    });
  }

  /** The receivers switched on for a player, in no particular order. */
  ofPlayer(playerId: string): PlayerReceiverRow[] {
    return this.s.ofPlayer.all(playerId) as PlayerReceiverRow[];
  }

  /** Switches a receiver on (or changes its server). */
  switchOn(row: PlayerReceiverRow): void {
    this.s.switchOn.run(row);
  }

  /** Switches a receiver off; whether it was on. */
  switchOff(playerId: string, kind: ReceiverKindColumn): boolean {
    return this.s.switchOff.run(playerId, kind).changes > 0;
  }
}
