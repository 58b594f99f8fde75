// The SQL of backup and restore: every configuration row read in one snapshot, and all of them replaced at once.

import type { InputDeviceRow, PlayerRow, ZoneRow } from './audio-repo.js';
import type { CastSettingsRow, CastWakeZoneRow } from './cast-settings-repo.js';
import type { Db, Store } from './db.js';
import type { PlaylistSummaryRow, TrackRow } from './playlists-repo.js';
import type { PlayerReceiverRow } from './receivers-repo.js';
import type { UserRow } from './users-repo.js';

/** A zone as a backup carries it: every column but the sleep timer, which belongs to the moment. */
export type ZoneConfigRow = Omit<ZoneRow, 'sleep_until'>;

export interface AssignmentRow {
  user_id: string;
  kind: 'player' | 'zone';
  target_id: string;
}

export interface SceneRow {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface SceneZoneRow {
  scene_id: string;
  zone_id: string;
  power: number;
  volume: number;
  muted: number;
  player_id: string | null;
  tone_bass: number | null;
  tone_treble: number | null;
  tone_balance: number | null;
  tone_loudness: number | null;
}

export interface MetaRow {
  key: string;
  value: string;
}

/** Everything a backup holds, as rows. Users carry their key material only where it is to be written. */
export interface ConfigurationRows {
  users: UserRow[];
  assignments: AssignmentRow[];
  players: PlayerRow[];
  /** The receivers switched on per player. */
  playerReceivers: PlayerReceiverRow[];
  /** The rooms that wake for a cast, per player that has settings, and the zones chosen. */
  castSettings: CastSettingsRow[];
  castWakeZones: CastWakeZoneRow[];
  zones: ZoneConfigRow[];
  inputDevices: InputDeviceRow[];
  playlists: PlaylistSummaryRow[];
  tracks: TrackRow[];
  scenes: SceneRow[];
  sceneZones: SceneZoneRow[];
  /** Device identity and settings: the `meta` table (UDN, channels an admin deleted). */
  meta: MetaRow[];
}

export class BackupRepo {
  private readonly s;
  private readonly snapshot: (fn: () => ConfigurationRows) => ConfigurationRows;

  constructor(private readonly store: Store) {
    const db: Db = store.db;
    this.s = {
      users: db.prepare('SELECT * FROM users ORDER BY created_at, username'),
      assignments: db.prepare('SELECT user_id, kind, target_id FROM assignments ORDER BY user_id, kind, target_id'),
      players: db.prepare(
        'SELECT id, name, volume, input_amplifier, input_driver, input_channel, created_at, output_kind, output_target FROM players ORDER BY created_at, id',
      ),
      playerReceivers: db.prepare('SELECT player_id, kind, server FROM player_receivers ORDER BY player_id, kind'),
      castSettings: db.prepare(
        'SELECT player_id, wake_chosen, off_after_minutes FROM player_cast_settings ORDER BY player_id',
      ),
      castWakeZones: db.prepare('SELECT player_id, zone_id FROM player_cast_wake_zones ORDER BY player_id, zone_id'),
      zones: db.prepare(
        `SELECT id, name, volume, muted, power, source, player_id, output_amplifier, output_driver, output_channel, created_at,
                max_volume, turn_on_volume, tone_bass, tone_treble, tone_balance, tone_loudness
         FROM zones ORDER BY output_amplifier, output_driver, output_channel`,
      ),
      inputs: db.prepare('SELECT * FROM input_devices ORDER BY input_amplifier, input_driver, input_channel'),
      playlists: db.prepare('SELECT * FROM playlists ORDER BY created_at, name, id'),
      tracksOf: db.prepare('SELECT * FROM tracks WHERE playlist_id = ? ORDER BY position'),
      // The undo slot is runtime state: what the last apply replaced on this appliance.
      scenes: db.prepare(
        `SELECT id, name, created_at, updated_at FROM scenes WHERE kind = 'scene' ORDER BY name COLLATE NOCASE, id`,
      ),
      sceneZones: db.prepare(
        `SELECT sz.scene_id, sz.zone_id, sz.power, sz.volume, sz.muted, sz.player_id, sz.tone_bass, sz.tone_treble, sz.tone_balance, sz.tone_loudness
         FROM scene_zones sz JOIN scenes s ON s.id = sz.scene_id WHERE s.kind = 'scene' ORDER BY sz.scene_id, sz.zone_id`,
      ),
      meta: db.prepare('SELECT key, value FROM meta ORDER BY key'),
      keyMaterial: db.prepare('SELECT id, password_hash, key_digest, key_nonce, key_box FROM users'),
      // Children before parents, although the foreign keys would cascade: every table is emptied explicitly.
      clear: [
        'DELETE FROM scene_zones',
        'DELETE FROM scenes',
        'DELETE FROM tracks',
        'DELETE FROM playlists',
        'DELETE FROM sessions',
        'DELETE FROM trusted_addresses',
        'DELETE FROM assignments',
        'DELETE FROM users',
        'DELETE FROM player_cast_wake_zones',
        'DELETE FROM player_cast_settings',
        'DELETE FROM zones',
        'DELETE FROM player_receivers',
        'DELETE FROM players',
        'DELETE FROM input_devices',
        'DELETE FROM meta',
      ].map((sql) => db.prepare(sql)),
      insertUser: db.prepare(
        `INSERT INTO users (id, username, role, password_hash, is_enabled, created_at, key_digest, key_nonce, key_box, password_change_required)
         VALUES (@id, @username, @role, @password_hash, @is_enabled, @created_at, @key_digest, @key_nonce, @key_box, @password_change_required)`,
      ),
      insertAssignment: db.prepare(
        'INSERT INTO assignments (user_id, kind, target_id) VALUES (@user_id, @kind, @target_id)',
      ),
      insertPlayer: db.prepare(
        `INSERT INTO players (id, name, volume, input_amplifier, input_driver, input_channel, created_at, output_kind, output_target)
         VALUES (@id, @name, @volume, @input_amplifier, @input_driver, @input_channel, @created_at, @output_kind, @output_target)`,
      ),
      insertPlayerReceiver: db.prepare(
        'INSERT INTO player_receivers (player_id, kind, server) VALUES (@player_id, @kind, @server)',
      ),
      insertCastSettings: db.prepare(
        `INSERT INTO player_cast_settings (player_id, wake_chosen, off_after_minutes)
         VALUES (@player_id, @wake_chosen, @off_after_minutes)`,
      ),
      insertCastWakeZone: db.prepare(
        'INSERT INTO player_cast_wake_zones (player_id, zone_id) VALUES (@player_id, @zone_id)',
      ),
      insertZone: db.prepare(
        `INSERT INTO zones (id, name, volume, muted, power, source, player_id, output_amplifier, output_driver, output_channel, created_at,
                            max_volume, turn_on_volume, sleep_until, tone_bass, tone_treble, tone_balance, tone_loudness)
         VALUES (@id, @name, @volume, @muted, @power, @source, @player_id, @output_amplifier, @output_driver, @output_channel, @created_at,
                 @max_volume, @turn_on_volume, NULL, @tone_bass, @tone_treble, @tone_balance, @tone_loudness)`,
      ),
      insertInput: db.prepare(
        `INSERT INTO input_devices (id, name, kind, input_amplifier, input_driver, input_channel, is_favorite, created_at)
         VALUES (@id, @name, @kind, @input_amplifier, @input_driver, @input_channel, @is_favorite, @created_at)`,
      ),
      insertPlaylist: db.prepare(
        `INSERT INTO playlists (id, name, is_favorite, created_at, track_count, duration_ms)
         VALUES (@id, @name, @is_favorite, @created_at, @track_count, @duration_ms)`,
      ),
      insertScene: db.prepare(
        `INSERT INTO scenes (id, name, kind, created_at, updated_at) VALUES (@id, @name, 'scene', @created_at, @updated_at)`,
      ),
      insertSceneZone: db.prepare(
        `INSERT INTO scene_zones (scene_id, zone_id, power, volume, muted, player_id, tone_bass, tone_treble, tone_balance, tone_loudness)
         VALUES (@scene_id, @zone_id, @power, @volume, @muted, @player_id, @tone_bass, @tone_treble, @tone_balance, @tone_loudness)`,
      ),
      insertMeta: db.prepare('INSERT INTO meta (key, value) VALUES (@key, @value)'),
      // The tables checked after a restore wrote them; tracks are copied by a join that cannot leave one dangling,
      // and checking them would read every track in one statement.
      brokenReferences: [
        'users',
        'sessions',
        'assignments',
        'trusted_addresses',
        'players',
        'player_receivers',
        'player_cast_settings',
        'player_cast_wake_zones',
        'zones',
        'scene_zones',
      ].map((table) => db.prepare(`PRAGMA foreign_key_check(${table})`)),
      clearTracksSlice: db.prepare('DELETE FROM tracks WHERE rowid IN (SELECT rowid FROM tracks LIMIT ?)'),
    };
    // A read transaction: the rows of all tables come from one moment, even with writes in between turns.
    this.snapshot = db.transaction((fn: () => ConfigurationRows) => fn()).deferred;
  }

  /**
   * Every configuration row but the tracks, read in one transaction (device state of the open group commit
   * included); a playlist's tracks come from tracksOf, a playlist at a time, so no read holds them all.
   */
  readHead(): ConfigurationRows {
    this.store.flushBatch();
    return this.snapshot(() => ({
      users: this.s.users.all() as UserRow[],
      assignments: this.s.assignments.all() as AssignmentRow[],
      players: this.s.players.all() as PlayerRow[],
      playerReceivers: this.s.playerReceivers.all() as PlayerReceiverRow[],
      castSettings: this.s.castSettings.all() as CastSettingsRow[],
      castWakeZones: this.s.castWakeZones.all() as CastWakeZoneRow[],
      zones: this.s.zones.all() as ZoneConfigRow[],
      inputDevices: this.s.inputs.all() as InputDeviceRow[],
      playlists: this.s.playlists.all() as PlaylistSummaryRow[],
      tracks: [],
      scenes: this.s.scenes.all() as SceneRow[],
      sceneZones: this.s.sceneZones.all() as SceneZoneRow[],
      meta: this.s.meta.all() as MetaRow[],
    }));
  }

  /** One playlist's tracks in order, in one read (at most limits.tracksPerPlaylist rows). */
  tracksOf(playlistId: string): TrackRow[] {
    return this.s.tracksOf.all(playlistId) as TrackRow[];
  }

  /** The `meta` table now (device identity and settings). */
  meta(): MetaRow[] {
    return this.s.meta.all() as MetaRow[];
  }

  /** Each stored user's password hash and sealed API key, by id (a restore without secrets keeps them). */
  keyMaterial(): Map<string, Pick<UserRow, 'password_hash' | 'key_digest' | 'key_nonce' | 'key_box'>> {
    const rows = this.s.keyMaterial.all() as Array<
      Pick<UserRow, 'id' | 'password_hash' | 'key_digest' | 'key_nonce' | 'key_box'>
    >;
    return new Map(rows.map(({ id, ...material }) => [id, material]));
  }

  /** Inside a restore's transaction: deletes up to `limit` tracks; returns how many it deleted (0: none left). */
  clearTracksSlice(limit: number): number {
    if (!this.store.db.inTransaction) throw new Error('BackupRepo.clearTracksSlice must run inside a transaction');
    return this.s.clearTracksSlice.run(limit).changes;
  }

  /**
   * Replaces the whole configuration but the tracks with `rows` (`rows.tracks` is not read: a restore copies them
   * from its staging in slices, after clearing them in slices); sessions, trusted addresses, the undo slot and sleep
   * timers go. Runs inside the caller's transaction: a failure of any statement leaves the database as it was.
   */
  replaceHead(rows: ConfigurationRows): void {
    if (!this.store.db.inTransaction) throw new Error('BackupRepo.replaceHead must run inside a transaction');
    for (const statement of this.s.clear) statement.run();
    for (const row of rows.users) this.s.insertUser.run(row);
    for (const row of rows.assignments) this.s.insertAssignment.run(row);
    for (const row of rows.players) this.s.insertPlayer.run(row);
    for (const row of rows.playerReceivers) this.s.insertPlayerReceiver.run(row);
    for (const row of rows.zones) this.s.insertZone.run(row);
    for (const row of rows.castSettings) this.s.insertCastSettings.run(row);
    for (const row of rows.castWakeZones) this.s.insertCastWakeZone.run(row);
    for (const row of rows.inputDevices) this.s.insertInput.run(row);
    for (const row of rows.playlists) this.s.insertPlaylist.run(row);
    for (const row of rows.scenes) this.s.insertScene.run(row);
    for (const row of rows.sceneZones) this.s.insertSceneZone.run(row);
    for (const row of rows.meta) this.s.insertMeta.run(row);
    // Validation resolved every reference; this is the store's own guarantee that nothing dangles.
    const broken = this.s.brokenReferences.reduce((n, check) => n + check.all().length, 0);
    if (broken > 0) throw new Error(`a restore would leave ${broken} broken references; nothing was changed`);
  }
}
