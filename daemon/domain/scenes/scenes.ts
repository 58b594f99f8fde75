// Scenes: saved states of sets of zones, applied without pops through the audio capability, and the one undo slot
// that holds what the last apply replaced (so undo, then undo again, redoes).

import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import { nameKey } from '../../names.js';
import type { Store } from '../../store/db.js';
import type { SceneRecord, ScenesRepo, SceneZoneRow } from '../../store/scenes-repo.js';
import { type Skipped, storedTone, toneColumns } from '../audio/index.js';
import type { Caller, EventBus, PlayerView, SceneView, SceneZoneView, Writer, ZoneView } from '../shared/index.js';
import {
  asWriter,
  canSeeScene,
  conflict,
  DomainError,
  invalid,
  notFound,
  requireAdmin,
  sceneFor,
} from '../shared/index.js';

/** What a scene gives one zone; the audio capability applies exactly this shape. */
export type ZoneTarget = SceneZoneView;

/** The zone states scenes capture and apply (audio's ZoneApplier). */
export interface SceneAudio {
  /**
   * The current state of the zones (default: every zone the caller may see that can answer), in the amplifier's
   * order; a zone named that cannot answer is a 409.
   */
  capture(caller: Caller, zoneIds?: string[]): ZoneTarget[];
  /** Every zone the caller may see, in the amplifier's order. */
  order(caller: Caller): string[];
  /**
   * Applies the states (mute, route and set volumes, unmute), serialized; the limits of each zone apply, and zones
   * that cannot answer are skipped (a 409 when none can). When its turn comes it hands the state it replaces to
   * `beforeApply`.
   */
  apply(
    writer: Writer,
    targets: ZoneTarget[],
    options?: { beforeApply?: (current: ZoneTarget[]) => void },
  ): Promise<{ applied: string[]; skipped: Skipped[] }>;
}

/** How edited zone states are checked: the zone and player as the caller sees them (404 when it does not). */
export interface SceneLookups {
  zone(caller: Caller, id: string): ZoneView;
  player(caller: Caller, id: string): PlayerView;
}

export interface ApplyResult {
  /** The scene applied, or "undo". */
  applied: string;
  /** The zones the apply set. */
  zoneIds: string[];
  /** The zones it left as they were because they cannot answer, with the reason. */
  skipped: Skipped[];
}

export interface SceneChange {
  name?: string;
  zones?: ZoneTarget[];
}

export type SceneLimits = Pick<Config['limits'], 'scenes'>;

/** What a scene change naming neither its name nor its zones is told (the REST schema says the same). */
export const SCENE_CHANGE_NONE = 'give "name", "zones" or both to change a scene';

export class ScenesService {
  /** Applies run one after another: each saves the undo slot from the state the previous one left. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly repo: ScenesRepo,
    private readonly audio: SceneAudio,
    private readonly lookups: SceneLookups,
    private readonly bus: EventBus,
    readonly limits: SceneLimits,
  ) {}

  /** The scenes whose zones the caller may all see, by name. */
  list(caller: Caller): SceneView[] {
    const order = this.zoneOrder(caller);
    return this.repo
      .scenes()
      .map((record) => view(record, order))
      .filter((scene) => canSeeScene(caller, scene))
      .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id.localeCompare(b.id))
      .map((scene) => sceneFor(caller, scene));
  }

  get(caller: Caller, id: string): SceneView {
    return sceneFor(caller, this.visibleScene(caller, id));
  }

  /** Saves the current state of the zones (default: every zone the caller may see) as a new scene. */
  create(caller: Caller, input: { name: string; zoneIds?: string[] }): SceneView {
    requireAdmin(caller, 'saving a scene');
    const name = sceneName(input.name);
    const zoneIds = input.zoneIds && [...new Set(input.zoneIds)];
    const states = this.audio.capture(caller, zoneIds);
    if (states.length === 0)
      throw invalid('there are no zones to save: create a zone first, or wait until a zone can answer', {
        zoneIds: ['no zones'],
      });
    const id = randomUUID();
    const at = new Date().toISOString();
    this.store.transaction(() => {
      const count = this.repo.count();
      if (count >= this.limits.scenes) {
        throw conflict(
          `the appliance holds at most ${this.limits.scenes} scenes and has ${count}; delete one before saving another`,
        );
      }
      this.checkNameFree(name);
      this.repo.insert({ id, name, created_at: at, updated_at: at }, states.map(toRow));
    });
    const scene = this.existing(caller, id);
    this.bus.publish({ type: 'scene.created', payload: { scene } });
    return scene;
  }

  /** Renames a scene and/or replaces its captured zone states. */
  update(caller: Caller, id: string, change: SceneChange): SceneView {
    requireAdmin(caller, 'editing a scene');
    if (!this.repo.scene(id)) throw notFound(`no scene with id ${id}`);
    if (change.name === undefined && change.zones === undefined) {
      throw invalid(SCENE_CHANGE_NONE, { body: [SCENE_CHANGE_NONE] });
    }
    const name = change.name === undefined ? undefined : sceneName(change.name);
    const zones = change.zones === undefined ? undefined : this.checkTargets(caller, change.zones);
    const at = new Date().toISOString();
    this.store.transaction(() => {
      if (name !== undefined) {
        this.checkNameFree(name, id);
        this.repo.rename(id, name, at);
      }
      if (zones !== undefined) this.repo.replaceZones(id, zones.map(toRow), at);
    });
    const scene = this.existing(caller, id);
    this.bus.publish({ type: 'scene.updated', payload: { scene } });
    return scene;
  }

  remove(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting a scene');
    const scene = this.repo.scene(id);
    if (!scene) throw notFound(`no scene with id ${id}`);
    this.store.transaction(() => this.repo.remove(id));
    this.bus.publish({
      type: 'scene.deleted',
      payload: { sceneId: id, zoneIds: scene.zones.map((zone) => zone.zone_id) },
    });
  }

  /**
   * Applies a scene the caller may see, after saving the state it replaces into the undo slot. Zones that cannot
   * answer are skipped and named (a 409 when none can). Applies run one at a time; when this one's turn comes,
   * `recheck` gives the caller as it is then (an earlier apply may have run for a while), which is checked there.
   */
  apply(caller: Caller, id: string, recheck: () => Caller = () => caller): Promise<ApplyResult> {
    return this.serially(async () => {
      const writer = asWriter(recheck());
      const scene = this.visibleScene(writer, id);
      if (scene.zones.length === 0)
        throw conflict(`scene "${scene.name}" has no zones left (they were deleted); edit or delete it`);
      const { applied: zoneIds, skipped } = await this.applyKeepingUndo(writer, scene.zones);
      this.bus.publish({ type: 'scene.applied', payload: { sceneId: id, zoneIds } });
      return { applied: id, zoneIds, skipped };
    });
  }

  /** Applies the undo slot; what it replaces becomes the undo slot, so a second undo redoes. Checked as apply is. */
  undo(caller: Caller, recheck: () => Caller = () => caller): Promise<ApplyResult> {
    return this.serially(async () => {
      const writer = asWriter(recheck());
      const slot = this.visibleUndo(writer);
      const { applied: zoneIds, skipped } = await this.applyKeepingUndo(writer, slot.zones);
      this.bus.publish({ type: 'scene.applied', payload: { sceneId: 'undo', zoneIds } });
      return { applied: 'undo', zoneIds, skipped };
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * Applies, saving the state it replaces as the undo slot once the audio capability has checked everything and is
   * about to change the zones (an apply refused leaves the slot as it was). The slot holds the zones set, not those
   * skipped, so an undo never touches a zone the apply left alone.
   */
  private applyKeepingUndo(writer: Writer, targets: ZoneTarget[]): Promise<{ applied: string[]; skipped: Skipped[] }> {
    return this.audio.apply(writer, targets, {
      beforeApply: (current) =>
        this.store.transaction(() => this.repo.saveUndo(randomUUID(), current.map(toRow), new Date().toISOString())),
    });
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {
      // Its caller gets the error; the queue only waits for the turn to end.
    });
    return run;
  }

  /** Loads a scene for a caller: one covering a zone outside a non-admin's assignments does not exist for it. */
  private visibleScene(caller: Caller, id: string): SceneView {
    const record = this.repo.scene(id);
    const scene = record && view(record, this.zoneOrder(caller));
    if (!scene || !canSeeScene(caller, scene)) throw notFound(`no scene with id ${id}`);
    return scene;
  }

  private visibleUndo(caller: Caller): SceneView {
    const record = this.repo.undo();
    if (!record || record.zones.length === 0)
      throw conflict('there is nothing to undo: no scene has been applied (or its zones were deleted)');
    const slot = view(record, this.zoneOrder(caller));
    if (!canSeeScene(caller, slot))
      throw notFound('the last scene applied covers zones outside your assignments: there is nothing for you to undo');
    return slot;
  }

  /** A scene just written, in full (the view events carry), ordered for the caller. */
  private existing(caller: Caller, id: string): SceneView {
    return view(this.repo.scene(id)!, this.zoneOrder(caller));
  }

  /** Position of each zone the caller may see, so a scene lists its zones in the amplifier's order. */
  private zoneOrder(caller: Caller): Map<string, number> {
    return new Map(this.audio.order(caller).map((id, index) => [id, index]));
  }

  /** Names are unique regardless of letter case (the undo slot has none). */
  private checkNameFree(name: string, exceptId?: string): void {
    const key = nameKey(name);
    const taken = this.repo.scenes().find((scene) => scene.id !== exceptId && nameKey(scene.name) === key);
    if (taken) throw conflict(`a scene named "${taken.name}" already exists (${taken.id}); choose another name`);
  }

  /** Edited zone states: every zone and player must exist, once each, and a player must feed the zone's amplifier. */
  private checkTargets(caller: Caller, targets: ZoneTarget[]): ZoneTarget[] {
    const problems: string[] = [];
    const seen = new Set<string>();
    const result: ZoneTarget[] = [];
    for (const target of targets) {
      const { zoneId, playerId } = target;
      if (seen.has(zoneId)) {
        problems.push(`zone ${zoneId} is listed twice`);
        continue;
      }
      seen.add(zoneId);
      const zone = lookup(() => this.lookups.zone(caller, zoneId));
      if (!zone) problems.push(`unknown zone id ${zoneId}`);
      const player = playerId === null ? null : lookup(() => this.lookups.player(caller, playerId));
      if (player === undefined) problems.push(`unknown player id ${playerId}`);
      if (
        zone &&
        player &&
        (player.input.amplifier !== zone.output.amplifier || player.input.driver !== zone.output.driver)
      ) {
        problems.push(
          `player "${player.name}" feeds amplifier ${player.input.amplifier}, but zone "${zone.name}" is on amplifier ${zone.output.amplifier}`,
        );
      }
      result.push({ ...target, zoneId, playerId });
    }
    if (problems.length) throw invalid(problems.join('; '), { zones: problems });
    return result;
  }
}

/** Scene names are trimmed; blank is refused (the route's schema bounds the length). */
function sceneName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw invalid('"name" must not be blank', { name: ['must not be blank'] });
  return name;
}

/** The thing a lookup found, or undefined when it does not exist for the caller. */
function lookup<T>(find: () => T): T | undefined {
  try {
    return find();
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'not-found') return undefined;
    throw err;
  }
}

function toRow(target: ZoneTarget): SceneZoneRow {
  return {
    zone_id: target.zoneId,
    power: target.power ? 1 : 0,
    volume: target.volume,
    muted: target.muted ? 1 : 0,
    player_id: target.playerId,
    ...toneColumns(target.tone ?? {}),
  };
}

/** A scene zone as the API shows it: its tone only when the scene has one (scenes saved before tone controls have none). */
function zoneOf(zone: SceneZoneRow): SceneZoneView {
  const tone = storedTone(zone);
  const target: SceneZoneView = {
    zoneId: zone.zone_id,
    power: zone.power === 1,
    volume: zone.volume,
    muted: zone.muted === 1,
    playerId: zone.player_id,
  };
  if (Object.keys(tone).length > 0) target.tone = tone;
  return target;
}

/** The full view of a scene; its zones in the amplifier's order, any the order does not know last. */
function view(record: SceneRecord, order: ReadonlyMap<string, number>): SceneView {
  const position = (zoneId: string) => order.get(zoneId) ?? Number.MAX_SAFE_INTEGER;
  const zones = [...record.zones]
    .sort((a, b) => position(a.zone_id) - position(b.zone_id) || a.zone_id.localeCompare(b.zone_id))
    .map(zoneOf);
  return { id: record.id, name: record.name, zones, createdAt: record.created_at, updatedAt: record.updated_at };
}
