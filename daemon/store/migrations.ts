// Numbered schema migrations; PRAGMA user_version records how many have run.
import type Database from 'better-sqlite3';
import { cleanName, nameKey, nameProblem } from '../names.js';

export const MIGRATIONS: string[] = [
  // 1: accounts, audio resources, playlists.
  `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    role          TEXT NOT NULL CHECK (role IN ('Admin', 'Operator', 'Viewer')),
    password_hash TEXT NOT NULL,
    is_enabled    INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL,
    key_digest    BLOB UNIQUE,
    key_nonce     BLOB,
    key_box       BLOB
  ) STRICT;

  CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    digest       BLOB NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX sessions_user ON sessions(user_id);

  CREATE TABLE assignments (
    user_id   TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('player', 'zone')),
    target_id TEXT NOT NULL,
    PRIMARY KEY (user_id, kind, target_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX assignments_target ON assignments(kind, target_id);

  CREATE TABLE players (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    volume        REAL NOT NULL,
    input_driver  TEXT NOT NULL,
    input_channel INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    UNIQUE (input_driver, input_channel)
  ) STRICT;

  CREATE TABLE zones (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    volume         REAL NOT NULL,
    muted          INTEGER NOT NULL,
    power          INTEGER NOT NULL,
    source         INTEGER NOT NULL DEFAULT 1,
    player_id      TEXT REFERENCES players(id) ON DELETE SET NULL,
    output_driver  TEXT NOT NULL,
    output_channel INTEGER NOT NULL,
    created_at     TEXT NOT NULL,
    UNIQUE (output_driver, output_channel)
  ) STRICT;
  CREATE INDEX zones_player ON zones(player_id);

  CREATE TABLE input_devices (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    input_driver  TEXT NOT NULL,
    input_channel INTEGER NOT NULL,
    is_favorite   INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    UNIQUE (input_driver, input_channel)
  ) STRICT;

  CREATE TABLE playlists (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    is_favorite INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
  ) STRICT;

  CREATE TABLE tracks (
    id          TEXT PRIMARY KEY,
    playlist_id TEXT NOT NULL REFERENCES playlists(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    title       TEXT NOT NULL,
    uri         TEXT NOT NULL,
    duration_ms INTEGER
  ) STRICT;
  CREATE INDEX tracks_playlist ON tracks(playlist_id, position);
  `,
  // 2: the first admin's generated password must be replaced; addresses each user last signed in from, which the
  // per-username login lock does not hold back (login-throttle.ts).
  `
  ALTER TABLE users ADD COLUMN password_change_required INTEGER NOT NULL DEFAULT 0;

  CREATE TABLE trusted_addresses (
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    address      TEXT NOT NULL,
    last_success INTEGER NOT NULL,
    PRIMARY KEY (user_id, address)
  ) STRICT, WITHOUT ROWID;
  `,
  // 3: several amplifiers at once. Players, zones and input devices name the amplifier they belong to (its key,
  // from its configured name) beside its driver; a channel is unique per amplifier and driver. Existing rows were
  // made with the single amplifier of --driver, whose key is the driver name, so their ids carry over.
  `
  CREATE TABLE players_v3 (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    volume           REAL NOT NULL,
    input_amplifier  TEXT NOT NULL,
    input_driver     TEXT NOT NULL,
    input_channel    INTEGER NOT NULL,
    created_at       TEXT NOT NULL,
    UNIQUE (input_amplifier, input_driver, input_channel)
  ) STRICT;
  INSERT INTO players_v3 (id, name, volume, input_amplifier, input_driver, input_channel, created_at)
    SELECT id, name, volume, input_driver, input_driver, input_channel, created_at FROM players;
  DROP TABLE players;
  ALTER TABLE players_v3 RENAME TO players;

  CREATE TABLE zones_v3 (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    volume           REAL NOT NULL,
    muted            INTEGER NOT NULL,
    power            INTEGER NOT NULL,
    source           INTEGER NOT NULL DEFAULT 1,
    player_id        TEXT REFERENCES players(id) ON DELETE SET NULL,
    output_amplifier TEXT NOT NULL,
    output_driver    TEXT NOT NULL,
    output_channel   INTEGER NOT NULL,
    created_at       TEXT NOT NULL,
    UNIQUE (output_amplifier, output_driver, output_channel)
  ) STRICT;
  INSERT INTO zones_v3 (id, name, volume, muted, power, source, player_id, output_amplifier, output_driver, output_channel, created_at)
    SELECT id, name, volume, muted, power, source, player_id, output_driver, output_driver, output_channel, created_at FROM zones;
  DROP TABLE zones;
  ALTER TABLE zones_v3 RENAME TO zones;
  CREATE INDEX zones_player ON zones(player_id);

  CREATE TABLE input_devices_v3 (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    kind             TEXT NOT NULL,
    input_amplifier  TEXT NOT NULL,
    input_driver     TEXT NOT NULL,
    input_channel    INTEGER NOT NULL,
    is_favorite      INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    UNIQUE (input_amplifier, input_driver, input_channel)
  ) STRICT;
  INSERT INTO input_devices_v3 (id, name, kind, input_amplifier, input_driver, input_channel, is_favorite, created_at)
    SELECT id, name, kind, input_driver, input_driver, input_channel, is_favorite, created_at FROM input_devices;
  DROP TABLE input_devices;
  ALTER TABLE input_devices_v3 RENAME TO input_devices;
  `,
  // 4: speaker safety, sleep timers and scenes. A zone's volume never exceeds its max_volume on any path;
  // turn_on_volume (if set) is applied when it powers on; sleep_until is when its sleep timer powers it off (epoch
  // ms). A scene holds, per zone, the state to apply; kind 'undo' is the one slot holding what the last apply
  // replaced. A deleted zone leaves every scene; a deleted player leaves its zones detached in a scene.
  `
  ALTER TABLE zones ADD COLUMN max_volume REAL NOT NULL DEFAULT 1 CHECK (max_volume >= 0 AND max_volume <= 1);
  ALTER TABLE zones ADD COLUMN turn_on_volume REAL CHECK (turn_on_volume IS NULL OR (turn_on_volume >= 0 AND turn_on_volume <= 1));
  ALTER TABLE zones ADD COLUMN sleep_until INTEGER;

  CREATE TABLE scenes (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL DEFAULT 'scene' CHECK (kind IN ('scene', 'undo')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX scenes_name ON scenes(name COLLATE NOCASE) WHERE kind = 'scene';
  CREATE UNIQUE INDEX scenes_undo ON scenes(kind) WHERE kind = 'undo';

  CREATE TABLE scene_zones (
    scene_id  TEXT NOT NULL REFERENCES scenes(id) ON DELETE CASCADE,
    zone_id   TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
    power     INTEGER NOT NULL,
    volume    REAL NOT NULL CHECK (volume >= 0 AND volume <= 1),
    muted     INTEGER NOT NULL,
    player_id TEXT REFERENCES players(id) ON DELETE SET NULL,
    PRIMARY KEY (scene_id, zone_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX scene_zones_zone ON scene_zones(zone_id);
  CREATE INDEX scene_zones_player ON scene_zones(player_id);
  `,
  // 5: bounded work per request. A playlist keeps its track count and the sum of its known durations, changed in
  // the transaction that changes its tracks, so the list reads one row per playlist instead of every track. A
  // scene left without zones by a deleted zone is deleted (a backup holding one would not restore). Names are
  // cleaned by MIGRATION_STEPS[5].
  `
  ALTER TABLE playlists ADD COLUMN track_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE playlists ADD COLUMN duration_ms INTEGER NOT NULL DEFAULT 0;
  UPDATE playlists SET
    track_count = (SELECT COUNT(*) FROM tracks WHERE playlist_id = playlists.id),
    duration_ms = (SELECT COALESCE(SUM(duration_ms), 0) FROM tracks WHERE playlist_id = playlists.id);
  CREATE INDEX playlists_order ON playlists(created_at, name, id);
  DELETE FROM scenes WHERE kind = 'scene' AND NOT EXISTS (SELECT 1 FROM scene_zones WHERE scene_id = scenes.id);
  `,
  // 6: stream players. A player may be played by the appliance itself: output_kind says where its MPD sends the audio
  // (an ALSA device, a FIFO, or nowhere), output_target the device or the FIFO's path. NULL: the player is a device
  // wired to the amplifier input, as before. One device or FIFO feeds one player.
  `
  ALTER TABLE players ADD COLUMN output_kind TEXT CHECK (output_kind IS NULL OR output_kind IN ('alsa', 'fifo', 'null'));
  ALTER TABLE players ADD COLUMN output_target TEXT;
  CREATE UNIQUE INDEX players_output ON players(output_kind, output_target) WHERE output_kind IN ('alsa', 'fifo');
  `,
  // 7: tone controls. A zone keeps its last tone (bass, treble and balance from -1 to 1, loudness 0 or 1; NULL: not
  // known, or a control its amplifier lacks), and a scene the tone it applies to each zone (NULL: none, as in the
  // scenes saved before).
  `
  ALTER TABLE zones ADD COLUMN tone_bass REAL CHECK (tone_bass IS NULL OR (tone_bass >= -1 AND tone_bass <= 1));
  ALTER TABLE zones ADD COLUMN tone_treble REAL CHECK (tone_treble IS NULL OR (tone_treble >= -1 AND tone_treble <= 1));
  ALTER TABLE zones ADD COLUMN tone_balance REAL CHECK (tone_balance IS NULL OR (tone_balance >= -1 AND tone_balance <= 1));
  ALTER TABLE zones ADD COLUMN tone_loudness INTEGER CHECK (tone_loudness IS NULL OR tone_loudness IN (0, 1));
  ALTER TABLE scene_zones ADD COLUMN tone_bass REAL CHECK (tone_bass IS NULL OR (tone_bass >= -1 AND tone_bass <= 1));
  ALTER TABLE scene_zones ADD COLUMN tone_treble REAL CHECK (tone_treble IS NULL OR (tone_treble >= -1 AND tone_treble <= 1));
  ALTER TABLE scene_zones ADD COLUMN tone_balance REAL CHECK (tone_balance IS NULL OR (tone_balance >= -1 AND tone_balance <= 1));
  ALTER TABLE scene_zones ADD COLUMN tone_loudness INTEGER CHECK (tone_loudness IS NULL OR tone_loudness IN (0, 1));
  `,
  // 8: receivers. A row is a receiver an admin switched on for a player (AirPlay, UPnP/DLNA, Squeezelite); server is
  // Squeezelite's music server (`host` or `host:port`; NULL: found on the LAN). The rows go with their player.
  `
  CREATE TABLE player_receivers (
    player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('airplay', 'upnp', 'squeezelite')),
    server    TEXT CHECK (server IS NULL OR kind = 'squeezelite'),
    PRIMARY KEY (player_id, kind)
  ) STRICT, WITHOUT ROWID;
  `,
  // 9: rooms that wake for a cast. A player with a row chose its settings: wake_chosen 1 wakes the zones listed in
  // player_cast_wake_zones (none listed: none), 0 the zones attached when the cast starts; off_after_minutes powers
  // the woken zones off that long after the cast ends (NULL: never). The rows go with their player and zone.
  `
  CREATE TABLE player_cast_settings (
    player_id         TEXT NOT NULL PRIMARY KEY REFERENCES players(id) ON DELETE CASCADE,
    wake_chosen       INTEGER NOT NULL CHECK (wake_chosen IN (0, 1)),
    off_after_minutes INTEGER CHECK (off_after_minutes IS NULL OR (off_after_minutes >= 1 AND off_after_minutes <= 720))
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE player_cast_wake_zones (
    player_id TEXT NOT NULL REFERENCES player_cast_settings(player_id) ON DELETE CASCADE,
    zone_id   TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
    PRIMARY KEY (player_id, zone_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX player_cast_wake_zones_zone ON player_cast_wake_zones(zone_id);
  `,
  // 10: the receiver kinds are the drivers' registry's (drivers/receivers/kinds.ts): the table no longer lists them,
  // nor which kind takes a server, so another kind needs no migration; the receivers' service checks each write, and
  // leaves alone a row of a kind it does not know. SQLite changes a CHECK only by copying the table; the rows stay.
  `
  CREATE TABLE player_receivers_10 (
    player_id TEXT NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 40),
    server    TEXT,
    PRIMARY KEY (player_id, kind)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO player_receivers_10 (player_id, kind, server) SELECT player_id, kind, server FROM player_receivers;
  DROP TABLE player_receivers;
  ALTER TABLE player_receivers_10 RENAME TO player_receivers;
  `,
];

/**
 * Steps in JavaScript, run after the SQL of the migration with the same number, in its transaction.
 * 5: names stored before daemon/names.ts held control characters, line breaks and bidi overrides; they lose them
 * (MQTT, the dashboard and a backup's restore see only clean names), and scenes whose names now read the same get
 * " (2)", " (3)"... so scene names stay unique as people read them.
 */
export const MIGRATION_STEPS: Record<number, (db: Database.Database) => void> = {
  5: (db) => {
    db.function('azc_name_problem', { deterministic: true }, (text: unknown) =>
      typeof text === 'string' && nameProblem(text) !== undefined ? 1 : 0,
    );
    const columns: Array<[table: string, column: string, fallback: string]> = [
      ['players', 'name', 'Player'],
      ['zones', 'name', 'Zone'],
      ['input_devices', 'name', 'Input'],
      ['input_devices', 'kind', 'input'],
      ['playlists', 'name', 'Playlist'],
      ['tracks', 'title', 'Untitled'],
      ['tracks', 'uri', 'about:blank'],
      ['scenes', 'name', 'Scene'],
    ];
    for (const [table, column, fallback] of columns) {
      const update = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE rowid = ?`);
      for (const row of db
        .prepare(`SELECT rowid AS at, ${column} AS text FROM ${table} WHERE azc_name_problem(${column})`)
        .all() as Array<{ at: number; text: string }>) {
        update.run(cleanName(row.text, fallback), row.at);
      }
    }
    // The older scene keeps its name; of two made in the same millisecond, the one stored first (not a random id).
    const scenes = db
      .prepare(`SELECT id, name FROM scenes WHERE kind = 'scene' ORDER BY created_at, rowid`)
      .all() as Array<{ id: string; name: string }>;
    const taken = new Set<string>();
    const rename = db.prepare('UPDATE scenes SET name = ? WHERE id = ?');
    for (const scene of scenes) {
      let name = scene.name;
      for (let n = 2; taken.has(nameKey(name)); n++) name = `${scene.name.slice(0, 58)} (${n})`;
      taken.add(nameKey(name));
      if (name !== scene.name) rename.run(name, scene.id);
    }
  },
};
