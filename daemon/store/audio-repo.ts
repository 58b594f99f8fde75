// Players, zones and input devices: the rows that mirror the amplifier.
import type { Db } from './db.js';

export interface PlayerRow {
  id: string;
  name: string;
  volume: number;
  input_driver: string;
  input_channel: number;
  created_at: string;
}

export interface ZoneRow {
  id: string;
  name: string;
  volume: number;
  muted: number;
  power: number;
  source: number;
  player_id: string | null;
  output_driver: string;
  output_channel: number;
  created_at: string;
}

export interface InputDeviceRow {
  id: string;
  name: string;
  kind: string;
  input_driver: string;
  input_channel: number;
  is_favorite: number;
  created_at: string;
}

export class AudioRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insertPlayer: db.prepare(
        `INSERT INTO players (id, name, volume, input_driver, input_channel, created_at)
         VALUES (@id, @name, @volume, @input_driver, @input_channel, @created_at)`,
      ),
      player: db.prepare('SELECT * FROM players WHERE id = ?'),
      players: db.prepare('SELECT * FROM players ORDER BY created_at, name'),
      playerByInput: db.prepare('SELECT * FROM players WHERE input_driver = ? AND input_channel = ?'),
      setPlayerVolume: db.prepare('UPDATE players SET volume = ? WHERE id = ?'),
      renamePlayer: db.prepare('UPDATE players SET name = ? WHERE id = ?'),
      renameZone: db.prepare('UPDATE zones SET name = ? WHERE id = ?'),
      deletePlayer: db.prepare('DELETE FROM players WHERE id = ?'),
      insertZone: db.prepare(
        `INSERT INTO zones (id, name, volume, muted, power, source, player_id, output_driver, output_channel, created_at)
         VALUES (@id, @name, @volume, @muted, @power, @source, @player_id, @output_driver, @output_channel, @created_at)`,
      ),
      zone: db.prepare('SELECT * FROM zones WHERE id = ?'),
      zones: db.prepare('SELECT * FROM zones ORDER BY output_driver, output_channel'),
      zonesOfPlayer: db.prepare('SELECT * FROM zones WHERE player_id = ? ORDER BY output_channel'),
      zoneByOutput: db.prepare('SELECT * FROM zones WHERE output_driver = ? AND output_channel = ?'),
      updateZone: db.prepare(
        `UPDATE zones SET volume = @volume, muted = @muted, power = @power, source = @source, player_id = @player_id
         WHERE id = @id`,
      ),
      deleteZone: db.prepare('DELETE FROM zones WHERE id = ?'),
      insertInput: db.prepare(
        `INSERT INTO input_devices (id, name, kind, input_driver, input_channel, is_favorite, created_at)
         VALUES (@id, @name, @kind, @input_driver, @input_channel, @is_favorite, @created_at)`,
      ),
      input: db.prepare('SELECT * FROM input_devices WHERE id = ?'),
      inputs: db.prepare('SELECT * FROM input_devices ORDER BY input_driver, input_channel'),
      inputByChannel: db.prepare('SELECT * FROM input_devices WHERE input_driver = ? AND input_channel = ?'),
      setInputFavorite: db.prepare('UPDATE input_devices SET is_favorite = ? WHERE id = ?'),
      deleteInput: db.prepare('DELETE FROM input_devices WHERE id = ?'),
    };
  }

  insertPlayer(row: PlayerRow): void {
    this.s.insertPlayer.run(row);
  }
  player(id: string): PlayerRow | undefined {
    return this.s.player.get(id) as PlayerRow | undefined;
  }
  players(): PlayerRow[] {
    return this.s.players.all() as PlayerRow[];
  }
  playerByInput(driver: string, channel: number): PlayerRow | undefined {
    return this.s.playerByInput.get(driver, channel) as PlayerRow | undefined;
  }
  setPlayerVolume(id: string, volume: number): void {
    this.s.setPlayerVolume.run(volume, id);
  }
  renamePlayer(id: string, name: string): void {
    this.s.renamePlayer.run(name, id);
  }
  renameZone(id: string, name: string): void {
    this.s.renameZone.run(name, id);
  }
  deletePlayer(id: string): void {
    this.s.deletePlayer.run(id);
  }

  insertZone(row: ZoneRow): void {
    this.s.insertZone.run(row);
  }
  zone(id: string): ZoneRow | undefined {
    return this.s.zone.get(id) as ZoneRow | undefined;
  }
  zones(): ZoneRow[] {
    return this.s.zones.all() as ZoneRow[];
  }
  zonesOfPlayer(playerId: string): ZoneRow[] {
    return this.s.zonesOfPlayer.all(playerId) as ZoneRow[];
  }
  zoneByOutput(driver: string, channel: number): ZoneRow | undefined {
    return this.s.zoneByOutput.get(driver, channel) as ZoneRow | undefined;
  }
  updateZone(row: Pick<ZoneRow, 'id' | 'volume' | 'muted' | 'power' | 'source' | 'player_id'>): void {
    this.s.updateZone.run({
      id: row.id,
      volume: row.volume,
      muted: row.muted,
      power: row.power,
      source: row.source,
      player_id: row.player_id,
    });
  }
  deleteZone(id: string): void {
    this.s.deleteZone.run(id);
  }

  insertInput(row: InputDeviceRow): void {
    this.s.insertInput.run(row);
  }
  input(id: string): InputDeviceRow | undefined {
    return this.s.input.get(id) as InputDeviceRow | undefined;
  }
  inputs(): InputDeviceRow[] {
    return this.s.inputs.all() as InputDeviceRow[];
  }
  inputByChannel(driver: string, channel: number): InputDeviceRow | undefined {
    return this.s.inputByChannel.get(driver, channel) as InputDeviceRow | undefined;
  }
  setInputFavorite(id: string, isFavorite: boolean): void {
    this.s.setInputFavorite.run(isFavorite ? 1 : 0, id);
  }
  deleteInput(id: string): void {
    this.s.deleteInput.run(id);
  }
}
