// The typed domain events and the in-process bus that numbers them and keeps a replay ring.

export interface PlayerView {
  id: string;
  name: string;
  volume: number;
  zoneIds: string[];
  input: { driver: string; channel: number };
  state: 'playing' | 'idle';
}

export interface ZoneView {
  id: string;
  name: string;
  volume: number;
  muted: boolean;
  power: boolean;
  playerId: string | null;
  output: { driver: string; channel: number };
}

export interface InputDeviceView {
  id: string;
  name: string;
  kind: string;
  input: { driver: string; channel: number };
  isFavorite: boolean;
}

export type PlaylistChangeReason = 'tracksRemoved' | 'reordered' | 'tracksAdded' | 'favorite' | 'created' | 'deleted';

export type DomainEvent =
  | { type: 'player.volumeChanged'; payload: { playerId: string; volume: number } }
  | { type: 'player.zonesChanged'; payload: { playerId: string; zoneIds: string[] } }
  | { type: 'player.created'; payload: { player: PlayerView } }
  | { type: 'player.updated'; payload: { player: PlayerView } }
  | { type: 'player.deleted'; payload: { playerId: string } }
  | { type: 'zone.volumeChanged'; payload: { zoneId: string; volume: number } }
  | { type: 'zone.mutedChanged'; payload: { zoneId: string; muted: boolean } }
  | { type: 'zone.powerChanged'; payload: { zoneId: string; power: boolean } }
  | { type: 'zone.created'; payload: { zone: ZoneView } }
  | { type: 'zone.deleted'; payload: { zoneId: string } }
  | { type: 'playlist.changed'; payload: { playlistId: string; reason: PlaylistChangeReason } }
  | { type: 'playlist.exported'; payload: { playlistId: string; filePath: string } }
  | { type: 'inputDevice.favoriteChanged'; payload: { inputDeviceId: string; isFavorite: boolean } }
  | { type: 'inputDevice.created'; payload: { inputDevice: InputDeviceView } }
  | { type: 'inputDevice.deleted'; payload: { inputDeviceId: string } }
  | { type: 'hardware.status'; payload: { driver: string; online: boolean } }
  | { type: 'user.changed'; payload: { userId: string } };

export type EventType = DomainEvent['type'];

/** The stream-only event telling a resuming client that its gap is gone and it must refetch. */
export interface StreamResetEvent {
  type: 'stream.reset';
  payload: { reason: string };
}

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
