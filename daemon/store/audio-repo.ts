// Players, zones and input devices: the rows that mirror the amplifier.
// Players and zones are read on every audio request, so they are also held in memory: written through to
// SQLite first, changed in memory only after the statement succeeded, and reloaded if a transaction rolls back.
// Rows belong to one amplifier: its key (from its configured name) and its driver. Rows of an amplifier that is not
// configured, or configured now with another driver, stay in the database (configuring it again restores them) and
// in every list and lookup: the domain decides what they may do (domain/audio/availability.ts).
import type { Db, Store } from './db.js';

/** Which amplifier a row belongs to: the key of its configured name, and its driver family. */
export interface AmplifierRef {
  key: string;
  driver: string;
}

export interface PlayerRow {
  id: string;
  name: string;
  volume: number;
  input_amplifier: string;
  input_driver: string;
  input_channel: number;
  created_at: string;
  /** Where a stream player's audio goes (an ALSA device, a FIFO, nowhere); null: a device wired to the input. */
  output_kind: StreamOutputKind | null;
  /** The ALSA device or the FIFO's path; null for the other kinds. */
  output_target: string | null;
}

export type StreamOutputKind = 'alsa' | 'fifo' | 'null';

export interface ZoneRow {
  id: string;
  name: string;
  volume: number;
  muted: number;
  power: number;
  source: number;
  player_id: string | null;
  output_amplifier: string;
  output_driver: string;
  output_channel: number;
  created_at: string;
  /** The most the zone may play at (0..1); every path clamps to it (domain/audio/volume-rule.ts). */
  max_volume: number;
  /** The volume the zone powers on at, if set. */
  turn_on_volume: number | null;
  /** When the zone's sleep timer powers it off (epoch ms), if one runs. */
  sleep_until: number | null;
  /** The zone's last tone (-1..1; loudness 0 or 1); null: not known, or a control its amplifier lacks. */
  tone_bass: number | null;
  tone_treble: number | null;
  tone_balance: number | null;
  tone_loudness: number | null;
}

export interface InputDeviceRow {
  id: string;
  name: string;
  kind: string;
  input_amplifier: string;
  input_driver: string;
  input_channel: number;
  is_favorite: number;
  created_at: string;
}

/** The columns of a zone that change while it plays (updateZone writes exactly these). */
export type ZoneRowUpdate = Pick<ZoneRow, 'id' | 'volume' | 'muted' | 'power' | 'source' | 'player_id' | 'sleep_until'>;

/** A zone's tone columns (setZoneTone writes exactly these). */
export type ZoneToneColumns = Pick<ZoneRow, 'tone_bass' | 'tone_treble' | 'tone_balance' | 'tone_loudness'>;

/** The settings an admin edits on a zone (setZoneSettings writes exactly these). */
export type ZoneSettings = Pick<ZoneRow, 'name' | 'max_volume' | 'turn_on_volume'>;

export class AudioRepo {
  private readonly s;
  private players_ = new Map<string, Readonly<PlayerRow>>();
  private zones_ = new Map<string, Readonly<ZoneRow>>();
  private sortedPlayers: Readonly<PlayerRow>[] | undefined;
  private sortedZones: Readonly<ZoneRow>[] | undefined;
  /**
   * The group-commit key of each zone's row write, made once per zone: a key built per change is a new string, and
   * hashing it is a good part of what a volume change costs here.
   */
  /** Zones changed in the open group commit, as the database holds them (see updateZone and writeZone). */
  private readonly committedZones = new Map<string, Readonly<ZoneRow>>();

  constructor(private readonly store: Store) {
    const db: Db = store.db;
    this.s = {
      allPlayers: db.prepare('SELECT * FROM players'),
      allZones: db.prepare('SELECT * FROM zones'),
      insertPlayer: db.prepare(
        `INSERT INTO players (id, name, volume, input_amplifier, input_driver, input_channel, created_at, output_kind, output_target)
         VALUES (@id, @name, @volume, @input_amplifier, @input_driver, @input_channel, @created_at, @output_kind, @output_target)`,
      ),
      setPlayerOutput: db.prepare('UPDATE players SET output_kind = ?, output_target = ? WHERE id = ?'),
      setPlayerVolume: db.prepare('UPDATE players SET volume = ? WHERE id = ?'),
      renamePlayer: db.prepare('UPDATE players SET name = ? WHERE id = ?'),
      deletePlayer: db.prepare('DELETE FROM players WHERE id = ?'),
      insertZone: db.prepare(
        `INSERT INTO zones (id, name, volume, muted, power, source, player_id, output_amplifier, output_driver, output_channel, created_at,
                            max_volume, turn_on_volume, sleep_until, tone_bass, tone_treble, tone_balance, tone_loudness)
         VALUES (@id, @name, @volume, @muted, @power, @source, @player_id, @output_amplifier, @output_driver, @output_channel, @created_at,
                 @max_volume, @turn_on_volume, @sleep_until, @tone_bass, @tone_treble, @tone_balance, @tone_loudness)`,
      ),
      setZoneTone: db.prepare(
        'UPDATE zones SET tone_bass = @tone_bass, tone_treble = @tone_treble, tone_balance = @tone_balance, tone_loudness = @tone_loudness WHERE id = @id',
      ),
      updateZone: db.prepare(
        `UPDATE zones SET volume = @volume, muted = @muted, power = @power, source = @source, player_id = @player_id,
                          sleep_until = @sleep_until
         WHERE id = @id`,
      ),
      setZoneVolume: db.prepare('UPDATE zones SET volume = ? WHERE id = ?'),
      setZoneSettings: db.prepare(
        'UPDATE zones SET name = @name, max_volume = @max_volume, turn_on_volume = @turn_on_volume WHERE id = @id',
      ),
      deleteZone: db.prepare('DELETE FROM zones WHERE id = ?'),
      // A scene holds at least one zone (a backup of one without would not restore): the zone's last scenes go with it.
      deleteEmptyScenes: db
        .prepare(
          `DELETE FROM scenes WHERE kind = 'scene' AND NOT EXISTS (SELECT 1 FROM scene_zones WHERE scene_id = scenes.id) RETURNING id`,
        )
        .pluck(),
      insertInput: db.prepare(
        `INSERT INTO input_devices (id, name, kind, input_amplifier, input_driver, input_channel, is_favorite, created_at)
         VALUES (@id, @name, @kind, @input_amplifier, @input_driver, @input_channel, @is_favorite, @created_at)`,
      ),
      input: db.prepare('SELECT * FROM input_devices WHERE id = ?'),
      inputs: db.prepare('SELECT * FROM input_devices ORDER BY input_amplifier, input_driver, input_channel'),
      inputByChannel: db.prepare(
        'SELECT * FROM input_devices WHERE input_amplifier = ? AND input_driver = ? AND input_channel = ?',
      ),
      setInputFavorite: db.prepare('UPDATE input_devices SET is_favorite = ? WHERE id = ?'),
      setInputName: db.prepare('UPDATE input_devices SET name = ?, kind = ? WHERE id = ?'),
      deleteInput: db.prepare('DELETE FROM input_devices WHERE id = ?'),
    };
    this.reload();
    store.onRollback(() => this.reload());
  }

  /** Rebuilds the in-memory players and zones from the database. */
  reload(): void {
    this.committedZones.clear();
    this.players_ = new Map((this.s.allPlayers.all() as PlayerRow[]).map((row) => [row.id, Object.freeze(row)]));
    this.zones_ = new Map((this.s.allZones.all() as ZoneRow[]).map((row) => [row.id, Object.freeze(row)]));
    this.sortedPlayers = undefined;
    this.sortedZones = undefined;
  }

  // ---- players ---------------------------------------------------------------------------------

  insertPlayer(row: PlayerRow): void {
    this.s.insertPlayer.run(row);
    this.putPlayer({ ...row });
    this.sortedPlayers = undefined;
  }
  player(id: string): Readonly<PlayerRow> | undefined {
    return this.players_.get(id);
  }
  /** Ordered by creation time, then name. */
  players(): readonly Readonly<PlayerRow>[] {
    this.sortedPlayers ??= [...this.players_.values()].sort(
      (a, b) => compareCodeUnits(a.created_at, b.created_at) || a.name.localeCompare(b.name),
    );
    return this.sortedPlayers;
  }
  /** The player on an input of the given amplifier (used to keep inputs unique). */
  playerByInput(amplifier: AmplifierRef, channel: number): Readonly<PlayerRow> | undefined {
    for (const player of this.players_.values()) {
      if (
        player.input_amplifier === amplifier.key &&
        player.input_driver === amplifier.driver &&
        player.input_channel === channel
      )
        return player;
    }
    return undefined;
  }
  setPlayerVolume(id: string, volume: number): void {
    const statement = this.s.setPlayerVolume;
    this.write(`player-volume:${id}`, () => statement.run(volume, id));
    const player = this.players_.get(id);
    if (player) this.putPlayer({ ...player, volume });
  }
  /** The stream output of a player (both null: a device wired to its input). */
  setPlayerOutput(id: string, kind: StreamOutputKind | null, target: string | null): void {
    this.s.setPlayerOutput.run(kind, target, id);
    const player = this.players_.get(id);
    if (player) this.putPlayer({ ...player, output_kind: kind, output_target: target });
  }
  /** The player whose stream output is this device or FIFO (used to keep outputs unique). */
  playerByOutput(kind: StreamOutputKind, target: string | null): Readonly<PlayerRow> | undefined {
    for (const player of this.players_.values())
      if (player.output_kind === kind && player.output_target === target) return player;
    return undefined;
  }
  renamePlayer(id: string, name: string): void {
    this.s.renamePlayer.run(name, id);
    const player = this.players_.get(id);
    if (player) this.putPlayer({ ...player, name });
  }
  deletePlayer(id: string): void {
    this.s.deletePlayer.run(id);
    this.players_.delete(id);
    this.sortedPlayers = undefined;
    // The foreign key sets player_id to NULL; keep the mirror the same.
    for (const zone of this.zones_.values()) if (zone.player_id === id) this.putZone({ ...zone, player_id: null });
  }

  // ---- zones -----------------------------------------------------------------------------------

  insertZone(row: ZoneRow): void {
    this.s.insertZone.run(row);
    this.putZone({ ...row });
    this.sortedZones = undefined;
  }
  zone(id: string): Readonly<ZoneRow> | undefined {
    return this.zones_.get(id);
  }
  /** Ordered by amplifier, driver and output channel. */
  zones(): readonly Readonly<ZoneRow>[] {
    this.sortedZones ??= [...this.zones_.values()].sort(
      (a, b) =>
        compareCodeUnits(a.output_amplifier, b.output_amplifier) ||
        compareCodeUnits(a.output_driver, b.output_driver) ||
        a.output_channel - b.output_channel,
    );
    return this.sortedZones;
  }
  zonesOfPlayer(playerId: string): Readonly<ZoneRow>[] {
    return this.zones().filter((zone) => zone.player_id === playerId);
  }
  /** The zone on an output of the given amplifier (used to keep outputs unique). */
  zoneByOutput(amplifier: AmplifierRef, channel: number): Readonly<ZoneRow> | undefined {
    for (const zone of this.zones_.values()) {
      if (
        zone.output_amplifier === amplifier.key &&
        zone.output_driver === amplifier.driver &&
        zone.output_channel === channel
      )
        return zone;
    }
    return undefined;
  }
  updateZone(state: ZoneRowUpdate): void {
    const id = state.id;
    const zone = this.zones_.get(id);
    if (this.store.deferWrite(`zone:${id}`, () => this.writeZone(id))) {
      // The row as the database holds it, kept from the turn's first change: the write compares against it.
      if (zone && !this.committedZones.has(id)) {
        this.committedZones.set(id, zone);
        this.store.recordUndo(() => this.committedZones.delete(id));
      }
    } else {
      const { volume, muted, power, source, player_id, sleep_until } = state;
      this.s.updateZone.run({ id, volume, muted, power, source, player_id, sleep_until });
    }
    if (zone) this.putZone(zoneWith(zone, state));
  }

  /**
   * A zone's deferred write: its latest values, and only the volume when nothing else changed since the database
   * last had it (the common case, a slider; leaving player_id out spares the index on it a rewrite).
   */
  private writeZone(id: string): void {
    const committed = this.committedZones.get(id);
    this.committedZones.delete(id);
    const zone = this.zones_.get(id);
    if (!zone) return;
    const volumeOnly =
      committed !== undefined &&
      committed.muted === zone.muted &&
      committed.power === zone.power &&
      committed.source === zone.source &&
      committed.player_id === zone.player_id &&
      committed.sleep_until === zone.sleep_until;
    if (volumeOnly) {
      this.s.setZoneVolume.run(zone.volume, id);
      return;
    }
    const { volume, muted, power, source, player_id, sleep_until } = zone;
    this.s.updateZone.run({ id, volume, muted, power, source, player_id, sleep_until });
  }
  /**
   * Zones routed to a player of another amplifier. Older versions allowed such routes; a player can only feed zones
   * of its own amplifier.
   */
  zonesRoutedAcrossAmplifiers(): Readonly<ZoneRow>[] {
    return [...this.zones_.values()].filter((zone) => {
      const player = zone.player_id === null ? undefined : this.players_.get(zone.player_id);
      return (
        player !== undefined &&
        (player.input_amplifier !== zone.output_amplifier || player.input_driver !== zone.output_driver)
      );
    });
  }
  setZoneSettings(id: string, settings: ZoneSettings): void {
    const row = { id, name: settings.name, max_volume: settings.max_volume, turn_on_volume: settings.turn_on_volume };
    this.s.setZoneSettings.run(row);
    const zone = this.zones_.get(id);
    if (zone) this.putZone({ ...zone, ...row });
  }
  /**
   * A zone's tone: in memory at once, and in the database now or, inside a group-commit call, when that commits
   * (the latest per zone, as for its volume).
   */
  setZoneTone(id: string, tone: ZoneToneColumns): void {
    const row = {
      id,
      tone_bass: tone.tone_bass,
      tone_treble: tone.tone_treble,
      tone_balance: tone.tone_balance,
      tone_loudness: tone.tone_loudness,
    };
    this.write(`zone-tone:${id}`, () => this.s.setZoneTone.run(row));
    const zone = this.zones_.get(id);
    if (zone) this.putZone({ ...zone, ...row });
  }
  /** Deletes the zone; returns the ids of the scenes it was the last zone of, deleted with it. */
  deleteZone(id: string): string[] {
    this.s.deleteZone.run(id);
    const emptied = this.s.deleteEmptyScenes.all() as string[];
    this.zones_.delete(id);
    this.sortedZones = undefined;
    return emptied;
  }

  // ---- input devices (read rarely: straight from SQLite) -----------------------------------------

  insertInput(row: InputDeviceRow): void {
    this.s.insertInput.run(row);
  }
  input(id: string): InputDeviceRow | undefined {
    return this.s.input.get(id) as InputDeviceRow | undefined;
  }
  inputs(): InputDeviceRow[] {
    return this.s.inputs.all() as InputDeviceRow[];
  }
  /** The input device on a channel of the given amplifier (used to keep channels unique). */
  inputByChannel(amplifier: AmplifierRef, channel: number): InputDeviceRow | undefined {
    return this.s.inputByChannel.get(amplifier.key, amplifier.driver, channel) as InputDeviceRow | undefined;
  }
  setInputFavorite(id: string, isFavorite: boolean): void {
    this.s.setInputFavorite.run(isFavorite ? 1 : 0, id);
  }
  setInputName(id: string, name: string, kind: string): void {
    this.s.setInputName.run(name, kind, id);
  }
  deleteInput(id: string): void {
    this.s.deleteInput.run(id);
  }

  /** Runs a row's statement now, or, inside a group-commit call, when that commits (the latest per row). */
  private write(key: string, run: () => void): void {
    if (!this.store.deferWrite(key, run)) run();
  }

  private readonly dropSortedPlayers = () => (this.sortedPlayers = undefined);
  private readonly dropSortedZones = () => (this.sortedZones = undefined);

  private putPlayer(row: PlayerRow): void {
    const previous = this.keep(this.players_, row, this.dropSortedPlayers);
    // The sorted list survives a change that keeps its order (a volume); it is rebuilt after anything else.
    this.sortedPlayers =
      previous && this.sortedPlayers && previous.created_at === row.created_at && previous.name === row.name
        ? replaced(this.sortedPlayers, previous, row)
        : undefined;
  }

  private putZone(row: ZoneRow): void {
    const previous = this.keep(this.zones_, row, this.dropSortedZones);
    this.sortedZones =
      previous &&
      this.sortedZones &&
      previous.output_amplifier === row.output_amplifier &&
      previous.output_driver === row.output_driver &&
      previous.output_channel === row.output_channel
        ? replaced(this.sortedZones, previous, row)
        : undefined;
  }

  /**
   * Puts a row (frozen) in place of the one with its id, and records how to take that back if the running call
   * throws (the sorted list is then dropped with `dropSorted`). Returns the row it replaced.
   */
  private keep<R extends { id: string }>(
    rows: Map<string, Readonly<R>>,
    row: R,
    dropSorted: () => void,
  ): Readonly<R> | undefined {
    const previous = rows.get(row.id);
    rows.set(row.id, Object.freeze(row));
    this.store.recordUndo(() => {
      if (previous) rows.set(row.id, previous);
      else rows.delete(row.id);
      dropSorted();
    });
    return previous;
  }
}

/**
 * Orders ISO timestamps, amplifier keys and driver names (ASCII by construction) without ICU: localeCompare loads
 * the collation tables into the process (about 3 MB of resident memory) for a comparison that needs none.
 */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A copy of a zone row with some of its playing state changed (an absent field keeps the row's value), written
 * out field by field: spreading a frozen row (every kept row is frozen) takes V8's slow path, and this runs for
 * every volume change.
 */
export function zoneWith(zone: Readonly<ZoneRow>, state: Partial<Omit<ZoneRowUpdate, 'id'>>): ZoneRow {
  return {
    id: zone.id,
    name: zone.name,
    volume: state.volume ?? zone.volume,
    muted: state.muted ?? zone.muted,
    power: state.power ?? zone.power,
    source: state.source ?? zone.source,
    player_id: state.player_id === undefined ? zone.player_id : state.player_id,
    output_amplifier: zone.output_amplifier,
    output_driver: zone.output_driver,
    output_channel: zone.output_channel,
    created_at: zone.created_at,
    max_volume: zone.max_volume,
    turn_on_volume: zone.turn_on_volume,
    sleep_until: state.sleep_until === undefined ? zone.sleep_until : state.sleep_until,
    tone_bass: zone.tone_bass,
    tone_treble: zone.tone_treble,
    tone_balance: zone.tone_balance,
    tone_loudness: zone.tone_loudness,
  };
}

/** A copy of `list` with `next` in the place of `previous`; undefined when `previous` is not in it. */
function replaced<T>(list: readonly T[], previous: T, next: T): T[] | undefined {
  const at = list.indexOf(previous);
  if (at < 0) return undefined;
  const copy = list.slice();
  copy[at] = next;
  return copy;
}
