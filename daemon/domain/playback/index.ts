// The playback capability's entry: stream players played by the appliance (one MPD each, kept in step with the
// players' rows), their transport and now-playing, the music library, and announcements. The rest of the daemon
// imports this file.
import type { Logger } from '../../log.js';
import type { AudioRepo } from '../../store/audio-repo.js';
import { type Audio, outputOf, type StreamHooks } from '../audio/index.js';
import type { PlaylistsService } from '../playlists/index.js';
import { type Clock, conflict, type EventBus, type StreamOutput } from '../shared/index.js';
import { type AnnouncementLimits, Announcements } from './announcements.js';
import type { Casting } from './casting.js';
import { type EngineDeps, StreamEngines } from './engines.js';
import { Library } from './library.js';
import { NowPlaying } from './now-playing.js';
import { Transport } from './transport.js';

export { LIBRARY_PAGE_MAX } from '../../../drivers/playback.js';
export type { AnnouncementRequest } from './announcement-view.js';
export { type AnnouncementLimits, Announcements } from './announcements.js';
export { CastRooms, type CastRoomsDeps, MAX_CAST_OFF_MINUTES } from './cast-rooms.js';
export { Casting, type CastingDeps } from './casting.js';
export { type EngineFactory, StreamEngines } from './engines.js';
export { Library } from './library.js';
export { POSITION_INTERVAL_MS } from './now-playing.js';
export {
  RECEIVER_DISPLAY_NAMES,
  RECEIVER_KINDS,
  type ReceiverKindName,
  type ReceiverRunState,
  type ReceiverRuntime,
  STOPPED_RECEIVER,
  type WantedReceiver,
} from './receiver-runtime.js';
export { ListedReceivers, programMissing, type ReceiverSwitch, ReceiverSwitches } from './receiver-switches.js';
export { type PlayRequest, placeOf, Transport } from './transport.js';

export interface PlaybackDeps {
  /** The players' and zones' rows (read only: changes go through the audio services). */
  repo: AudioRepo;
  audio: Pick<Audio, 'players' | 'zoneStates' | 'amplifiers'>;
  playlists: Pick<PlaylistsService, 'get'>;
  bus: EventBus;
  clock: Clock;
  engines: Omit<EngineDeps, 'log'>;
  limits: AnnouncementLimits;
  /** The longest an announcement plays. */
  announcementMaxMs: number;
  log: Logger;
}

/** What follows a playing playlist: its edits change what plays next. */
const PLAYLIST_EDITS = new Set(['tracksAdded', 'tracksRemoved', 'reordered', 'deleted']);

/** The playback services, built together; nothing runs until start(). */
export class Playback {
  readonly engines: StreamEngines;
  readonly transport: Transport;
  readonly library: Library;
  readonly announcements: Announcements;
  /** What the audio capability asks about stream players. */
  readonly hooks: StreamHooks;
  private readonly now: NowPlaying;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: PlaybackDeps) {
    const log = deps.log.child({ component: 'playback' });
    this.engines = new StreamEngines({ ...deps.engines, log }, (playerId, event) => {
      if (event.type === 'library') this.library.scanChanged(playerId, event.scanning);
      else this.now.handle(playerId, event);
      if (event.type === 'engine' && event.up && deps.repo.player(playerId)) this.followIfStale(playerId);
    });
    this.now = new NowPlaying(this.engines, deps.bus, deps.clock);
    this.transport = new Transport(this.engines, this.now, deps.audio.players, deps.playlists);
    this.library = new Library(this.engines, deps.bus, log, deps.clock);
    this.announcements = new Announcements({
      repo: deps.repo,
      zoneStates: deps.audio.zoneStates,
      engines: this.engines,
      now: this.now,
      transport: this.transport,
      clock: deps.clock,
      maxMs: deps.announcementMaxMs,
      amplifierName: (key, driver) => deps.audio.amplifiers.nameOf(key, driver),
      bus: deps.bus,
      limits: deps.limits,
      log,
    });
    this.hooks = {
      checkOutput: (_output: StreamOutput) => {
        const missing = deps.engines.missing();
        if (missing !== undefined) throw conflict(`${missing}; then create the stream player again`);
      },
      playing: (playerId) => this.now.playing(playerId),
    };
  }

  /**
   * Starts the engine of every stream player (in the background: a first scan of a large music folder takes a while)
   * and keeps the engines in step with the players' rows. The other parts follow the players themselves: an
   * announcement ends on a player deleted under it, a scan with its engine, and what a player played (NowPlaying)
   * is forgotten last.
   */
  start(): void {
    this.unsubscribe = this.deps.bus.subscribe(
      'playback',
      (event) => {
        switch (event.type) {
          case 'player.created':
          case 'player.updated':
            void this.engines.set(event.payload.player.id, event.payload.player.output);
            return;
          case 'player.deleted':
            void this.engines.remove(event.payload.playerId, { keepFiles: false });
            return;
          case 'playlist.changed':
            if (PLAYLIST_EDITS.has(event.payload.reason)) this.follow(event.payload.playlistId);
            return;
          case 'configuration.replaced':
            // A restore: the engines follow the restored rows.
            void this.reload();
            return;
        }
      },
      { internal: true },
    );
    void this.reload();
  }

  /** Stops announcements and every engine (the daemon stops). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.deps.bus.removeListeners('now-playing');
    await this.announcements.stop();
    await this.engines.stopAll();
  }

  /**
   * Attaches the casting runtime: a player's transport and announcements tell it who starts the output, and a cast
   * holding the output is what the player's playback shows.
   */
  attachCasting(casting: Casting): void {
    this.now.attachCasts(casting);
  }

  /**
   * Pauses a player's MPD for a cast that takes its output, if it plays; resolves once it no longer writes. Outside
   * the player's lane on purpose: the casting runtime's work is awaited inside it (a person's play waits for the cast
   * to let go), so waiting for the lane here could wait for itself. The engine orders its own commands.
   */
  async pauseForCast(playerId: string): Promise<void> {
    const engine = this.engines.up(playerId);
    if (engine?.status().state !== 'playing') return;
    await engine.pause();
    this.now.refresh(playerId);
  }

  /** A cast took or left a player's output, or its titles changed: the player's playback is published again. */
  castChanged(playerId: string): void {
    this.now.castChanged(playerId);
  }

  /** The players' rows were replaced (a restore, the start): engines follow them; sessions of players gone are dropped. */
  reload(): Promise<void> {
    const rows = this.deps.repo.players().map((row) => ({ id: row.id, output: outputOf(row) }));
    const present = new Set(rows.filter((row) => row.output !== null).map((row) => row.id));
    for (const id of this.engines.playerIds) if (!present.has(id)) this.now.forget(id);
    return this.engines.sync(rows);
  }

  /** Every player playing this playlist takes its edit. */
  private follow(playlistId: string): void {
    for (const playerId of this.now.playersOf(playlistId)) this.followLogged(playerId);
  }

  private followIfStale(playerId: string): void {
    if (this.now.session(playerId)?.stale) this.followLogged(playerId);
  }

  private followLogged(playerId: string): void {
    this.transport
      .follow(playerId)
      .catch((err: Error) =>
        this.deps.log.warn({ player: playerId, err: err.message }, 'the queue could not follow its playlist'),
      );
  }
}
