// Scenes and the undo slot: per zone, the state to apply. Rows of kind 'undo' are the one slot holding what the last
// apply replaced; every other query sees kind 'scene' only.
import type { Db } from './db.js';
import { preparedOnUse } from './statements.js';

export interface SceneRow {
  id: string;
  name: string;
  kind: 'scene' | 'undo';
  created_at: string;
  updated_at: string;
}

export interface SceneZoneRow {
  zone_id: string;
  power: number;
  volume: number;
  muted: number;
  player_id: string | null;
  /** The tone the scene applies (-1..1; loudness 0 or 1); null: none for that control (every control null in scenes saved before). */
  tone_bass: number | null;
  tone_treble: number | null;
  tone_balance: number | null;
  tone_loudness: number | null;
}

export interface SceneRecord extends SceneRow {
  zones: SceneZoneRow[];
}

export class ScenesRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = preparedOnUse({
      scenes: () => db.prepare("SELECT * FROM scenes WHERE kind = 'scene'"),
      scene: () => db.prepare("SELECT * FROM scenes WHERE id = ? AND kind = 'scene'"),
      undo: () => db.prepare("SELECT * FROM scenes WHERE kind = 'undo'"),
      count: () => db.prepare("SELECT COUNT(*) FROM scenes WHERE kind = 'scene'").pluck(),
      allZones: () =>
        db.prepare(
          `SELECT z.scene_id, z.zone_id, z.power, z.volume, z.muted, z.player_id, z.tone_bass, z.tone_treble, z.tone_balance, z.tone_loudness
         FROM scene_zones z JOIN scenes s ON s.id = z.scene_id WHERE s.kind = 'scene'`,
        ),
      zones: () =>
        db.prepare(
          'SELECT zone_id, power, volume, muted, player_id, tone_bass, tone_treble, tone_balance, tone_loudness FROM scene_zones WHERE scene_id = ?',
        ),
      insert: () =>
        db.prepare(
          'INSERT INTO scenes (id, name, kind, created_at, updated_at) VALUES (@id, @name, @kind, @created_at, @updated_at)',
        ),
      insertZone: () =>
        db.prepare(
          `INSERT INTO scene_zones (scene_id, zone_id, power, volume, muted, player_id, tone_bass, tone_treble, tone_balance, tone_loudness)
         VALUES (@scene_id, @zone_id, @power, @volume, @muted, @player_id, @tone_bass, @tone_treble, @tone_balance, @tone_loudness)`,
        ),
      clearZones: () => db.prepare('DELETE FROM scene_zones WHERE scene_id = ?'),
      rename: () => db.prepare('UPDATE scenes SET name = ?, updated_at = ? WHERE id = ?'),
      touch: () => db.prepare('UPDATE scenes SET updated_at = ? WHERE id = ?'),
      remove: () => db.prepare('DELETE FROM scenes WHERE id = ?'),
      removeUndo: () => db.prepare("DELETE FROM scenes WHERE kind = 'undo'"),
    });
  }

  /** Every saved scene with its zones (the undo slot left out), in no particular order. */
  scenes(): SceneRecord[] {
    const byScene = new Map<string, SceneZoneRow[]>();
    for (const row of this.s.allZones.all() as Array<SceneZoneRow & { scene_id: string }>) {
      const { scene_id, ...zone } = row;
      let list = byScene.get(scene_id);
      if (!list) byScene.set(scene_id, (list = []));
      list.push(zone);
    }
    return (this.s.scenes.all() as SceneRow[]).map((scene) => ({ ...scene, zones: byScene.get(scene.id) ?? [] }));
  }

  scene(id: string): SceneRecord | undefined {
    const row = this.s.scene.get(id) as SceneRow | undefined;
    return row && { ...row, zones: this.zonesOf(row.id) };
  }

  count(): number {
    return this.s.count.get() as number;
  }

  /** Call inside a transaction: two statements per zone. */
  insert(row: Omit<SceneRow, 'kind'>, zones: readonly SceneZoneRow[]): void {
    this.s.insert.run({ ...row, kind: 'scene' });
    this.insertZones(row.id, zones);
  }

  rename(id: string, name: string, updatedAt: string): void {
    this.s.rename.run(name, updatedAt, id);
  }

  /** Call inside a transaction: the scene's zones are replaced as a whole. */
  replaceZones(id: string, zones: readonly SceneZoneRow[], updatedAt: string): void {
    this.s.clearZones.run(id);
    this.insertZones(id, zones);
    this.s.touch.run(updatedAt, id);
  }

  remove(id: string): void {
    this.s.remove.run(id);
  }

  /** The undo slot, if an apply filled it (zones deleted since are gone from it). */
  undo(): SceneRecord | undefined {
    const row = this.s.undo.get() as SceneRow | undefined;
    return row && { ...row, zones: this.zonesOf(row.id) };
  }

  /** Call inside a transaction: replaces the undo slot (a unique index keeps it one row); no zones empties it. */
  saveUndo(id: string, zones: readonly SceneZoneRow[], at: string): void {
    this.s.removeUndo.run();
    if (zones.length === 0) return;
    this.s.insert.run({ id, name: 'undo', kind: 'undo', created_at: at, updated_at: at });
    this.insertZones(id, zones);
  }

  private zonesOf(sceneId: string): SceneZoneRow[] {
    return this.s.zones.all(sceneId) as SceneZoneRow[];
  }

  private insertZones(sceneId: string, zones: readonly SceneZoneRow[]): void {
    for (const zone of zones) this.s.insertZone.run({ scene_id: sceneId, ...zone });
  }
}
