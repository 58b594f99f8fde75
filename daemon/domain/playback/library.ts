// The music folder as the stream players' MPD reads it: one folder listed a page at a time with its tags (so playlists
// can be built from it), and rescans: one at a time, each stream player's MPD in turn, no more often than RESCAN_GAP_MS.
import type { LibraryPage, PlaybackEngine } from '../../../drivers/playback.js';
import type { Logger } from '../../log.js';
import {
  type Caller,
  type Clock,
  conflict,
  type EventBus,
  forbidden,
  isAdmin,
  requireWriter,
  throttled,
  unavailable,
} from '../shared/index.js';
import type { StreamEngines } from './engines.js';
import { engineCall } from './errors.js';

/**
 * The least time between the starts of two rescans. A scan reads every file of the music folder on every stream
 * player's MPD (minutes of CPU on a Pi for a large folder); files added since show up by a rescan a minute later.
 */
export const RESCAN_GAP_MS = 60_000;

export class Library {
  /** The engines whose MPD scans now (a rescan's, or a first start's), each with how to stop hearing its end. */
  private readonly scanning = new Map<PlaybackEngine, () => void>();
  /** Whether a rescan runs (from its start until the last player's MPD finished, gaps between players included). */
  private rescanning = false;
  /** When the last rescan started (the clock's time), for the gap between two. */
  private lastStart = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly engines: StreamEngines,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly clock: Pick<Clock, 'now'>,
  ) {}

  /** Whether a scan runs on any stream player. */
  get busy(): boolean {
    return this.rescanning || this.scanning.size > 0;
  }

  /** One page of a folder (`''`: the top), folders first, then tracks with their tags; readable by every user. */
  list(folder: string, page: { offset: number; limit: number }): Promise<LibraryPage> {
    const engine = this.reader();
    return engineCall(() => engine.library.list(folder, page), 'folder');
  }

  /**
   * Starts a rescan of the music folder: each stream player's MPD in turn. One asked while one runs joins it (the
   * same answer, nothing more queued); a new one may start RESCAN_GAP_MS after the last began. For Admins, and for
   * Operators assigned a stream player (whose music it is); `library.scanChanged` says when it began and ended.
   */
  rescan(caller: Caller): { scanning: boolean } {
    requireWriter(caller);
    if (!isAdmin(caller) && !this.engines.playerIds.some((id) => caller.playerIds.has(id))) {
      throw forbidden('a rescan of the music folder is for administrators and for operators assigned a stream player');
    }
    this.reader();
    if (this.rescanning) return { scanning: true };
    const wait = this.lastStart + RESCAN_GAP_MS - this.clock.now();
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw throttled(
        `the last rescan of the music folder began less than ${RESCAN_GAP_MS / 1000} s ago: ask again in ${seconds} s`,
        seconds,
      );
    }
    this.lastStart = this.clock.now();
    this.changing(() => (this.rescanning = true));
    void this.scanEach().finally(() => this.changing(() => (this.rescanning = false)));
    return { scanning: true };
  }

  /**
   * A scan began or ended on a player's MPD (a rescan's, or its first start's). The end is also heard from the engine
   * itself, so a player deleted (or given another output) while its MPD scans ends the scan with it.
   */
  scanChanged(playerId: string, scanning: boolean): void {
    const engine = this.engines.engineOf(playerId);
    if (!engine) return;
    if (!scanning) {
      this.ended(engine);
      return;
    }
    if (this.scanning.has(engine)) return;
    // Heard from the engine, not through its player's slot: a slot removed stops relaying before the engine stops.
    const off = engine.onEvent((event) => {
      if (event.type === 'library' && !event.scanning) this.ended(engine);
    });
    this.changing(() => this.scanning.set(engine, off));
  }

  private ended(engine: PlaybackEngine): void {
    this.scanning.get(engine)?.();
    this.changing(() => this.scanning.delete(engine));
  }

  /** Runs a change of the scan state; the event tells when the first scan began and the last ended. */
  private changing(change: () => unknown): void {
    const before = this.busy;
    change();
    if (this.busy !== before) this.bus.publish({ type: 'library.scanChanged', payload: { scanning: this.busy } });
  }

  /**
   * Each stream player's MPD keeps its own database of the same folder (it reads it only when it starts, so one
   * cannot be shared with a running other), so each scans it: one after the other, never two at once. A player
   * made during the rescan is taken too; one deleted is passed over.
   */
  private async scanEach(): Promise<void> {
    const done = new Set<string>();
    for (;;) {
      const id = this.engines.playerIds.find((candidate) => !done.has(candidate) && this.engines.up(candidate));
      if (id === undefined) return;
      done.add(id);
      try {
        await this.engines.up(id)!.library.rescan();
      } catch (err) {
        this.log.warn({ player: id, err: (err as Error).message }, 'a rescan of the music folder failed');
      }
    }
  }

  /** The engine that reads the library: any stream player's that is up. */
  private reader() {
    const ids = this.engines.playerIds;
    for (const id of ids) {
      const engine = this.engines.up(id);
      if (engine) return engine;
    }
    if (ids.length === 0) {
      throw conflict(
        'the music library is read by the MPD of a stream player, and there is none: create one first (POST /api/players with an "output")',
      );
    }
    // An engine that cannot run says why; one that starts or restarts will be there in a moment.
    const broken = ids
      .map((id) => this.engines.view(id)!)
      .find((engine) => engine.state === 'missing' || engine.state === 'failed');
    if (broken) throw conflict(`no stream player's MPD runs: ${broken.detail ?? broken.state}`);
    throw unavailable(
      'no stream player is up yet (MPD starts, or scans the music folder the first time): try again in a moment',
      2,
    );
  }
}
