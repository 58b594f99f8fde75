// What each stream player plays, as the API and the events show it: the engine's status joined with the playlist it
// plays, the engine's events turned into domain events (positions at most once a second), and the player's state.
// Each player's lane (serially) and everything kept per player are this file's own: other modules use the methods.
import { type PlaybackEvent, stoppedStatus } from '../../../drivers/playback.js';
import type { Clock, EventBus, PlaybackView, TrackSkipReason } from '../shared/index.js';
import type { CastArtwork, CastView } from './casting.js';
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

/** A session as other modules read it; they change it through NowPlaying's methods. */
export type SessionView = Readonly<Pick<Session, 'playlistId' | 'stale'>> & {
  readonly trackIds: ReadonlyArray<string | null>;
  readonly refused: ReadonlySet<string>;
};

/**
 * What the casting runtime (casting.ts) is told and asked by the player's transport and announcements, so that one
 * source at a time holds the output: the source a person started last.
 */
export interface CastHooks {
  /** The cast holding the player's output, if one does. */
  castView(playerId: string): CastView | undefined;
  /** That cast's cover art, if its sender gave one. */
  castArtwork(playerId: string): CastArtwork | undefined;
  /** A person starts the player's MPD: a cast that held the output loses it. */
  mpdStarted(playerId: string): Promise<void>;
  /** The player's MPD paused or stopped. */
  mpdStopped(playerId: string): Promise<void>;
  /** A person paused or stopped the player while a cast held it: the cast loses the output; whether one held it. */
  endCast(playerId: string): Promise<boolean>;
  announcementStarted(playerId: string): Promise<void>;
  announcementEnded(playerId: string): Promise<void>;
}

/** Position events of one player are at least this far apart. */
export const POSITION_INTERVAL_MS = 1000;

const NOTHING = stoppedStatus();

export class NowPlaying {
  /** What each stream player plays besides what its engine knows. */
  private readonly sessions = new Map<string, Session>();
  /** The announcement each player plays now, and the session it interrupted (the same object: marks made meanwhile stay). */
  private readonly announcing = new Map<string, { id: string; session: Session | undefined }>();
  /** Each player's lane: the tail of the work queued on it (see serially). */
  private readonly lanes = new Map<string, Promise<unknown>>();
  /** The last view published per player, positions aside: a view is published again only when something else changed. */
  private readonly published = new Map<string, string>();
  private readonly lastPosition = new Map<string, number>();
  /** The casting runtime, once attached: until then no cast ever holds an output. */
  private casts: CastHooks | undefined;

  constructor(
    private readonly engines: StreamEngines,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {
    // A player deleted, or no stream player any more: what it played is forgotten. Heard among the last (stage
    // `clients`), once the announcement that played on it let it go and its engine was stopped.
    bus.subscribe(
      'now-playing',
      (event) => {
        if (event.type === 'player.deleted') this.forget(event.payload.playerId);
        else if (event.type === 'player.created' || event.type === 'player.updated') {
          if (event.payload.player.output === null) this.forget(event.payload.player.id);
        }
      },
      { stage: 'clients' },
    );
  }

  /**
   * Runs `task` in the player's lane: after every task queued on the player before, and before every one after,
   * whether the one before failed or not. The one serializer of a player in the domain: it protects the player's
   * engine commands and the session they change (a transport command, a playlist edit followed, an announcement
   * taking the player and giving it back), so that no two of them interleave across their awaits. (The engine keeps
   * its own lock over its MPD connection, for its queue and its reads; it orders nothing of the domain's.)
   */
  serially<T>(playerId: string, task: () => Promise<T>): Promise<T> {
    const run = (this.lanes.get(playerId) ?? Promise.resolve()).then(task, task);
    const settled = run.catch(() => undefined);
    this.lanes.set(playerId, settled);
    void settled.then(() => {
      if (this.lanes.get(playerId) === settled) this.lanes.delete(playerId);
    });
    return run;
  }

  /** What the player plays besides its engine's status; undefined when it played nothing since it started. */
  session(playerId: string): SessionView | undefined {
    return this.sessions.get(playerId);
  }

  /** The players whose session plays this playlist. */
  playersOf(playlistId: string): string[] {
    return [...this.sessions].filter(([, session]) => session.playlistId === playlistId).map(([id]) => id);
  }

  /** The announcement the player plays now, if any. */
  announcementOf(playerId: string): string | undefined {
    return this.announcing.get(playerId)?.id;
  }

  /**
   * Sets the session the engine's events are read with, then runs `start` (the engine command that plays it); the
   * session before comes back if it fails. Runs in the player's lane.
   */
  async load(playerId: string, session: Session, start: () => Promise<void>): Promise<void> {
    const before = this.sessions.get(playerId);
    this.sessions.set(playerId, session);
    try {
      await start();
    } catch (err) {
      if (before) this.sessions.set(playerId, before);
      else this.sessions.delete(playerId);
      throw err;
    }
  }

  /** The engine's queue is now these tracks of the session's playlist (it followed an edit). */
  queued(playerId: string, trackIds: Array<string | null>): void {
    const session = this.sessions.get(playerId);
    if (session) session.trackIds = trackIds;
  }

  /** The engine refused a track of the session's playlist: it is left out from now on. */
  refuse(playerId: string, trackId: string): void {
    this.sessions.get(playerId)?.refused.add(trackId);
  }

  /** The playlist changed while the queue could not follow (true), or the queue follows it now (false). */
  setStale(playerId: string, stale: boolean): void {
    const session = this.sessions.get(playerId);
    if (session) session.stale = stale;
  }

  /** The session's playlist was deleted: what plays ends, and nothing follows. */
  playlistGone(playerId: string): void {
    const session = this.sessions.get(playerId);
    if (session) session.playlistId = null;
  }

  /** Attaches the casting runtime: from now on a cast that holds a player's output is what its playback shows. */
  attachCasts(hooks: CastHooks): void {
    this.casts = hooks;
  }

  /** A cast began, changed what it plays, or ended on the player: its playback is published again. */
  castChanged(playerId: string): void {
    this.refresh(playerId);
  }

  /** Before a person's play or resume reaches MPD: a cast holding the output lets go of it first. */
  mpdStarting(playerId: string): Promise<void> {
    return this.casts?.mpdStarted(playerId) ?? Promise.resolve();
  }

  /** After MPD paused or stopped at a person's command. */
  mpdStopped(playerId: string): Promise<void> {
    return this.casts?.mpdStopped(playerId) ?? Promise.resolve();
  }

  /** A person's pause or stop: ends the cast holding the output, if one does (then MPD is left as it is). */
  endCast(playerId: string): Promise<boolean> {
    return this.casts?.endCast(playerId) ?? Promise.resolve(false);
  }

  /** The playback of a stream player as the API shows it. */
  view(playerId: string): PlaybackView {
    const engine = this.engines.view(playerId) ?? { state: 'stopped', detail: null };
    const cast = this.announcementOf(playerId) === undefined ? this.casts?.castView(playerId) : undefined;
    if (cast) return this.castView(playerId, engine, cast);
    // The engine's status says what is current: nothing, after a track that failed or a queue given back with nothing.
    const status = this.engines.engineOf(playerId)?.status() ?? NOTHING;
    const session = this.sessions.get(playerId);
    const index = status.index;
    return {
      playerId,
      engine,
      source: this.announcementOf(playerId) === undefined ? 'mpd' : 'announcement',
      state: status.state,
      playlistId: session?.playlistId ?? null,
      trackId: index === null ? null : (session?.trackIds[index] ?? null),
      index,
      queueLength: status.queueLength,
      uri: status.uri,
      title: status.title,
      artist: status.artist,
      album: status.album,
      artwork: null,
      name: status.name,
      durationMs: status.durationMs,
      positionMs: Math.max(0, Math.round(status.positionMs)),
      positionAt: new Date(status.positionAt || this.clock.now()).toISOString(),
      announcementId: this.announcementOf(playerId) ?? null,
    };
  }

  /** A cast's playback: the sender's titles; no queue, no length, no position (no sender here reports them). */
  private castView(playerId: string, engine: PlaybackView['engine'], cast: CastView): PlaybackView {
    return {
      playerId,
      engine,
      source: cast.source,
      state: cast.state,
      playlistId: null,
      trackId: null,
      index: null,
      queueLength: 0,
      uri: null,
      title: cast.title,
      artist: cast.artist,
      album: cast.album,
      artwork: cast.artwork === null ? null : `/api/players/${playerId}/artwork?v=${cast.artwork}`,
      name: null,
      durationMs: null,
      positionMs: 0,
      positionAt: new Date(this.clock.now()).toISOString(),
      announcementId: null,
    };
  }

  /** The cover art of the cast its playback shows now (none during an announcement). */
  castArtwork(playerId: string): CastArtwork | undefined {
    return this.announcementOf(playerId) === undefined ? this.casts?.castArtwork(playerId) : undefined;
  }

  /** Whether a stream player plays now (its player's `state`). */
  playing(playerId: string): boolean {
    return this.engines.up(playerId)?.status().state === 'playing';
  }

  /**
   * The player plays announcement `id` from now on; its session is held to be given back. Resolves once no cast's
   * PCM reaches the output any more.
   */
  announce(playerId: string, id: string): Promise<void> {
    this.announcing.set(playerId, { id, session: this.sessions.get(playerId) });
    return this.casts?.announcementStarted(playerId) ?? Promise.resolve();
  }

  /** The announcement let go of the player (given back or lost): a cast that held the output has it again. */
  announcementOver(playerId: string): Promise<void> {
    return this.casts?.announcementEnded(playerId) ?? Promise.resolve();
  }

  /**
   * The announcement gave the player back: `restored`, its playback is as before and so is its session; else it
   * plays nothing of before. Answers whether the session given back is stale (its playlist changed meanwhile: the
   * queue should follow it now).
   */
  givenBack(playerId: string, restored: boolean): boolean {
    const held = this.announcing.get(playerId)?.session;
    if (restored && held) this.sessions.set(playerId, held);
    else this.sessions.delete(playerId);
    this.announcing.delete(playerId);
    return restored && held?.stale === true;
  }

  /** The player was lost to its announcement (deleted, or given another output): nothing of before comes back. */
  released(playerId: string): void {
    this.sessions.delete(playerId);
    this.announcing.delete(playerId);
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
