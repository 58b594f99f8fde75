// The typed domain events and the in-process bus that numbers them and keeps a replay ring.
import { type Static, Type as T, type TSchema } from '@sinclair/typebox';
import { AnnouncementSchema, EngineSchema, PlaybackSchema, SKIP_REASONS } from './playback-views.js';
import { ReceiverSchema } from './receiver-views.js';
import { SceneSchema, type SceneView } from './scene-views.js';
import {
  AmplifierStatusSchema,
  InputDeviceSchema,
  type InputDeviceView,
  PlayerSchema,
  type PlayerView,
  ZoneSchema,
  ZoneToneSchema,
  type ZoneView,
} from './views.js';

const Id = T.String({ format: 'uuid' });
const Volume = T.Number({ minimum: 0, maximum: 1 });
const event = <K extends string, P extends TSchema>(type: K, payload: P, description: string) =>
  T.Object({ type: T.Literal(type), payload }, { description });

export const PLAYLIST_CHANGE_REASONS = [
  'tracksRemoved',
  'reordered',
  'tracksAdded',
  'favorite',
  'created',
  'deleted',
] as const;

/** Every event the bus carries: the one definition the stream, the OpenAPI document and the dashboard follow. */
export const DomainEventSchema = T.Union([
  event(
    'player.volumeChanged',
    T.Object({ playerId: Id, volume: Volume }),
    'group volume changed: the average of the attached zones, by any path (zone volume, keypad, attach, detach, limits, scenes)',
  ),
  event(
    'player.zonesChanged',
    T.Object({ playerId: Id, zoneIds: T.Array(Id) }),
    'zones attached, detached or moved (non-admins see only their zones)',
  ),
  event('player.created', T.Object({ player: PlayerSchema }), 'a player was created'),
  event('player.updated', T.Object({ player: PlayerSchema }), 'a player was renamed'),
  event('player.deleted', T.Object({ playerId: Id }), 'a player was deleted'),
  event(
    'zone.volumeChanged',
    T.Object({ zoneId: Id, volume: Volume }),
    'zone volume set by the API or on the amplifier',
  ),
  event('zone.mutedChanged', T.Object({ zoneId: Id, muted: T.Boolean() }), 'zone muted or unmuted'),
  event('zone.powerChanged', T.Object({ zoneId: Id, power: T.Boolean() }), 'zone switched on or off'),
  event('zone.created', T.Object({ zone: ZoneSchema }), 'a zone was created (or found on a new amplifier unit)'),
  event('zone.updated', T.Object({ zone: ZoneSchema }), 'a zone was renamed or its volume limits changed'),
  event('zone.deleted', T.Object({ zoneId: Id }), 'a zone was deleted'),
  event(
    'zone.availabilityChanged',
    T.Object({
      zoneId: Id,
      available: T.Boolean(),
      reason: T.Union([T.String(), T.Null()], {
        description: 'why the zone cannot take writes (its amplifier and unit); null when available again',
      }),
    }),
    "a zone's amplifier unit stopped answering (writes to the zone answer 409) or answers again",
  ),
  event(
    'zone.sleepChanged',
    T.Object({
      zoneId: Id,
      sleepUntil: T.Union([T.String({ format: 'date-time' }), T.Null()], {
        description: 'when the sleep timer powers the zone off; null: no timer',
      }),
    }),
    'a sleep timer was set, cancelled, or ended (it fired, or the zone was powered off)',
  ),
  event(
    'zone.toneChanged',
    T.Object({ zoneId: Id, tone: ZoneToneSchema }),
    "a zone's tone changed: set by the API or a scene, or on the amplifier (a keypad, the front panel); the whole tone as the zone shows it",
  ),
  event(
    'zone.statusChanged',
    T.Object({ zoneId: Id, amplifierStatus: AmplifierStatusSchema }),
    'what the amplifier reports about the zone changed (a page began or ended, do-not-disturb, party mode); the whole status as the zone shows it',
  ),
  event(
    'playlist.changed',
    T.Object({ playlistId: Id, reason: T.Union(PLAYLIST_CHANGE_REASONS.map((r) => T.Literal(r))) }),
    'a playlist was created, deleted, edited, reordered or (un)marked favorite',
  ),
  event(
    'playlist.exported',
    T.Object({ playlistId: Id, filePath: T.String() }),
    'a playlist was written to the export directory',
  ),
  event(
    'inputDevice.favoriteChanged',
    T.Object({ inputDeviceId: Id, isFavorite: T.Boolean() }),
    'input favorite changed',
  ),
  event('inputDevice.created', T.Object({ inputDevice: InputDeviceSchema }), 'an input device was created'),
  event(
    'inputDevice.updated',
    T.Object({ inputDevice: InputDeviceSchema }),
    'an input device was renamed or its kind changed',
  ),
  event('inputDevice.deleted', T.Object({ inputDeviceId: Id }), 'an input device was deleted'),
  event(
    'scene.created',
    T.Object({ scene: SceneSchema }),
    'a scene was saved (non-admins: only scenes whose zones they all see)',
  ),
  event('scene.updated', T.Object({ scene: SceneSchema }), 'a scene was renamed or its captured values edited'),
  event(
    'scene.deleted',
    T.Object({ sceneId: Id, zoneIds: T.Array(Id, { description: 'the zones the scene covered (who may see it)' }) }),
    'a scene was deleted',
  ),
  event(
    'scene.applied',
    T.Object({
      sceneId: T.Union([Id, T.Literal('undo')], {
        description: 'the scene applied, or "undo" for POST /api/scenes/undo',
      }),
      zoneIds: T.Array(Id, { description: 'the zones the apply set' }),
    }),
    'a scene (or the undo slot) was applied; the zone and player events of the change come with it',
  ),
  event(
    'hardware.status',
    T.Object({
      driver: T.String(),
      online: T.Boolean(),
      amplifier: T.Optional(T.String({ description: 'name of the amplifier whose link changed' })),
    }),
    'an amplifier link went up or down',
  ),
  event('user.changed', T.Object({ userId: Id }), 'a user changed (admins only)'),
  event(
    'player.playbackChanged',
    T.Object({ playerId: Id, playback: PlaybackSchema }),
    "a stream player's playback changed: state, track, tags, playlist, a seek, an announcement (the player's state follows it)",
  ),
  event(
    'player.position',
    T.Object({
      playerId: Id,
      positionMs: T.Integer({ minimum: 0 }),
      durationMs: T.Union([T.Integer({ minimum: 0 }), T.Null()]),
      positionAt: T.String({ format: 'date-time' }),
    }),
    'where a playing stream player is in its track: at most once a second per player',
  ),
  event(
    'player.trackSkipped',
    T.Object({
      playerId: Id,
      trackId: T.Union([Id, T.Null()], { description: 'the playlist track, when it is one' }),
      index: T.Union([T.Integer({ minimum: 0 }), T.Null()]),
      uri: T.String(),
      reason: T.Union(
        SKIP_REASONS.map((r) => T.Literal(r)),
        {
          description:
            'missing (no such file), unreachable (a stream that cannot be fetched), unknown-format, refused (not a URI the appliance plays), other',
        },
      ),
      detail: T.String(),
    }),
    'a track that cannot play was passed over; the queue goes on',
  ),
  event(
    'player.engineChanged',
    T.Object({
      playerId: Id,
      engine: EngineSchema,
      recovery: T.Union([T.Literal('fresh'), T.Literal('restored'), T.Literal('lost'), T.Null()], {
        description:
          'when it came back up: fresh (nothing to give back), restored (queue, track, position and state are back), lost (why in detail)',
      }),
    }),
    "a stream player's MPD went down, came up, could not start, or an output could not open",
  ),
  event(
    'player.receiverChanged',
    T.Object({ playerId: Id, receiver: ReceiverSchema }),
    "a stream player's receiver was switched on or off, or how it runs changed (started, stopped, restarting, a cast began or ended); the whole receiver as GET …/receivers shows it",
  ),
  event('library.scanChanged', T.Object({ scanning: T.Boolean() }), 'a rescan of the music folder began or ended'),
  event(
    'announcement.queued',
    T.Object({ announcement: AnnouncementSchema }),
    'an announcement waits its turn (non-admins: when they see all its zones)',
  ),
  event(
    'announcement.started',
    T.Object({ announcement: AnnouncementSchema }),
    'an announcement began to play; the zone events of the change come with it',
  ),
  event(
    'announcement.ended',
    T.Object({ announcement: AnnouncementSchema }),
    'an announcement played, failed or was cancelled, and what it changed was put back (kept lists what was not)',
  ),
]);

/** Sent only on the stream: a resume it cannot serve, or a change of what the client may see. */
export const StreamResetSchema = event(
  'stream.reset',
  T.Object({ reason: T.String() }),
  'missed events are gone: refetch state',
);

/** Every type a client can receive on the stream, from the schemas above (the stream's documentation lists these). */
export const STREAM_EVENT_TYPES: string[] = [...DomainEventSchema.anyOf, StreamResetSchema].map(
  (schema) => schema.properties.type.const,
);

export type DomainEvent = Static<typeof DomainEventSchema>;
export type PlaylistChangeReason = (typeof PLAYLIST_CHANGE_REASONS)[number];
export type { InputDeviceView, PlayerView, SceneView, ZoneView };

/**
 * A published event: `seq` numbers it within this run of the daemon, `id` is what the stream sends (see eventId).
 */
export type StampedEvent = DomainEvent & { id: string; seq: number };

/**
 * An event's id on the stream: `<run>-<seq>`. `run` counts the daemon's starts (kept in the database), `seq` its
 * events since this start. The sequence starts again at 1 each run, so without the run a client that saw `5` before a
 * restart would resume from the new run's 6th event and silently miss the first five.
 */
export const eventId = (run: number, seq: number): string => `${run}-${seq}`;

/** What an event id looks like (a query parameter's pattern); a bare number is an id of a version before runs. */
export const EVENT_ID_PATTERN = '^([0-9]{1,9}-)?[0-9]{1,15}$';
const EVENT_ID = /^(\d{1,9})-(\d{1,15})$/;

const RESTARTED = 'the daemon restarted since your Last-Event-ID; refetch state';

/** What a resume from a Last-Event-ID gets: the events after it, or why they cannot be replayed. */
export type Replay = { events: StampedEvent[] } | { reset: string };

/**
 * Events for in-process subscribers only: never numbered, kept for replay, documented or sent to any client.
 * - access.changed: a user's role, assignments, enabled state or credentials changed (or one of its sessions
 *   ended), so whoever holds that user's caller (an open stream) must re-check it.
 * - assignments.dropped: a player or zone deleted left these users' assignment lists (their access changed).
 * - configuration.replaced: a restore replaced every row at once, without the events of each change: each service
 *   that keeps something of the rows reloads it, and what clients hold (sessions, event streams) ends. The bus
 *   forgets its history first (a client resuming from before gets `stream.reset`).
 */
export type InternalEvent =
  | { type: 'access.changed'; payload: { userId: string } }
  | { type: 'assignments.dropped'; payload: { userIds: string[] } }
  | { type: 'configuration.replaced'; payload: Record<string, never> };

/** What a subscriber that asked for internal events receives. */
export type BusEvent = StampedEvent | InternalEvent;

const INTERNAL_TYPES = new Set<string>(['access.changed', 'assignments.dropped', 'configuration.replaced']);

export const isInternal = (event: DomainEvent | BusEvent): event is InternalEvent => INTERNAL_TYPES.has(event.type);

/**
 * When a subscriber hears an event, relative to the others: each stage before the next, whatever the order they
 * subscribed in; within a stage, in the order of subscription. `stored`: what keeps the stored rows in memory
 * rereads them (everything after reads them); `services` (the default): services follow; `clients`: what clients
 * hold ends last (cached callers, event streams), once every service shows the new state.
 */
export const DELIVERY_STAGES = ['stored', 'services', 'clients'] as const;
export type DeliveryStage = (typeof DELIVERY_STAGES)[number];
export interface SubscribeOptions {
  /** Internal events too (never to be passed on to a client). */
  internal: true;
  stage?: DeliveryStage;
}

export type EventListener = (event: StampedEvent) => void;

/**
 * The events most often published (a volume PUT makes three) are kept in the replay ring as their parts: the id of
 * what changed, a string the state already holds, and the value in a typed array. Nothing of them is then left in
 * V8's young generation for the scavenger to copy and promote while they wait in the ring (docs/benchmarks.md).
 */
const COMPACT = {
  'player.volumeChanged': (ref: string, value: number) => ({ playerId: ref, volume: value }),
  'zone.volumeChanged': (ref: string, value: number) => ({ zoneId: ref, volume: value }),
} as const;
const compactRef = (event: DomainEvent): string | undefined =>
  event.type === 'player.volumeChanged'
    ? event.payload.playerId
    : event.type === 'zone.volumeChanged'
      ? event.payload.zoneId
      : undefined;

/** Told of a subscriber's exception: who registered it, and the type of the event it failed on. */
export type SubscriberErrorSink = (owner: string, type: string, error: unknown) => void;

export class EventBus {
  /** Per slot of the ring: the event's type; its payload, or for a compact type the id in it; the compact value. */
  private readonly types: Array<DomainEvent['type'] | undefined>;
  private readonly refs: unknown[];
  private readonly values: Float64Array;
  private nextSeq = 1;
  /** Events up to this sequence number are not replayed: the state they describe was replaced (forgetHistory). */
  private replayFloor = 0;
  /**
   * Each listener, with the owner that registered it, whether it asked for internal events too, and its stage: kept
   * in the order of delivery (by stage, then by subscription).
   */
  private listeners = new Map<(event: BusEvent) => void, { owner: string; internal: boolean; stage: number }>();
  /** Where a subscriber's exception goes, with its owner and the event's type (the composition root logs it). */
  onSubscriberError: SubscriberErrorSink = (owner, type, error) => {
    console.error(
      `azcd: event subscriber "${owner}" failed on ${type}: ${error instanceof Error ? error.message : String(error)}`,
    );
  };

  /** `run`: this start's number (Store-kept, one more each start), the prefix of every id this bus hands out. */
  constructor(
    readonly capacity = 4096,
    readonly run = 1,
  ) {
    this.types = new Array(capacity).fill(undefined);
    this.refs = new Array(capacity).fill(undefined);
    this.values = new Float64Array(capacity);
  }

  /** The sequence number of the last event published in this run (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** The id of the last event published (`<run>-0` before the first): a reset sent with it is resumed from here. */
  get lastId(): string {
    return eventId(this.run, this.lastSeq);
  }

  /**
   * Numbers a domain event, keeps it for replay and delivers it; an internal event is only delivered (after a
   * `configuration.replaced`, nothing before it is replayed: forgetHistory).
   */
  publish(event: DomainEvent): StampedEvent;
  publish(event: InternalEvent): void;
  publish(event: DomainEvent | InternalEvent): StampedEvent | undefined {
    if (isInternal(event)) {
      if (event.type === 'configuration.replaced') this.forgetHistory();
      this.deliver(event, true);
      return undefined;
    }
    // One object shape for every stamped event (a spread of events of many shapes is slow).
    const seq = this.nextSeq++;
    const stamped = { type: event.type, payload: event.payload, id: eventId(this.run, seq), seq } as StampedEvent;
    const slot = seq % this.capacity;
    const ref = compactRef(event);
    this.types[slot] = event.type;
    if (ref === undefined) this.refs[slot] = event.payload;
    else {
      this.refs[slot] = ref;
      this.values[slot] = (event.payload as { volume: number }).volume;
    }
    this.deliver(stamped, false);
    return stamped;
  }

  /**
   * Domain events only, unless `internal` is asked for: then internal events too, which the subscriber must
   * never pass on to a client. Heard in its stage (DELIVERY_STAGES; `services` unless given).
   */
  subscribe(owner: string, listener: (event: BusEvent) => void, options: SubscribeOptions): () => void;
  subscribe(owner: string, listener: EventListener, options?: { stage: DeliveryStage }): () => void;
  subscribe(
    owner: string,
    listener: EventListener | ((event: BusEvent) => void),
    options?: { internal?: true; stage?: DeliveryStage },
  ): () => void {
    // A listener without the option is only ever called with domain events (see deliver()).
    const wide = listener as (event: BusEvent) => void;
    const stage = DELIVERY_STAGES.indexOf(options?.stage ?? 'services');
    this.listeners.set(wide, { owner, internal: options?.internal === true, stage });
    // Rare (a service subscribes when it starts), so the order is kept here rather than worked out per event.
    this.listeners = new Map([...this.listeners].sort(([, a], [, b]) => a.stage - b.stage));
    return () => this.listeners.delete(wide);
  }

  /** Undoes every subscription `owner` made (a service that stops); how many there were. */
  removeListeners(owner: string): number {
    let removed = 0;
    for (const [listener, entry] of this.listeners) {
      if (entry.owner !== owner) continue;
      this.listeners.delete(listener);
      removed++;
    }
    return removed;
  }

  private deliver(event: BusEvent, internal: boolean): void {
    for (const [listener, entry] of this.listeners) {
      if (internal && !entry.internal) continue;
      try {
        listener(event);
      } catch (error) {
        // A faulty subscriber must not break publishing for the rest; it is named, never silent.
        this.onSubscriberError(entry.owner, event.type, error);
      }
    }
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /**
   * After the whole state was replaced underneath (a restore): a client resuming from any event so far holds state
   * no event describes, so it gets `stream.reset` and refetches.
   */
  forgetHistory(): void {
    this.replayFloor = this.lastSeq;
  }

  /**
   * The events after `lastEventId` (a Last-Event-ID as the client sent it), oldest first, or why they cannot be
   * replayed: an id of another run (the daemon restarted), of events that left the ring or whose history was
   * forgotten, or one this run never handed out. Never a silent gap.
   */
  replay(lastEventId: string): Replay {
    const match = EVENT_ID.exec(lastEventId);
    const unknown = { reset: 'your Last-Event-ID is not an event id of this daemon; refetch state' };
    // A bare number is an id of a version before runs: one from before a restart too.
    if (!match) return /^\d+$/.test(lastEventId) ? { reset: RESTARTED } : unknown;
    if (Number(match[1]) !== this.run) return { reset: RESTARTED };
    const seq = Number(match[2]);
    if (seq > this.lastSeq) return unknown;
    if (this.replayFloor > 0 && seq <= this.replayFloor)
      return { reset: 'the configuration was restored since your Last-Event-ID; refetch state' };
    const oldest = Math.max(1, this.nextSeq - this.capacity);
    if (seq + 1 < oldest) return { reset: 'the events after your Last-Event-ID are no longer kept; refetch state' };
    const events: StampedEvent[] = [];
    for (let s = seq + 1; s < this.nextSeq; s++) events.push(this.kept(s));
    return { events };
  }

  /** The event numbered `seq`, still in the ring, as it was published. */
  private kept(seq: number): StampedEvent {
    const slot = seq % this.capacity;
    const type = this.types[slot]!;
    const ref = this.refs[slot];
    const payload = type in COMPACT ? COMPACT[type as keyof typeof COMPACT](ref as string, this.values[slot]!) : ref;
    return { type, payload, id: eventId(this.run, seq), seq } as StampedEvent;
  }
}
