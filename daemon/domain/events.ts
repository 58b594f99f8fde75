// The typed domain events and the in-process bus that numbers them and keeps a replay ring.
import { Type as T, type Static, type TSchema } from '@sinclair/typebox';
import { InputDeviceSchema, PlayerSchema, ZoneSchema, type InputDeviceView, type PlayerView, type ZoneView } from './views.js';

const Id = T.String({ format: 'uuid' });
const Volume = T.Number({ minimum: 0, maximum: 1 });
const event = <K extends string, P extends TSchema>(type: K, payload: P, description: string) =>
  T.Object({ type: T.Literal(type), payload }, { description });

export const PLAYLIST_CHANGE_REASONS = ['tracksRemoved', 'reordered', 'tracksAdded', 'favorite', 'created', 'deleted'] as const;

/** Every event the bus carries: the one definition the stream, the OpenAPI document and the dashboard follow. */
export const DomainEventSchema = T.Union([
  event('player.volumeChanged', T.Object({ playerId: Id, volume: Volume }), 'group volume set'),
  event('player.zonesChanged', T.Object({ playerId: Id, zoneIds: T.Array(Id) }), 'zones attached, detached or moved (non-admins see only their zones)'),
  event('player.created', T.Object({ player: PlayerSchema }), 'a player was created'),
  event('player.updated', T.Object({ player: PlayerSchema }), 'a player was renamed'),
  event('player.deleted', T.Object({ playerId: Id }), 'a player was deleted'),
  event('zone.volumeChanged', T.Object({ zoneId: Id, volume: Volume }), 'zone volume set by the API or on the amplifier'),
  event('zone.mutedChanged', T.Object({ zoneId: Id, muted: T.Boolean() }), 'zone muted or unmuted'),
  event('zone.powerChanged', T.Object({ zoneId: Id, power: T.Boolean() }), 'zone switched on or off'),
  event('zone.created', T.Object({ zone: ZoneSchema }), 'a zone was created (or found on a new amplifier unit)'),
  event('zone.updated', T.Object({ zone: ZoneSchema }), 'a zone was renamed'),
  event('zone.deleted', T.Object({ zoneId: Id }), 'a zone was deleted'),
  event(
    'playlist.changed',
    T.Object({ playlistId: Id, reason: T.Union(PLAYLIST_CHANGE_REASONS.map((r) => T.Literal(r))) }),
    'a playlist was created, deleted, edited, reordered or (un)marked favorite',
  ),
  event('playlist.exported', T.Object({ playlistId: Id, filePath: T.String() }), 'a playlist was written to the export directory'),
  event('inputDevice.favoriteChanged', T.Object({ inputDeviceId: Id, isFavorite: T.Boolean() }), 'input favorite changed'),
  event('inputDevice.created', T.Object({ inputDevice: InputDeviceSchema }), 'an input device was created'),
  event('inputDevice.deleted', T.Object({ inputDeviceId: Id }), 'an input device was deleted'),
  event('hardware.status', T.Object({ driver: T.String(), online: T.Boolean() }), 'the amplifier link went up or down'),
  event('user.changed', T.Object({ userId: Id }), 'a user changed (admins only)'),
]);

/** Sent only on the stream, first, when a resume point is older than the replay ring. */
export const StreamResetSchema = event('stream.reset', T.Object({ reason: T.String() }), 'missed events are gone: refetch state');

export type DomainEvent = Static<typeof DomainEventSchema>;
export type PlaylistChangeReason = (typeof PLAYLIST_CHANGE_REASONS)[number];
export type { PlayerView, ZoneView, InputDeviceView };

export type StampedEvent = DomainEvent & { id: number };

export type EventListener = (event: StampedEvent) => void;

export class EventBus {
  private readonly ring: Array<StampedEvent | undefined>;
  private nextId = 1;
  private readonly listeners = new Set<EventListener>();

  constructor(readonly capacity = 4096) {
    this.ring = new Array(capacity);
  }

  get lastId(): number {
    return this.nextId - 1;
  }

  publish(event: DomainEvent): StampedEvent {
    const stamped = { ...event, id: this.nextId++ } as StampedEvent;
    this.ring[stamped.id % this.capacity] = stamped;
    for (const listener of this.listeners) {
      try {
        listener(stamped);
      } catch {
        // A faulty subscriber must not break publishing for the rest.
      }
    }
    return stamped;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** Events after `lastId`, oldest first; null when some of them have left the ring. */
  since(lastId: number): StampedEvent[] | null {
    if (lastId >= this.lastId) return lastId > this.lastId ? null : [];
    const oldest = Math.max(1, this.nextId - this.capacity);
    if (lastId + 1 < oldest) return null;
    const events: StampedEvent[] = [];
    for (let id = lastId + 1; id < this.nextId; id++) events.push(this.ring[id % this.capacity]!);
    return events;
  }
}
