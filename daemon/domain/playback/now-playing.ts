// What each stream player plays, as the API and the events show it: the engine's status joined with the playlist it
// plays, the engine's events turned into domain events (positions at most once a second), and the player's state.
import type { PlaybackEvent, PlaybackStatus } from '../../../drivers/playback.js';
import type { Clock, EventBus, PlaybackView, TrackSkipReason } from '../shared/index.js';
import type { StreamEngines } from './engines.js';

/** What a player plays besides what its engine knows: the playlist, and which of its tracks each queue entry is. */
export interface Session {
  /** The playlist played; null for a URI played on its own (or an announcement). */
  playlistId: string | null;
  /** The playlist track of each entry of the engine's queue (null: not a playlist track). */
  trackIds: Array<string | null>;
  /** Tracks of the playlist the engine refused (left out of the queue; each reported once). */
  refused: Set<string>;
  /** The playlist changed while the queue could not follow (an announcement played, MPD restarted): follow it when it can. */
  stale: boolean;
}

export const emptySession = (): Session => ({ playlistId: null, trackIds: [], refused: new Set(), stale: false });

/** Position events of one player are at least this far apart. */
export const POSITION_INTERVAL_MS = 1000;

const NOTHING: PlaybackStatus = {
  state: 'stopped',
  queueLength: 0,
  index: null,
  uri: null,
  title: null,
  artist: null,
  album: null,
  name: null,
  durationMs: null,
  positionMs: 0,
  positionAt: 0,
};

export class NowPlaying {
  readonly sessions = new Map<string, Session>();
  /** The announcement each player plays now. */
  readonly announcing = new Map<string, string>();
  /** The last view published per player, positions aside: a view is published again only when something else changed. */
  private readonly published = new Map<string, string>();
  private readonly lastPosition = new Map<string, number>();
  /**
   * The queue entry each player's engine passed over last (it could not play). Stopped on it, MPD names it as its
   * current song again on a later read: the player shows nothing playing instead, as it did when the entry failed.
   */
  private readonly passedOver = new Map<string, number>();
  /** Players that showed nothing playing when their announcement began. */
  private readonly idleBefore = new Set<string>();
  /**
   * Players given back after an announcement that showed nothing playing before it: MPD reads the first entry of the
   * queue put back as its current song all the same, so the view shows nothing.
   */
  private readonly nothingCurrent = new Set<string>();

  constructor(
    private readonly engines: StreamEngines,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  /** The playback of a stream player as the API shows it. */
  view(playerId: string): PlaybackView {
    const engine = this.engines.view(playerId) ?? { state: 'stopped', detail: null };
    let status = this.engines.engineOf(playerId)?.status() ?? NOTHING;
    if (status.state !== 'stopped') {
      // Something plays: what the engine says is current counts again.
      this.nothingCurrent.delete(playerId);
      this.passedOver.delete(playerId);
    } else if (
      status.index !== null &&
      (this.nothingCurrent.has(playerId) || this.passedOver.get(playerId) === status.index)
    ) {
      status = { ...NOTHING, queueLength: status.queueLength, positionAt: status.positionAt };
    }
    const session = this.sessions.get(playerId);
    const index = status.index;
    return {
      playerId,
      engine,
      state: status.state,
      playlistId: session?.playlistId ?? null,
      trackId: index === null ? null : (session?.trackIds[index] ?? null),
      index,
      queueLength: status.queueLength,
      uri: status.uri,
      title: status.title,
      artist: status.artist,
      album: status.album,
      name: status.name,
      durationMs: status.durationMs,
      positionMs: Math.max(0, Math.round(status.positionMs)),
      positionAt: new Date(status.positionAt || this.clock.now()).toISOString(),
      announcementId: this.announcing.get(playerId) ?? null,
    };
  }

  /** Whether a stream player plays now (its player's `state`). */
  playing(playerId: string): boolean {
    return this.engines.up(playerId)?.status().state === 'playing';
  }

  /** The player plays announcement `id` from now on; what it shows now decides what it shows after (givenBack). */
  announce(playerId: string, id: string): void {
    const before = this.view(playerId);
    if (before.index === null && before.uri === null) this.idleBefore.add(playerId);
    else this.idleBefore.delete(playerId);
    this.announcing.set(playerId, id);
  }

  /** The announcement gave the player back: one that showed nothing playing before it shows nothing again. */
  givenBack(playerId: string): void {
    this.announcing.delete(playerId);
    if (this.idleBefore.delete(playerId)) this.nothingCurrent.add(playerId);
  }

  /** A transport command reached the player: what its engine says is current counts again. */
  used(playerId: string): void {
    this.nothingCurrent.delete(playerId);
    this.passedOver.delete(playerId);
  }

  /** The playlist track of a queue entry, if it is one. */
  trackAt(playerId: string, index: number | null): string | null {
    return index === null ? null : (this.sessions.get(playerId)?.trackIds[index] ?? null);
  }

  /** Publishes the player's playback when it differs from the last one published (positions aside), or always when forced. */
  refresh(playerId: string, force = false): void {
    if (!this.engines.view(playerId)) return;
    const playback = this.view(playerId);
    const key = JSON.stringify({ ...playback, positionMs: 0, positionAt: '' });
    if (!force && this.published.get(playerId) === key) return;
    this.published.set(playerId, key);
    this.bus.publish({ type: 'player.playbackChanged', payload: { playerId, playback } });
  }

  /** A track the player passed over, as the event says it. */
  skipped(
    playerId: string,
    skip: { index: number | null; trackId?: string | null; uri: string; reason: TrackSkipReason; detail: string },
  ): void {
    const trackId = skip.trackId === undefined ? this.trackAt(playerId, skip.index) : skip.trackId;
    this.bus.publish({
      type: 'player.trackSkipped',
      payload: { playerId, trackId, index: skip.index, uri: skip.uri, reason: skip.reason, detail: skip.detail },
    });
  }

  /** A player that is no stream player any more (or is gone). */
  forget(playerId: string): void {
    this.sessions.delete(playerId);
    this.announcing.delete(playerId);
    this.published.delete(playerId);
    this.lastPosition.delete(playerId);
    this.nothingCurrent.delete(playerId);
    this.passedOver.delete(playerId);
    this.idleBefore.delete(playerId);
  }

  /** The engines' events, as domain events. */
  handle(playerId: string, event: PlaybackEvent | { type: 'state' }): void {
    switch (event.type) {
      case 'state':
      case 'fault':
        this.engineChanged(playerId, null);
        this.refresh(playerId);
        return;
      case 'engine':
        if (event.up && event.recovery === 'lost') this.sessions.set(playerId, emptySession());
        this.engineChanged(playerId, event.up ? event.recovery : null);
        this.refresh(playerId);
        return;
      case 'playback':
        this.refresh(playerId, true);
        return;
      case 'position':
        this.position(playerId, event);
        return;
      case 'skipped':
        if (event.index !== null) this.passedOver.set(playerId, event.index);
        this.skipped(playerId, event);
        return;
      case 'library':
        return;
    }
  }

  private engineChanged(playerId: string, recovery: 'fresh' | 'restored' | 'lost' | null): void {
    const engine = this.engines.view(playerId);
    if (engine) this.bus.publish({ type: 'player.engineChanged', payload: { playerId, engine, recovery } });
  }

  /** At most one position event per player per POSITION_INTERVAL_MS of the domain's clock. */
  private position(playerId: string, event: Extract<PlaybackEvent, { type: 'position' }>): void {
    const now = this.clock.now();
    const last = this.lastPosition.get(playerId);
    if (last !== undefined && now - last < POSITION_INTERVAL_MS) return;
    this.lastPosition.set(playerId, now);
    this.bus.publish({
      type: 'player.position',
      payload: {
        playerId,
        positionMs: Math.max(0, Math.round(event.positionMs)),
        durationMs: event.durationMs,
        positionAt: new Date(event.at).toISOString(),
      },
    });
  }
}
