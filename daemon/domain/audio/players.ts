// Players: the sources wired to amplifier inputs, as each caller sees them; routing to zones and group volume.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type PlayerRow, type ZoneRow, zoneWith } from '../../store/audio-repo.js';
import type { Caller, PlayerView, StreamOutput } from '../shared/index.js';
import {
  canSeePlayer,
  conflict,
  invalid,
  playerFor,
  requireAdmin,
  visiblePlayers,
  visibleZones,
} from '../shared/index.js';
import { refOf } from './amplifiers.js';
import type { AudioParts } from './audio-parts.js';
import { limitsOf } from './audio-views.js';
import { availabilityOf } from './availability.js';
import { checkOutputForm, checkOutputFree, outputColumns, outputOf, playerOn, sameOutput } from './stream-outputs.js';
import { effectiveVolume, groupFactor, requestedVolume, roundVolume, type VolumeRequest } from './volume-rule.js';
import type { ZoneChange } from './zone-changes.js';

/** A new player: its name, the amplifier input it feeds and, for a stream player, its audio output. */
export interface NewPlayer {
  name: string;
  input: { amplifier?: string; driver?: string; channel: number };
  output?: StreamOutput | null;
}

/** An admin's change of a player: at least one of its name and its output (null: no longer a stream player). */
export interface PlayerChange {
  name?: string;
  output?: StreamOutput | null;
}

/** What a change of a player naming none of its fields is told (the REST schema says the same). */
export const PLAYER_CHANGE_NONE = 'send "name", "output" or both';

/** Volume a new player starts at (a quiet, safe default). */
const NEW_PLAYER_VOLUME = 0.3;

export class PlayersService {
  constructor(private readonly parts: AudioParts) {}

  /** The state folder, the database's (app.ts opens it there): no FIFO output may be in it. */
  private get stateDir(): string {
    return path.dirname(this.parts.store.file);
  }

  list(caller: Caller): PlayerView[] {
    const { repo } = this.parts;
    const zones = repo.zones();
    return visiblePlayers(caller, repo.players()).map((player) => this.view(player, zones, caller));
  }

  get(caller: Caller, id: string): PlayerView {
    return this.view(this.parts.lookup.playerToSee(caller, id), this.parts.repo.zonesOfPlayer(id), caller);
  }

  /** A stream player (one with an output) only when the appliance can play it: MPD installed (409 otherwise). */
  create(caller: Caller, input: NewPlayer): PlayerView {
    requireAdmin(caller, 'creating a player');
    const { store, repo, amplifiers, bus, streams } = this.parts;
    const ref = refOf(amplifiers.placeOn(input.input, 'input'));
    const output = input.output ? checkOutputForm(input.output, this.stateDir) : null;
    if (output) streams.checkOutput(output);
    const columns = outputColumns(output);
    const row: PlayerRow = {
      id: randomUUID(),
      name: input.name,
      volume: NEW_PLAYER_VOLUME,
      input_amplifier: ref.key,
      input_driver: ref.driver,
      input_channel: input.input.channel,
      created_at: new Date().toISOString(),
      output_kind: columns.kind,
      output_target: columns.target,
    };
    store.transaction(() => {
      const taken = repo.playerByInput(ref, input.input.channel);
      if (taken) throw conflict(`input ${input.input.channel} already feeds player "${taken.name}" (${taken.id})`);
      if (output) checkOutputFree(playerOn(repo.players(), output), output);
      repo.insertPlayer(row);
    });
    const view = this.view(row, [], null);
    bus.publish({ type: 'player.created', payload: { player: view } });
    return view;
  }

  /**
   * Renames a player and/or changes its output: given one, it becomes (or stays) a stream player played by the
   * appliance; null makes it a device wired to its input again. Names and outputs are the admin's data, not a hardware
   * write: a player of an amplifier that is not configured can be changed too.
   */
  update(caller: Caller, id: string, change: PlayerChange): PlayerView {
    const { store, repo, bus, streams } = this.parts;
    const player = this.parts.lookup.playerToAdminister(caller, id, 'changing a player');
    if (change.name === undefined && change.output === undefined)
      throw invalid(PLAYER_CHANGE_NONE, { body: [PLAYER_CHANGE_NONE] });
    const output = change.output ? checkOutputForm(change.output, this.stateDir) : change.output;
    const newOutput = output !== undefined && !sameOutput(output, outputOf(player));
    if (newOutput && output) streams.checkOutput(output);
    store.transaction(() => {
      if (change.name !== undefined) repo.renamePlayer(id, change.name);
      if (!newOutput) return;
      const columns = outputColumns(output ?? null);
      if (output) checkOutputFree(playerOn(repo.players(), output, id), output, id);
      repo.setPlayerOutput(id, columns.kind, columns.target);
    });
    const view = this.view(repo.player(id)!, repo.zonesOfPlayer(id), null);
    bus.publish({ type: 'player.updated', payload: { player: view } });
    return view;
  }

  /**
   * Works for a player of an amplifier that is not configured too (clearing what a driver switch left). Its zones are
   * detached and muted; only zones that can answer are muted on the amplifier (the others' state is read back when
   * they answer again, or pushed when their amplifier is configured again).
   */
  remove(caller: Caller, id: string): void {
    const { store, repo, users, availability, bus } = this.parts;
    const player = this.parts.lookup.playerToAdminister(caller, id, 'deleting a player');
    const zones = repo.zonesOfPlayer(id);
    let dropped: string[] = [];
    store.transaction(() => {
      for (const zone of zones) repo.updateZone({ ...zone, player_id: null, muted: 1 });
      repo.deletePlayer(player.id);
      dropped = users.dropAssignmentTarget('player', player.id);
    });
    for (const zone of zones) {
      availability.reachable(zone)?.setZone(zone.output_channel, { muted: true });
      if (!zone.muted) bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: zone.id, muted: true } });
    }
    bus.publish({ type: 'player.deleted', payload: { playerId: id } });
    if (dropped.length > 0) bus.publish({ type: 'assignments.dropped', payload: { userIds: dropped } });
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
  setVolume(caller: Caller, id: string, request: number | VolumeRequest): Promise<void> {
    const { store, repo, availability, commits, bus } = this.parts;
    const player = this.parts.lookup.playerToChange(caller, id);
    availability.requirePlayer(player);
    const attached = repo.zonesOfPlayer(id);
    const touchable = visibleZones(caller, attached);
    const reachable = touchable.filter((zone) => availability.reachable(zone) !== undefined);
    if (reachable.length === 0 && touchable.length > 0) throw availability.refusal(touchable);
    const current = commits.playerVolume(player, reachable);
    const target = requestedVolume(typeof request === 'number' ? { volume: request } : request, current);
    if (attached.length === 0) {
      const committed = store.commitSoon(() => repo.setPlayerVolume(id, target));
      if (player.volume !== target)
        bus.publish({ type: 'player.volumeChanged', payload: { playerId: player.id, volume: target } });
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
      availability.driverFor(zone).setZone(zone.output_channel, { volume });
      if (volume !== zone.volume) changes.push({ before: zone, next: zoneWith(zone, { volume }) });
    }
    return commits.commit(changes);
  }

  /**
   * Routes the player's input to the zones, powers them on and unmutes them; zones move from other players. A zone
   * keeps its volume; one that was off starts at its turn-on volume when it has one. A zone that cannot answer (or a
   * player of an amplifier that is not configured) fails the whole request with a 409.
   */
  attachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    const { availability, commits, lookup } = this.parts;
    const { player, zones } = this.routing(caller, playerId, zoneIds);
    lookup.checkSameAmplifier(player, zones);
    const changes: ZoneChange[] = [];
    for (const zone of zones) {
      if (zone.player_id === playerId) continue;
      const volume = effectiveVolume(limitsOf(zone), zone.volume, { poweringOn: zone.power === 0 });
      changes.push({
        before: zone,
        next: { ...zone, player_id: playerId, power: 1, muted: 0, source: player.input_channel, volume },
      });
    }
    if (changes.length === 0) return;
    void commits.commit(changes, { durable: true });
    for (const { before, next } of changes) {
      // One change: the driver sends power first (amplifiers ignore other commands to a zone that is off), then
      // source and volume, and unmutes last.
      availability.driverFor(before).setZone(before.output_channel, {
        power: true,
        source: player.input_channel,
        muted: false,
        ...(next.volume !== before.volume ? { volume: next.volume } : {}),
      });
    }
  }

  /** Removes the route: the zones are muted and belong to no player. A zone that cannot answer is a 409, as for attach. */
  detachZones(caller: Caller, playerId: string, zoneIds: string[]): void {
    const { availability, commits } = this.parts;
    const zones = this.routing(caller, playerId, zoneIds).zones.filter((zone) => zone.player_id === playerId);
    if (zones.length === 0) return;
    void commits.commit(
      zones.map((zone) => ({ before: zone, next: { ...zone, player_id: null, muted: 1 } })),
      { durable: true },
    );
    for (const zone of zones) availability.driverFor(zone).setZone(zone.output_channel, { muted: true });
  }

  /**
   * What attach and detach act on: the player (loaded for a change: the operation's one check), the zones the body
   * names, and a 409 unless all of them can take the change.
   */
  private routing(caller: Caller, playerId: string, zoneIds: string[]): { player: PlayerRow; zones: ZoneRow[] } {
    const { availability, lookup } = this.parts;
    const player = lookup.playerToChange(caller, playerId);
    const zones = lookup.zonesNamed(caller, zoneIds);
    availability.requirePlayer(player);
    availability.requireZones(zones);
    return { player, zones };
  }

  /** The volume a caller sees for a player (see view); undefined when it may not see the player. */
  volumeFor(caller: Caller, playerId: string): number | undefined {
    const { repo, commits } = this.parts;
    const player = repo.player(playerId);
    if (!player || !canSeePlayer(caller, playerId)) return undefined;
    return commits.playerVolume(player, visibleZones(caller, repo.zonesOfPlayer(playerId)));
  }

  /** Whether a player with this id exists (assignment lists name only existing ones). */
  exists(id: string): boolean {
    return this.parts.lookup.exists('player', id);
  }

  /**
   * A player as the caller sees it (`null`: everyone, as events carry it): its volume and state come from the attached
   * zones the caller may see, so a room someone else controls never moves the number a user sees beside its own.
   */
  private view(player: Readonly<PlayerRow>, zones: readonly Readonly<ZoneRow>[], caller: Caller | null): PlayerView {
    const { amplifiers, availability, commits, streams } = this.parts;
    const all = zones.filter((zone) => zone.player_id === player.id);
    const attached = caller ? visibleZones(caller, all) : all;
    const output = outputOf(player);
    // A stream player plays when the appliance plays it; any other when a room can hear its input.
    const playing = output ? streams.playing(player.id) : attached.some((zone) => zone.power && !zone.muted);
    return playerFor(caller, {
      id: player.id,
      name: player.name,
      volume: commits.playerVolume(player, attached),
      zoneIds: all.map((zone) => zone.id),
      input: {
        amplifier: amplifiers.nameOf(player.input_amplifier, player.input_driver),
        driver: player.input_driver,
        channel: player.input_channel,
      },
      output,
      state: playing ? 'playing' : 'idle',
      ...availabilityOf(availability.inputReason(player)),
    });
  }
}
