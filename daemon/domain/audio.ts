// Players and zones: routing rules, group volume, the policy applied to every read and write, and the amplifier kept in step.
import { randomUUID } from 'node:crypto';
import type { AmplifierDriver, ZoneState } from '../../drivers/driver.js';
import { Amplifiers, refOf, singleAmplifier, type Amplifier } from './amplifiers.js';
import type { Store } from '../store/db.js';
import type { AudioRepo, PlayerRow, ZoneRow } from '../store/audio-repo.js';
import type { UsersRepo } from '../store/users-repo.js';
import type { MetaRepo } from '../store/meta-repo.js';
import type { Caller } from './access.js';
import { canSeePlayer, canSeeZone, playerFor, requireAdmin, requireWriter, visiblePlayers, visibleZones } from './policy.js';
import type { DomainEvent, EventBus, PlayerView, ZoneView } from './events.js';
import { conflict, invalid, notFound } from './errors.js';
import { AmplifierSync } from './amplifier-sync.js';
import { newZoneRow, zoneEvents, zonesChangedEvent, zoneView } from './audio-views.js';

/** Volume a new player starts at (a quiet, safe default). */
const NEW_PLAYER_VOLUME = 0.3;

export class AudioService {
  private readonly syncs: AmplifierSync[];
  readonly amplifiers: Amplifiers;

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
  ) {
    this.amplifiers = amplifiers instanceof Amplifiers ? amplifiers : new Amplifiers([singleAmplifier(amplifiers)]);
    this.syncs = this.amplifiers.list.map((amplifier) => new AmplifierSync(store, repo, meta, bus, amplifier));
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

  // ---- players --------------------------------------------------------------------------------

  listPlayers(caller: Caller): PlayerView[] {
    const zones = this.repo.zones();
    return visiblePlayers(caller, this.repo.players()).map((player) => this.playerView(player, zones, caller));
  }

  getPlayer(caller: Caller, id: string): PlayerView {
    return this.playerView(this.visiblePlayer(caller, id), this.repo.zonesOfPlayer(id), caller);
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

  renamePlayer(caller: Caller, id: string, name: string): PlayerView {
    requireAdmin(caller, 'renaming a player');
    this.existingPlayer(id);
    this.repo.renamePlayer(id, name);
    const view = this.playerView(this.existingPlayer(id), this.repo.zonesOfPlayer(id), null);
    this.bus.publish({ type: 'player.updated', payload: { player: view } });
    return view;
  }

  deletePlayer(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting a player');
    const player = this.existingPlayer(id);
    const zones = this.repo.zonesOfPlayer(id);
    let dropped: string[] = [];
    this.store.transaction(() => {
      for (const zone of zones) this.repo.updateZone({ ...zone, player_id: null, muted: 1 });
      this.repo.deletePlayer(player.id);
      dropped = this.users.dropAssignmentTarget('player', player.id);
    });
    for (const zone of zones) {
      this.driverOf(zone).setZone(zone.output_channel, { muted: true });
      if (!zone.muted) this.bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: zone.id, muted: true } });
    }
    this.bus.publish({ type: 'player.deleted', payload: { playerId: id } });
    this.onAssignmentsDropped(dropped);
  }

  /** Resolves once the change is committed; the amplifier follows on its own schedule. */
  setPlayerVolume(caller: Caller, id: string, volume: number): Promise<void> {
    requireWriter(caller);
    const player = this.visiblePlayer(caller, id);
    const zones = this.repo.zonesOfPlayer(id);
    const committed = this.store.commitSoon(() => {
      this.repo.setPlayerVolume(id, volume);
      this.repo.setPlayerZonesVolume(id, volume);
    });
    const events: DomainEvent[] = [];
    if (player.volume !== volume) events.push({ type: 'player.volumeChanged', payload: { playerId: id, volume } });
    for (const zone of zones) {
      this.driverOf(zone).setZone(zone.output_channel, { volume });
      if (zone.volume !== volume) events.push({ type: 'zone.volumeChanged', payload: { zoneId: zone.id, volume } });
    }
    this.publish(events);
    return committed;
  }

  /** Routes the player's input to the zones, powers them on and unmutes them; zones move from other players. */
  attachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    requireWriter(caller);
    const player = this.visiblePlayer(caller, playerId);
    const zones = this.zonesOfBody(caller, zoneIds);
    this.checkSameAmplifier(player, zones);
    const events: DomainEvent[] = [];
    const losers = new Set<string>();
    const changed: ZoneRow[] = [];
    this.store.transaction(() => {
      for (const zone of zones) {
        if (zone.player_id === playerId) continue;
        if (zone.player_id) losers.add(zone.player_id);
        const next = { ...zone, player_id: playerId, power: 1, muted: 0, source: player.input_channel };
        this.repo.updateZone(next);
        changed.push(zone);
      }
    });
    if (changed.length === 0) return;
    for (const zone of changed) {
      // Power first: real amplifiers ignore other commands to a zone that is off.
      this.driverOf(zone).setZone(zone.output_channel, { power: true, source: player.input_channel, muted: false });
      if (!zone.power) events.push({ type: 'zone.powerChanged', payload: { zoneId: zone.id, power: true } });
      if (zone.muted) events.push({ type: 'zone.mutedChanged', payload: { zoneId: zone.id, muted: false } });
    }
    for (const loser of losers) events.push(this.zonesChangedEvent(loser));
    events.push(this.zonesChangedEvent(playerId));
    this.publish(events);
  }

  /** Removes the route: the zones are muted and belong to no player. */
  detachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    requireWriter(caller);
    this.visiblePlayer(caller, playerId);
    const zones = this.zonesOfBody(caller, zoneIds).filter((zone) => zone.player_id === playerId);
    if (zones.length === 0) return;
    this.store.transaction(() => {
      for (const zone of zones) this.repo.updateZone({ ...zone, player_id: null, muted: 1 });
    });
    const events: DomainEvent[] = [];
    for (const zone of zones) {
      this.driverOf(zone).setZone(zone.output_channel, { muted: true });
      if (!zone.muted) events.push({ type: 'zone.mutedChanged', payload: { zoneId: zone.id, muted: true } });
    }
    events.push(this.zonesChangedEvent(playerId));
    this.publish(events);
  }

  // ---- zones ----------------------------------------------------------------------------------

  listZones(caller: Caller): ZoneView[] {
    return visibleZones(caller, this.repo.zones()).map((zone) => this.zoneView(zone, caller));
  }

  getZone(caller: Caller, id: string): ZoneView {
    return this.zoneView(this.visibleZone(caller, id), caller);
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
    const view = this.zoneView(row, null);
    this.bus.publish({ type: 'zone.created', payload: { zone: view } });
    return view;
  }

  renameZone(caller: Caller, id: string, name: string): ZoneView {
    requireAdmin(caller, 'renaming a zone');
    if (!this.repo.zone(id)) throw notFound(`no zone with id ${id}`);
    this.repo.renameZone(id, name);
    const view = this.zoneView(this.repo.zone(id)!, null);
    this.bus.publish({ type: 'zone.updated', payload: { zone: view } });
    return view;
  }

  deleteZone(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting a zone');
    const zone = this.repo.zone(id);
    if (!zone) throw notFound(`no zone with id ${id}`);
    let dropped: string[] = [];
    this.store.transaction(() => {
      this.repo.deleteZone(id);
      dropped = this.users.dropAssignmentTarget('zone', id);
      // Remembered so the next start does not recreate the zone from the amplifier's description.
      this.meta.markDeleted('zone', { key: zone.output_amplifier, driver: zone.output_driver }, zone.output_channel);
    });
    const events: DomainEvent[] = [{ type: 'zone.deleted', payload: { zoneId: id } }];
    if (zone.player_id) events.unshift(this.zonesChangedEvent(zone.player_id));
    this.publish(events);
    this.onAssignmentsDropped(dropped);
  }

  setZoneVolume(caller: Caller, id: string, volume: number): Promise<void> {
    return this.changeZone(caller, id, { volume });
  }

  setZoneMuted(caller: Caller, id: string, muted: boolean): Promise<void> {
    return this.changeZone(caller, id, { muted });
  }

  setZonePower(caller: Caller, id: string, power: boolean): Promise<void> {
    return this.changeZone(caller, id, { power });
  }

  /** Whether an id names an existing player or zone (for assignment lists). */
  exists(kind: 'player' | 'zone', id: string): boolean {
    return kind === 'player' ? this.repo.player(id) !== undefined : this.repo.zone(id) !== undefined;
  }

  // ---- internals ------------------------------------------------------------------------------

  private changeZone(caller: Caller, id: string, change: Partial<Pick<ZoneState, 'volume' | 'muted' | 'power'>>): Promise<void> {
    requireWriter(caller);
    const zone = this.visibleZone(caller, id);
    const next = { ...zone };
    if (change.volume !== undefined) next.volume = change.volume;
    if (change.muted !== undefined) next.muted = change.muted ? 1 : 0;
    if (change.power !== undefined) next.power = change.power ? 1 : 0;
    const committed = this.store.commitSoon(() => this.repo.updateZone(next));
    this.driverOf(zone).setZone(zone.output_channel, change);
    this.publish(zoneEvents(zone, next));
    return committed;
  }

  /** The driver of a visible zone (only zones of a configured amplifier are visible). */
  private driverOf(zone: Readonly<ZoneRow>): AmplifierDriver {
    const amplifier: Amplifier | undefined = this.amplifiers.find(zone.output_amplifier, zone.output_driver);
    if (!amplifier) throw new Error(`zone ${zone.id} belongs to an amplifier that is not configured`);
    return amplifier.driver;
  }

  private zoneView(zone: Readonly<ZoneRow>, caller: Caller | null): ZoneView {
    return zoneView(zone, caller, this.amplifiers.nameOf(zone.output_amplifier, zone.output_driver));
  }

  private existingPlayer(id: string): PlayerRow {
    const player = this.repo.player(id);
    if (!player) throw notFound(`no player with id ${id}`);
    return player;
  }

  /** Loads a player for a caller: one outside the caller's assignments does not exist for it. */
  private visiblePlayer(caller: Caller, id: string): PlayerRow {
    const player = this.repo.player(id);
    if (!player || !canSeePlayer(caller, id)) throw notFound(`no player with id ${id}`);
    return player;
  }

  private visibleZone(caller: Caller, id: string): ZoneRow {
    const zone = this.repo.zone(id);
    if (!zone || !canSeeZone(caller, id)) throw notFound(`no zone with id ${id}`);
    return zone;
  }

  /**
   * All zones named in a body; any unknown or invisible id fails the whole request with 400. A zone kept for an
   * amplifier that is not configured is named as such to callers who could see it, so the fix is clear.
   */
  private zonesOfBody(caller: Caller, zoneIds: string[]): ZoneRow[] {
    const ids = [...new Set(zoneIds.map((id) => id.toLowerCase()))];
    const zones: ZoneRow[] = [];
    const missing: string[] = [];
    const unconfigured: string[] = [];
    for (const id of ids) {
      const zone = this.repo.zone(id);
      if (zone && canSeeZone(caller, id)) zones.push(zone);
      else if (canSeeZone(caller, id) && this.repo.unconfiguredZoneAmplifier(id) !== undefined) unconfigured.push(id);
      else missing.push(id);
    }
    if (missing.length) {
      throw invalid(`unknown zone ids: ${missing.join(', ')}`, { zoneIds: [`unknown zone ids: ${missing.join(', ')}`] });
    }
    if (unconfigured.length) {
      const named = unconfigured
        .map((id) => {
          const amplifier = this.repo.unconfiguredZoneAmplifier(id)!;
          return amplifier.key === amplifier.driver ? `${id} (driver "${amplifier.driver}")` : `${id} (amplifier "${amplifier.key}", driver "${amplifier.driver}")`;
        })
        .join(', ');
      const configured = this.amplifiers.list.map((a) => (a.name === a.driver.name ? `"${a.name}"` : `"${a.name}" (${a.driver.name})`)).join(', ');
      const detail = `zones of an amplifier that is not configured cannot be used: ${named}; the configured ${
        this.amplifiers.list.length === 1 && this.amplifiers.list[0]!.name === this.amplifiers.list[0]!.driver.name ? 'driver is' : 'amplifiers are'
      } ${configured}`;
      throw invalid(detail, { zoneIds: [detail] });
    }
    return zones;
  }

  /** A player can only feed zones of its own amplifier: its input and the zone's output are on one amplifier. */
  private checkSameAmplifier(player: Readonly<PlayerRow>, zones: readonly ZoneRow[]): void {
    const foreign = zones.filter((zone) => zone.output_amplifier !== player.input_amplifier || zone.output_driver !== player.input_driver);
    if (foreign.length === 0) return;
    const nameOf = (key: string, driver: string) => this.amplifiers.nameOf(key, driver);
    const named = foreign
      .map((zone) => `"${zone.name}" (${zone.id}, amplifier "${nameOf(zone.output_amplifier, zone.output_driver)}", driver "${zone.output_driver}")`)
      .join(', ');
    const detail =
      `player "${player.name}" feeds an input of the "${nameOf(player.input_amplifier, player.input_driver)}" amplifier and can only feed zones of that ` +
      `amplifier; these zones belong to another one: ${named}`;
    throw invalid(detail, { zoneIds: [detail] });
  }

  private zonesChangedEvent(playerId: string): DomainEvent {
    return zonesChangedEvent(this.repo, playerId);
  }

  private playerView(player: Readonly<PlayerRow>, zones: readonly Readonly<ZoneRow>[], caller: Caller | null): PlayerView {
    const attached = zones.filter((zone) => zone.player_id === player.id);
    return playerFor(caller, {
      id: player.id,
      name: player.name,
      volume: player.volume,
      zoneIds: attached.map((zone) => zone.id),
      input: { amplifier: this.amplifiers.nameOf(player.input_amplifier, player.input_driver), driver: player.input_driver, channel: player.input_channel },
      state: attached.some((zone) => zone.power && !zone.muted) ? 'playing' : 'idle',
    });
  }

  private publish(events: DomainEvent[]): void {
    for (const event of events) this.bus.publish(event);
  }
}
