// Rooms that wake for a cast: when a cast takes a stream player's output its wake zones (chosen per player, else
// those attached then) are attached and powered on as a person's command does it, and, when the player's settings
// say so, the zones the cast woke are powered off some minutes after it ends unless someone took them over.
import type { Logger } from '../../log.js';
import type { AudioRepo } from '../../store/audio-repo.js';
import type { CastSettings, CastSettingsRepo } from '../../store/cast-settings-repo.js';
import type { Store } from '../../store/db.js';
import type { PlayersService, ZonesService } from '../audio/index.js';
import {
  type BusEvent,
  type Caller,
  type Clock,
  conflict,
  type EventBus,
  invalid,
  type PlayerView,
  requireAdmin,
  systemClock,
  visibleZones,
} from '../shared/index.js';
import type { OutputHolder } from './cast-arbiter.js';

/** The longest wait before the woken rooms power off, in minutes (12 hours). */
export const MAX_CAST_OFF_MINUTES = 720;

export interface CastRoomsDeps {
  store: Store;
  repo: CastSettingsRepo;
  /** The players' and zones' rows (read only: changes go through the audio services). */
  rows: AudioRepo;
  players: Pick<PlayersService, 'get' | 'attachZones'>;
  zones: Pick<ZonesService, 'setPower'>;
  /** Who wakes and powers off the rooms for a cast into the player: the appliance itself. */
  caller(playerId: string): Caller;
  bus: EventBus;
  clock?: Clock;
  log: Logger;
}

/** One player's cast as far as its rooms go: who holds the output, the zones its cast woke, the power-off pending. */
interface PlayerRooms {
  holder: OutputHolder;
  woken: Set<string>;
  timer: unknown;
}

const isCast = (holder: OutputHolder): boolean => holder !== null && holder !== 'mpd';

export class CastRooms {
  private readonly players = new Map<string, PlayerRooms>();
  private readonly clock: Clock;
  /** While this service commands zones itself: the events that come of it are its own, not someone taking over. */
  private acting = false;

  constructor(private readonly deps: CastRoomsDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Follows changes to the woken zones and the players. */
  start(): void {
    this.deps.bus.subscribe('cast-rooms', (event: BusEvent) => this.heard(event), { internal: true });
  }

  /** Stops following; a pending power-off is dropped (the woken zones are not remembered across a restart). */
  stop(): void {
    this.deps.bus.removeListeners('cast-rooms');
    for (const id of [...this.players.keys()]) this.forget(id);
  }

  /** A stream player's cast settings, for anyone who may see the player. */
  get(caller: Caller, playerId: string): CastSettings {
    const player = this.deps.players.get(caller, playerId);
    streamPlayer(player);
    const settings = this.deps.repo.of(player.id);
    if (settings.wakeZoneIds === null) return settings;
    const seen = visibleZones(
      caller,
      settings.wakeZoneIds.map((id) => ({ id })),
    );
    return { ...settings, wakeZoneIds: seen.map((zone) => zone.id) };
  }

  /**
   * Replaces a stream player's cast settings (admins only). Every zone named must exist, once, on the player's
   * amplifier; the delay is whole minutes from 1 to MAX_CAST_OFF_MINUTES, or null. A refusal changes nothing.
   */
  set(caller: Caller, playerId: string, settings: CastSettings): CastSettings {
    requireAdmin(caller, "changing a player's cast settings");
    const player = this.deps.players.get(caller, playerId);
    const minutes = settings.offAfterMinutes;
    if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_CAST_OFF_MINUTES))
      throw invalid(
        `"offAfterMinutes" must be null (never) or a whole number from 1 to ${MAX_CAST_OFF_MINUTES}, got ${minutes}`,
        { offAfterMinutes: [`must be null or a whole number from 1 to ${MAX_CAST_OFF_MINUTES}`] },
      );
    const ids = settings.wakeZoneIds;
    if (ids !== null) {
      const row = this.deps.rows.player(player.id)!;
      const seen = new Set<string>();
      ids.forEach((id, i) => {
        const field = `wakeZoneIds.${i}`;
        if (seen.has(id))
          throw invalid(`"${field}" names zone ${id} twice: name each zone once`, {
            [field]: ['is a zone named twice'],
          });
        seen.add(id);
        const zone = this.deps.rows.zone(id);
        if (!zone)
          throw invalid(`"${field}" names no zone (${id}): use the id of a zone from GET /api/zones`, {
            [field]: ['names no zone'],
          });
        if (zone.output_amplifier !== row.input_amplifier || zone.output_driver !== row.input_driver)
          throw invalid(
            `"${field}": zone "${zone.name}" is on another amplifier than player "${player.name}", which can feed only zones of its own`,
            { [field]: ["is a zone of another amplifier than the player's"] },
          );
      });
    }
    streamPlayer(player);
    const stored: CastSettings = { wakeZoneIds: ids === null ? null : [...ids].sort(), offAfterMinutes: minutes };
    this.deps.store.transaction(() => this.deps.repo.set(player.id, stored));
    return this.deps.repo.of(player.id);
  }

  /**
   * The casting runtime's word that the player's output changed hands. A cast taking it wakes the rooms and
   * cancels a pending power-off; a cast ending (nobody holds it) starts the power-off when the player has one set;
   * the playlist taking it (a person's Play) ends the cast's hold on its rooms.
   */
  holderChanged(playerId: string, holder: OutputHolder): void {
    const rooms = this.rooms(playerId);
    const before = rooms.holder;
    rooms.holder = holder;
    if (isCast(holder)) {
      this.cancel(rooms);
      if (holder !== before) this.wake(playerId, rooms);
    } else if (holder === 'mpd') {
      this.forget(playerId);
    } else if (isCast(before)) {
      this.schedule(playerId, rooms);
    }
  }

  /** Whether a power-off is pending for the player (tests, the log). */
  pending(playerId: string): boolean {
    return this.players.get(playerId)?.timer !== undefined;
  }

  private rooms(playerId: string): PlayerRooms {
    let rooms = this.players.get(playerId);
    if (!rooms) {
      rooms = { holder: null, woken: new Set(), timer: undefined };
      this.players.set(playerId, rooms);
    }
    return rooms;
  }

  /**
   * Attaches the wake zones not on the player (routing its input, powering on and unmuting, as attach does) and
   * powers on those on it that are off (as a person's power-on does): turn-on volume and limits apply as on every
   * path. A zone that cannot answer is left, and logged.
   */
  private wake(playerId: string, rooms: PlayerRooms): void {
    const { rows, repo, log } = this.deps;
    const chosen = repo.of(playerId).wakeZoneIds;
    const ids = chosen ?? rows.zonesOfPlayer(playerId).map((zone) => zone.id);
    const caller = this.deps.caller(playerId);
    this.acting = true;
    try {
      for (const id of ids) {
        const zone = rows.zone(id);
        if (!zone) continue;
        try {
          if (zone.player_id !== playerId) this.deps.players.attachZones(caller, playerId, [id]);
          else if (zone.power === 0) this.logged(this.deps.zones.setPower(caller, id, true), playerId, id);
          else continue;
          rooms.woken.add(id);
        } catch (err) {
          log.warn(
            { player: playerId, zoneId: id, err: (err as Error).message },
            'a room could not be woken for a cast',
          );
        }
      }
    } finally {
      this.acting = false;
    }
  }

  /** The cast ended: the zones it woke power off after the player's delay, if it has one. */
  private schedule(playerId: string, rooms: PlayerRooms): void {
    this.cancel(rooms);
    const minutes = this.deps.repo.of(playerId).offAfterMinutes;
    if (minutes === null || rooms.woken.size === 0) return;
    rooms.timer = this.clock.setTimeout(() => this.powerOff(playerId), minutes * 60_000);
  }

  /** Powers off the zones the cast woke that are still on and on the player, as a person's power-off does. */
  private powerOff(playerId: string): void {
    const rooms = this.players.get(playerId);
    if (!rooms) return;
    rooms.timer = undefined;
    const caller = this.deps.caller(playerId);
    const woken = [...rooms.woken];
    rooms.woken.clear();
    this.acting = true;
    try {
      for (const id of woken) {
        const zone = this.deps.rows.zone(id);
        if (zone?.player_id !== playerId || zone.power === 0) continue;
        try {
          this.logged(this.deps.zones.setPower(caller, id, false), playerId, id);
          this.deps.log.info(
            { player: playerId, zoneId: id },
            'a room woken for a cast was powered off after it ended',
          );
        } catch (err) {
          this.deps.log.warn(
            { player: playerId, zoneId: id, err: (err as Error).message },
            'a room woken for a cast could not be powered off',
          );
        }
      }
    } finally {
      this.acting = false;
    }
  }

  private logged(committed: Promise<void>, playerId: string, zoneId: string): void {
    committed.catch((err: Error) =>
      this.deps.log.warn({ player: playerId, zoneId, err: err.message }, "a room's power change for a cast failed"),
    );
  }

  /**
   * Someone else's change: a woken zone whose power a keypad or a person changed is theirs from then on, and once
   * the cast ended so is one whose volume or mute they changed; zones attached or detached on the player cancel the
   * pending power-off. A player deleted or a restore forgets everything.
   */
  private heard(event: BusEvent): void {
    if (this.acting) return;
    switch (event.type) {
      case 'zone.powerChanged':
        this.leave(event.payload.zoneId, false);
        return;
      case 'zone.volumeChanged':
      case 'zone.mutedChanged':
        this.leave(event.payload.zoneId, true);
        return;
      case 'zone.deleted':
        this.leave(event.payload.zoneId, false);
        return;
      case 'player.zonesChanged': {
        const rooms = this.players.get(event.payload.playerId);
        if (rooms?.timer !== undefined) this.forget(event.payload.playerId);
        return;
      }
      case 'player.deleted':
        this.forget(event.payload.playerId);
        return;
      case 'configuration.replaced':
        for (const id of [...this.players.keys()]) this.forget(id);
        return;
    }
  }

  /** A woken zone someone else changed is left to them (`afterCast`: only once the cast ended). */
  private leave(zoneId: string, afterCast: boolean): void {
    for (const rooms of this.players.values()) {
      if (afterCast && isCast(rooms.holder)) continue;
      rooms.woken.delete(zoneId);
      if (rooms.woken.size === 0) this.cancel(rooms);
    }
  }

  private cancel(rooms: PlayerRooms): void {
    if (rooms.timer !== undefined) this.clock.clearTimeout(rooms.timer);
    rooms.timer = undefined;
  }

  private forget(playerId: string): void {
    const rooms = this.players.get(playerId);
    if (!rooms) return;
    this.cancel(rooms);
    rooms.woken.clear();
    if (!isCast(rooms.holder)) this.players.delete(playerId);
  }
}

/** Cast settings are a stream player's (409 otherwise, saying how to make it one), as its receivers are. */
function streamPlayer(player: PlayerView): void {
  if (player.output !== null) return;
  throw conflict(
    `cast settings need a stream player: give player "${player.name}" an output first ` +
      `(PUT /api/players/${player.id} {"output": {"kind": "alsa", "device": …}})`,
  );
}
