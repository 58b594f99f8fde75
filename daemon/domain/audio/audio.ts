// Players and zones: routing rules, group volume, the policy applied to every read and write, and the amplifier kept in step.
import { randomUUID } from 'node:crypto';
import type { AmplifierDriver, ZoneState } from '../../../drivers/driver.js';
import { Amplifiers, refOf, singleAmplifier } from './amplifiers.js';
import type { Store } from '../../store/db.js';
import { zoneWith, type AudioRepo, type PlayerRow, type ZoneRow } from '../../store/audio-repo.js';
import type { UsersRepo } from '../../store/users-repo.js';
import type { MetaRepo } from '../../store/meta-repo.js';
import type { Logger } from '../../log.js';
import type { Caller } from '../shared/access.js';
import { canSeePlayer, playerFor, requireAdmin, requireWriter, visiblePlayers, visibleZones } from '../shared/policy.js';
import type { DomainEvent, EventBus, PlayerView, ZoneView } from '../shared/events.js';
import { conflict, invalid, notFound } from '../shared/errors.js';
import { AmplifierSync } from './amplifier-sync.js';
import { limitsOf, newZoneRow, zonesChangedEvent, zoneView } from './audio-views.js';
import { effectiveVolume, groupFactor, requestedVolume, roundVolume, type VolumeRequest } from './volume-rule.js';
import { ZoneCommits, type ZoneChange } from './zone-changes.js';
import { AudioLookup } from './audio-lookup.js';
import { targetOf, ZoneApplier, type ApplyOptions, type ApplyOutcome, type ZoneTarget } from './zone-apply.js';
import { Availability, availabilityOf, type Skipped } from './availability.js';

export type { ApplyOptions, ApplyOutcome, ZoneTarget } from './zone-apply.js';
export type { Skipped } from './availability.js';
export type { VolumeRequest } from './volume-rule.js';

/** Volume a new player starts at (a quiet, safe default). */
const NEW_PLAYER_VOLUME = 0.3;

/**
 * How long one phase of a pop-free apply waits for the amplifiers to take its commands. An amplifier that is
 * offline or reconnecting never settles; it gets the final state, in its safe order, when it is back.
 */
const APPLY_SETTLE_MS = 5000;

export interface AudioOptions {
  /** Where the amplifier sync reports what it corrected (a keypad raise above a zone's limit). */
  log?: Logger;
  /** See APPLY_SETTLE_MS. */
  applySettleMs?: number;
}

/** What a change of a zone's settings naming none of them is told (the REST schema says the same). */
export const ZONE_SETTINGS_NONE = 'send at least one of "name", "maxVolume" and "turnOnVolume"';

export class AudioService {
  private readonly syncs: AmplifierSync[];
  private readonly commits: ZoneCommits;
  private readonly lookup: AudioLookup;
  private readonly applier: ZoneApplier;
  readonly amplifiers: Amplifiers;
  /** Which zones, players and inputs can take writes now (runtime state, followed from the drivers). */
  readonly availability: Availability;

  constructor(
    private readonly store: Store,
    private readonly repo: AudioRepo,
    private readonly users: UsersRepo,
    private readonly meta: MetaRepo,
    private readonly bus: EventBus,
    /** The amplifiers driven; a bare driver is the single amplifier of --driver. */
    amplifiers: Amplifiers | AmplifierDriver,
    /** Notified with the users whose assignment lists lost a deleted player or zone. */
    private readonly onAssignmentsDropped: (userIds: string[]) => void,
    options: AudioOptions = {},
  ) {
    this.amplifiers = amplifiers instanceof Amplifiers ? amplifiers : new Amplifiers([singleAmplifier(amplifiers)]);
    this.commits = new ZoneCommits(store, repo, bus);
    this.availability = new Availability(this.amplifiers);
    this.lookup = new AudioLookup(repo, this.amplifiers, this.availability);
    this.applier = new ZoneApplier(repo, this.lookup, this.commits, options.applySettleMs ?? APPLY_SETTLE_MS);
    this.syncs = this.amplifiers.list.map(
      (amplifier) => new AmplifierSync(store, repo, meta, bus, amplifier, this.commits, this.availability, options.log),
    );
  }

  /** Creates rows for what each amplifier has, then hands it the stored state and follows its changes. */
  async start(): Promise<void> {
    const results = await Promise.allSettled(this.syncs.map((sync) => sync.start()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!failed) return;
    // The caller registers stop() only after a successful start: stop the amplifiers that did start.
    await this.stop().catch(() => {});
    throw failed.reason;
  }

  async stop(): Promise<void> {
    await Promise.all(this.syncs.map((sync) => sync.stop()));
  }

  /**
   * After the database was replaced underneath (a restore): rereads the players and zones and hands every zone's
   * stored state to its amplifier.
   */
  reload(): void {
    this.repo.reload();
    this.availability.forget();
    for (const sync of this.syncs) sync.pushStoredState();
  }

  // ---- players --------------------------------------------------------------------------------

  listPlayers(caller: Caller): PlayerView[] {
    const zones = this.repo.zones();
    return visiblePlayers(caller, this.repo.players()).map((player) => this.playerView(player, zones, caller));
  }

  getPlayer(caller: Caller, id: string): PlayerView {
    return this.playerView(this.lookup.visiblePlayer(caller, id), this.repo.zonesOfPlayer(id), caller);
  }

  createPlayer(caller: Caller, input: { name: string; input: { amplifier?: string; driver?: string; channel: number } }): PlayerView {
    requireAdmin(caller, 'creating a player');
    const amplifier = this.amplifiers.choose(input.input, 'input');
    const ref = refOf(amplifier);
    const inputs = amplifier.driver.describe().inputs;
    if (!inputs.some((i) => i.channel === input.input.channel)) {
      throw invalid(`"input.channel" must be one of the amplifier's inputs (${inputs.map((i) => i.channel).join(', ')}), got ${input.input.channel}`, {
        'input.channel': ['not an input of the amplifier'],
      });
    }
    const row: PlayerRow = {
      id: randomUUID(),
      name: input.name,
      volume: NEW_PLAYER_VOLUME,
      input_amplifier: ref.key,
      input_driver: ref.driver,
      input_channel: input.input.channel,
      created_at: new Date().toISOString(),
    };
    this.store.transaction(() => {
      const taken = this.repo.playerByInput(ref, input.input.channel);
      if (taken) throw conflict(`input ${input.input.channel} already feeds player "${taken.name}" (${taken.id})`);
      this.repo.insertPlayer(row);
    });
    const view = this.playerView(row, [], null);
    this.bus.publish({ type: 'player.created', payload: { player: view } });
    return view;
  }

  /** A name is the admin's data, not a hardware write: a player of an amplifier that is not configured can be renamed too. */
  renamePlayer(caller: Caller, id: string, name: string): PlayerView {
    requireAdmin(caller, 'renaming a player');
    this.lookup.existingPlayer(id);
    this.store.transaction(() => this.repo.renamePlayer(id, name));
    const view = this.playerView(this.lookup.existingPlayer(id), this.repo.zonesOfPlayer(id), null);
    this.bus.publish({ type: 'player.updated', payload: { player: view } });
    return view;
  }

  /**
   * Works for a player of an amplifier that is not configured too (clearing what a driver switch left). Its zones are
   * detached and muted; only zones that can answer are muted on the amplifier (the others' state is read back when
   * they answer again, or pushed when their amplifier is configured again).
   */
  deletePlayer(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting a player');
    const player = this.lookup.existingPlayer(id);
    const zones = this.repo.zonesOfPlayer(id);
    let dropped: string[] = [];
    this.store.transaction(() => {
      for (const zone of zones) this.repo.updateZone({ ...zone, player_id: null, muted: 1 });
      this.repo.deletePlayer(player.id);
      dropped = this.users.dropAssignmentTarget('player', player.id);
    });
    for (const zone of zones) {
      this.availability.reachable(zone)?.setZone(zone.output_channel, { muted: true });
      if (!zone.muted) this.bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: zone.id, muted: true } });
    }
    this.bus.publish({ type: 'player.deleted', payload: { playerId: id } });
    this.onAssignmentsDropped(dropped);
  }

  /**
   * Group volume. Moves every attached zone the caller may touch by the same proportion (factor = target / their
   * average; all to the target when that average is 0), each within its own limit; zones outside the caller's
   * assignments never change. Zones that cannot answer keep their volume; when none of the zones the caller may
   * touch can answer, it is a 409 and nothing changes (as for a player of an amplifier that is not configured). A
   * delta applies to the volume of the zones it moves as the caller sees them (their average: with every zone
   * answering, the player's volume in the caller's view), so a silent room never makes the others jump. A player
   * without zones keeps the value. Resolves once committed; the amplifier follows on its own schedule.
   */
  setPlayerVolume(caller: Caller, id: string, request: number | VolumeRequest): Promise<void> {
    requireWriter(caller);
    const player = this.lookup.visiblePlayer(caller, id);
    this.availability.requirePlayer(player);
    const attached = this.repo.zonesOfPlayer(id);
    const touchable = visibleZones(caller, attached);
    const reachable = touchable.filter((zone) => this.availability.reachable(zone) !== undefined);
    if (reachable.length === 0 && touchable.length > 0) throw this.availability.refusal(touchable);
    const current = this.commits.playerVolume(player, reachable);
    const target = requestedVolume(typeof request === 'number' ? { volume: request } : request, current);
    if (attached.length === 0) {
      const committed = this.store.commitSoon(() => this.repo.setPlayerVolume(id, target));
      if (player.volume !== target) this.bus.publish({ type: 'player.volumeChanged', payload: { playerId: id, volume: target } });
      return committed;
    }
    const factor = groupFactor(
      reachable.map((zone) => zone.volume),
      target,
    );
    const changes: ZoneChange[] = [];
    for (const zone of reachable) {
      const wanted = factor === null ? target : roundVolume(zone.volume * factor);
      const volume = effectiveVolume(limitsOf(zone), wanted);
      this.availability.driverFor(zone).setZone(zone.output_channel, { volume });
      if (volume !== zone.volume) changes.push({ before: zone, next: zoneWith(zone, { volume }) });
    }
    return this.commits.commit(changes);
  }

  /**
   * Routes the player's input to the zones, powers them on and unmutes them; zones move from other players. A zone
   * keeps its volume; one that was off starts at its turn-on volume when it has one. A zone that cannot answer (or a
   * player of an amplifier that is not configured) fails the whole request with a 409.
   */
  attachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    requireWriter(caller);
    const player = this.lookup.visiblePlayer(caller, playerId);
    const zones = this.lookup.zonesOfBody(caller, zoneIds);
    this.availability.requirePlayer(player);
    this.availability.requireZones(zones);
    this.lookup.checkSameAmplifier(player, zones);
    const changes: ZoneChange[] = [];
    for (const zone of zones) {
      if (zone.player_id === playerId) continue;
      const volume = effectiveVolume(limitsOf(zone), zone.volume, { poweringOn: zone.power === 0 });
      changes.push({ before: zone, next: { ...zone, player_id: playerId, power: 1, muted: 0, source: player.input_channel, volume } });
    }
    if (changes.length === 0) return;
    void this.commits.commit(changes, { durable: true });
    for (const { before, next } of changes) {
      // One change: the driver sends power first (amplifiers ignore other commands to a zone that is off), then
      // source and volume, and unmutes last.
      this.availability.driverFor(before).setZone(before.output_channel, {
        power: true,
        source: player.input_channel,
        muted: false,
        ...(next.volume !== before.volume ? { volume: next.volume } : {}),
      });
    }
  }

  /** Removes the route: the zones are muted and belong to no player. A zone that cannot answer is a 409, as for attach. */
  detachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    requireWriter(caller);
    const player = this.lookup.visiblePlayer(caller, playerId);
    const named = this.lookup.zonesOfBody(caller, zoneIds);
    this.availability.requirePlayer(player);
    this.availability.requireZones(named);
    const zones = named.filter((zone) => zone.player_id === playerId);
    if (zones.length === 0) return;
    void this.commits.commit(
      zones.map((zone) => ({ before: zone, next: { ...zone, player_id: null, muted: 1 } })),
      { durable: true },
    );
    for (const zone of zones) this.availability.driverFor(zone).setZone(zone.output_channel, { muted: true });
  }

  /**
   * Powers off every zone the caller may see that is on and returns their ids. Zones that cannot answer are skipped
   * (their last known state is kept) and listed with the reason: those last known to be on.
   */
  async allOff(caller: Caller): Promise<{ zoneIds: string[]; skipped: Skipped[] }> {
    requireWriter(caller);
    const on = visibleZones(caller, this.repo.zones()).filter((zone) => zone.power === 1);
    const skipped = this.availability.unavailable(on);
    const reachable = skipped.length === 0 ? on : on.filter((zone) => !skipped.some((s) => s.zoneId === zone.id));
    for (const zone of reachable) this.availability.driverFor(zone).setZone(zone.output_channel, { power: false });
    await this.commits.commit(reachable.map((zone) => ({ before: zone, next: { ...zone, power: 0 } })));
    return { zoneIds: reachable.map((zone) => zone.id), skipped };
  }

  // ---- zones ----------------------------------------------------------------------------------

  listZones(caller: Caller): ZoneView[] {
    return visibleZones(caller, this.repo.zones()).map((zone) => this.zoneView(zone, caller));
  }

  getZone(caller: Caller, id: string): ZoneView {
    return this.zoneView(this.lookup.visibleZone(caller, id), caller);
  }

  createZone(caller: Caller, input: { name: string; output: { amplifier?: string; driver?: string; channel: number } }): ZoneView {
    requireAdmin(caller, 'creating a zone');
    const amplifier = this.amplifiers.choose(input.output, 'output');
    const ref = refOf(amplifier);
    const outputs = amplifier.driver.describe().zones;
    if (!outputs.some((z) => z.channel === input.output.channel)) {
      throw invalid(`"output.channel" must be one of the amplifier's zone outputs (${outputs.map((z) => z.channel).join(', ')}), got ${input.output.channel}`, {
        'output.channel': ['not a zone output of the amplifier'],
      });
    }
    const row = newZoneRow(input.name, ref, input.output.channel, amplifier.driver.hardwareState(input.output.channel));
    this.store.transaction(() => {
      const taken = this.repo.zoneByOutput(ref, input.output.channel);
      if (taken) throw conflict(`output ${input.output.channel} already belongs to zone "${taken.name}" (${taken.id})`);
      this.repo.insertZone(row);
      this.meta.clearDeleted('zone', ref, input.output.channel);
    });
    this.availability.record(row, amplifier, amplifier.driver.availability(input.output.channel));
    const view = this.zoneView(row, null);
    this.bus.publish({ type: 'zone.created', payload: { zone: view } });
    return view;
  }

  renameZone(caller: Caller, id: string, name: string): ZoneView {
    return this.updateZone(caller, id, { name });
  }

  /**
   * An admin's settings of a zone: name and volume limits. Lowering maxVolume below the current volume pulls the
   * zone down at once; a turn-on volume above the limit is kept as given and applied clamped. Settings are the
   * admin's data, not a hardware write, so a zone that cannot answer takes them too: its volume is left as it is
   * and held to the new limit once it answers again (or its amplifier is configured again).
   */
  updateZone(caller: Caller, id: string, update: { name?: string; maxVolume?: number; turnOnVolume?: number | null }): ZoneView {
    requireAdmin(caller, 'changing a zone');
    if (update.name === undefined && update.maxVolume === undefined && update.turnOnVolume === undefined) {
      throw invalid(ZONE_SETTINGS_NONE, { body: [ZONE_SETTINGS_NONE] });
    }
    const zone = this.repo.zone(id);
    if (!zone) throw notFound(`no zone with id ${id}`);
    const settings = {
      name: update.name ?? zone.name,
      max_volume: update.maxVolume ?? zone.max_volume,
      turn_on_volume: update.turnOnVolume === undefined ? zone.turn_on_volume : update.turnOnVolume,
    };
    const limited = { ...zone, ...settings };
    const driver = this.availability.reachable(zone);
    const next = driver ? { ...limited, volume: effectiveVolume(limitsOf(limited), zone.volume) } : limited;
    const pulledDown = next.volume !== zone.volume;
    void this.commits.commit(pulledDown ? [{ before: zone, next }] : [], {
      durable: true,
      alongside: () => this.repo.setZoneSettings(id, settings),
    });
    if (pulledDown) driver!.setZone(zone.output_channel, { volume: next.volume });
    const view = this.zoneView(this.repo.zone(id)!, null);
    this.bus.publish({ type: 'zone.updated', payload: { zone: view } });
    return view;
  }

  /** Works for a zone that cannot answer too (one gone for good, or of an amplifier that is not configured). */
  deleteZone(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting a zone');
    const zone = this.repo.zone(id);
    if (!zone) throw notFound(`no zone with id ${id}`);
    let dropped: string[] = [];
    const volumes = this.commits.playerVolumes(zone.player_id ? [zone.player_id] : []);
    let volumeEvents: DomainEvent[] = [];
    let emptiedScenes: string[] = [];
    this.store.transaction(() => {
      emptiedScenes = this.repo.deleteZone(id);
      dropped = this.users.dropAssignmentTarget('zone', id);
      // Remembered so the next start does not recreate the zone from the amplifier's description.
      this.meta.markDeleted('zone', { key: zone.output_amplifier, driver: zone.output_driver }, zone.output_channel);
      volumeEvents = this.commits.playerVolumeEvents(volumes);
    });
    this.availability.forget(id);
    const events: DomainEvent[] = [{ type: 'zone.deleted', payload: { zoneId: id } }];
    if (zone.player_id) events.unshift(this.zonesChangedEvent(zone.player_id));
    for (const sceneId of emptiedScenes) events.push({ type: 'scene.deleted', payload: { sceneId, zoneIds: [id] } });
    this.publish([...events, ...volumeEvents]);
    this.onAssignmentsDropped(dropped);
  }

  /** A zone's volume: an absolute value, or a delta applied to the current one; clamped to its limit. */
  setZoneVolume(caller: Caller, id: string, request: number | VolumeRequest): Promise<void> {
    requireWriter(caller);
    const zone = this.lookup.visibleZone(caller, id);
    return this.changeZone(caller, id, { volume: requestedVolume(typeof request === 'number' ? { volume: request } : request, zone.volume) });
  }

  setZoneMuted(caller: Caller, id: string, muted: boolean): Promise<void> {
    return this.changeZone(caller, id, { muted });
  }

  setZonePower(caller: Caller, id: string, power: boolean): Promise<void> {
    return this.changeZone(caller, id, { power });
  }

  // ---- sleep timers (the timer service schedules; these keep the state) -----------------------

  /**
   * Sets (untilMs, epoch ms) or cancels (null) a zone's sleep timer. Only a zone that is on and can answer can get
   * one: an off zone has nothing to switch off, and one that cannot answer could not be switched off (409). A
   * cancel writes nothing to the amplifier, so it works on any zone. Stored durably, so a timer outlives a restart.
   */
  setZoneSleep(caller: Caller, zoneId: string, untilMs: number | null): ZoneView {
    requireWriter(caller);
    const zone = this.lookup.visibleZone(caller, zoneId);
    if (untilMs !== null) this.availability.requireZones([zone]);
    if (untilMs !== null && zone.power === 0) throw conflict(`zone "${zone.name}" is off: switch it on before setting a sleep timer`);
    if (untilMs !== null && !Number.isFinite(untilMs)) throw invalid(`a sleep timer needs a finite time, got ${untilMs}`);
    const until = untilMs === null ? null : Math.round(untilMs);
    if (until !== zone.sleep_until) void this.commits.commit([{ before: zone, next: { ...zone, sleep_until: until } }], { durable: true });
    return this.zoneView(this.repo.zone(zoneId)!, caller);
  }

  /**
   * A sleep timer is due: powers the zone off if its timer is still set and due at `now` (a cancel may have won).
   * A zone that cannot answer then is not switched off: its timer is cleared and the reason returned (for the log).
   * It is not kept waiting: a power-off landing hours later, whenever the unit answers again, would surprise whoever
   * listens then.
   */
  sleepExpired(zoneId: string, now: number): string | undefined {
    const zone = this.repo.zone(zoneId);
    if (!zone || zone.sleep_until === null || zone.sleep_until > now) return undefined;
    const reason = this.availability.zoneReason(zone);
    if (reason !== null) {
      void this.commits.commit([{ before: zone, next: { ...zone, sleep_until: null } }], { durable: true });
      return reason;
    }
    if (zone.power === 1) this.availability.driverFor(zone).setZone(zone.output_channel, { power: false });
    void this.commits.commit([{ before: zone, next: { ...zone, power: 0 } }], { durable: true });
    return undefined;
  }

  /** Every running sleep timer, for scheduling at start. */
  zonesWithSleep(): { zoneId: string; sleepUntil: number }[] {
    return this.repo
      .zones()
      .filter((zone) => zone.sleep_until !== null)
      .map((zone) => ({ zoneId: zone.id, sleepUntil: zone.sleep_until! }));
  }

  // ---- zone states and the pop-free apply (scenes and their undo) -----------------------------

  /**
   * The current state of some zones, to capture (default: every zone the caller may see that can answer). Unknown
   * or invisible ids are a 400; a zone named that cannot answer is a 409 (its present state is not known).
   */
  zoneStates(caller: Caller, zoneIds?: string[]): ZoneTarget[] {
    if (zoneIds === undefined) return visibleZones(caller, this.repo.zones()).filter((zone) => this.availability.reachable(zone)).map(targetOf);
    const zones = this.lookup.zonesOfBody(caller, zoneIds);
    this.availability.requireZones(zones);
    return zones.map(targetOf);
  }

  /** The ids of every zone the caller may see, in the amplifiers' order (whether they can answer or not). */
  zoneOrder(caller: Caller): string[] {
    return visibleZones(caller, this.repo.zones()).map((zone) => zone.id);
  }

  /**
   * Puts zones into the given states without pops (zone-apply.ts), the volume rule applied to each, and says which
   * zones changed and which were skipped because they cannot answer (a 409 when none can). The caller must see
   * every zone (404 otherwise, as for one zone). Applies are serialized: each starts when the one before it has
   * finished. The final state is stored in one commit and announced with the usual zone and player events.
   */
  applyZoneStates(caller: Caller, targets: ZoneTarget[], options: ApplyOptions = {}): Promise<ApplyOutcome> {
    return this.applier.apply(caller, targets, options);
  }

  /** Whether an id names an existing player or zone (for assignment lists). */
  exists(kind: 'player' | 'zone', id: string): boolean {
    return kind === 'player' ? this.repo.player(id) !== undefined : this.repo.zone(id) !== undefined;
  }

  // ---- internals ------------------------------------------------------------------------------

  /** Volume, mute or power of one zone; powering on brings the turn-on volume, powering off ends the sleep timer. */
  private changeZone(caller: Caller, id: string, change: Partial<Pick<ZoneState, 'volume' | 'muted' | 'power'>>): Promise<void> {
    requireWriter(caller);
    const zone = this.lookup.visibleZone(caller, id);
    const next = { ...zone };
    if (change.muted !== undefined) next.muted = change.muted ? 1 : 0;
    if (change.power !== undefined) next.power = change.power ? 1 : 0;
    next.volume = effectiveVolume(limitsOf(zone), change.volume ?? zone.volume, { poweringOn: zone.power === 0 && next.power === 1 });
    const sent: Partial<ZoneState> = { ...change };
    if (change.volume !== undefined || next.volume !== zone.volume) sent.volume = next.volume;
    const driver = this.availability.driverFor(zone);
    const committed = this.commits.commit([{ before: zone, next }]);
    driver.setZone(zone.output_channel, sent);
    return committed;
  }

  private zoneView(zone: Readonly<ZoneRow>, caller: Caller | null): ZoneView {
    return zoneView(zone, caller, this.amplifiers.nameOf(zone.output_amplifier, zone.output_driver), this.availability.zoneReason(zone));
  }

  private zonesChangedEvent(playerId: string): DomainEvent {
    return zonesChangedEvent(this.repo, playerId);
  }

  /**
   * A player as the caller sees it (`null`: everyone, as events carry it): its volume and state come from the attached
   * zones the caller may see, so a room someone else controls never moves the number a user sees beside its own.
   */
  private playerView(player: Readonly<PlayerRow>, zones: readonly Readonly<ZoneRow>[], caller: Caller | null): PlayerView {
    const all = zones.filter((zone) => zone.player_id === player.id);
    const attached = caller ? visibleZones(caller, all) : all;
    return playerFor(caller, {
      id: player.id,
      name: player.name,
      volume: this.commits.playerVolume(player, attached),
      zoneIds: all.map((zone) => zone.id),
      input: { amplifier: this.amplifiers.nameOf(player.input_amplifier, player.input_driver), driver: player.input_driver, channel: player.input_channel },
      state: attached.some((zone) => zone.power && !zone.muted) ? 'playing' : 'idle',
      ...availabilityOf(this.availability.inputReason(player)),
    });
  }

  /** The volume a caller sees for a player (see playerView); undefined when it may not see the player. */
  playerVolumeFor(caller: Caller, playerId: string): number | undefined {
    const player = this.repo.player(playerId);
    if (!player || !canSeePlayer(caller, playerId)) return undefined;
    return this.commits.playerVolume(player, visibleZones(caller, this.repo.zonesOfPlayer(playerId)));
  }

  private publish(events: DomainEvent[]): void {
    for (const event of events) this.bus.publish(event);
  }
}
