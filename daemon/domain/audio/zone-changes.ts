// The one way zone changes are committed, from the API and from the amplifier alike: rows written, sleep timers
// ended by a power-off, player volumes derived from their zones, and the events that describe all of it.

import type { AudioRepo, PlayerRow, ZoneRow } from '../../store/audio-repo.js';
import type { Store } from '../../store/db.js';
import type { DomainEvent, EventBus } from '../shared/index.js';
import { publishZoneEvents, zonesChangedEvent } from './audio-views.js';
import { averageZoneVolume } from './volume-rule.js';

export interface ZoneChange {
  before: Readonly<ZoneRow>;
  next: ZoneRow;
}

export class ZoneCommits {
  constructor(
    private readonly store: Store,
    private readonly repo: AudioRepo,
    /** Where zone changes are announced (a scene's tone change too, announced once the tone is the zone's). */
    readonly bus: EventBus,
  ) {}

  /**
   * A player's volume: the average of its attached zones among `zones` (all of them by default; a caller's view
   * passes the ones it may see), so the number describes what those rooms play; without any, its stored volume, which
   * follows all its zones (see playerVolumeEvents).
   */
  playerVolume(player: Readonly<PlayerRow>, zones: readonly Readonly<ZoneRow>[] = this.repo.zones()): number {
    return averageZoneVolume(zones, player.id) ?? player.volume;
  }

  /**
   * Writes zone changes and publishes their events; resolves once committed. `durable` commits in its own
   * transaction (routing changes), otherwise in the group commit of high-rate device state. A zone that ends off
   * loses its sleep timer. `players` names players to re-derive besides those the zones leave or join;
   * `alongside` writes something else in the same commit (a zone's settings with the volume they pulled down).
   */
  commit(
    changes: readonly ZoneChange[],
    options: { durable?: boolean; players?: readonly string[]; alongside?: () => void } = {},
  ): Promise<void> {
    // A volume PUT comes through here at slider rate: plain loops, and no row copied unless it must change.
    let rows = changes;
    if (changes.some((change) => change.next.power === 0 && change.next.sleep_until !== null)) {
      rows = changes.map(({ before, next }) => ({
        before,
        next: next.power === 0 ? { ...next, sleep_until: null } : next,
      }));
    }
    const players = new Set(options.players);
    for (const { before, next } of rows) {
      if (before.player_id) players.add(before.player_id);
      if (next.player_id) players.add(next.player_id);
    }
    const volumes = this.playerVolumes(players);
    let events: DomainEvent[] = [];
    const write = () => {
      options.alongside?.();
      for (const { next } of rows) this.repo.updateZone(next);
      events = this.playerVolumeEvents(volumes);
    };
    let committed: Promise<void>;
    if (options.durable) {
      this.store.transaction(write);
      committed = Promise.resolve();
    } else {
      committed = this.store.commitSoon(write);
    }
    for (const { before, next } of rows) {
      publishZoneEvents(this.bus, before, next);
      if (before.sleep_until !== next.sleep_until) this.bus.publish(sleepChangedEvent(next));
    }
    this.publishMembership(rows);
    for (const event of events) this.bus.publish(event);
    return committed;
  }

  /** The derived volumes of some players now, to compare with after a change (see playerVolumeEvents). */
  playerVolumes(playerIds: Iterable<string>): Map<string, number> {
    const volumes = new Map<string, number>();
    for (const id of playerIds) {
      const player = this.repo.player(id);
      if (player) volumes.set(id, this.playerVolume(player));
    }
    return volumes;
  }

  /**
   * The events announcing each player whose derived volume moved since `before`. The player's stored volume follows
   * its zones (the average of all of them), written with them: a caller who may see the player but none of its zones
   * reads that value, the same one an Admin reads, and a player whose last zone left keeps what it showed. Runs
   * inside the caller's write.
   */
  playerVolumeEvents(before: ReadonlyMap<string, number>): DomainEvent[] {
    const events: DomainEvent[] = [];
    for (const [id, was] of before) {
      const player = this.repo.player(id);
      if (!player) continue;
      const volume = averageZoneVolume(this.repo.zones(), id) ?? was;
      if (volume !== player.volume) this.repo.setPlayerVolume(id, volume);
      if (volume !== was) events.push({ type: 'player.volumeChanged', payload: { playerId: id, volume } });
    }
    return events;
  }

  /**
   * Brings every stored player volume to its zones' average, in one transaction: a database written before the
   * stored volume followed the zones (or a backup of one) would otherwise show a stale value until the zones change.
   */
  storePlayerVolumes(): void {
    const zones = this.repo.zones();
    this.store.transaction(() => {
      for (const player of this.repo.players()) {
        const volume = averageZoneVolume(zones, player.id);
        if (volume !== undefined && volume !== player.volume) this.repo.setPlayerVolume(player.id, volume);
      }
    });
  }

  /** player.zonesChanged for each player a zone left or joined. */
  private publishMembership(rows: readonly ZoneChange[]): void {
    let moved: Set<string> | undefined;
    for (const { before, next } of rows) {
      if (before.player_id === next.player_id) continue;
      moved ??= new Set();
      if (before.player_id) moved.add(before.player_id);
      if (next.player_id) moved.add(next.player_id);
    }
    if (moved) for (const id of moved) this.bus.publish(zonesChangedEvent(this.repo, id));
  }
}

export function sleepChangedEvent(zone: Readonly<ZoneRow>): DomainEvent {
  return {
    type: 'zone.sleepChanged',
    payload: {
      zoneId: zone.id,
      sleepUntil: zone.sleep_until === null ? null : new Date(zone.sleep_until).toISOString(),
    },
  };
}
