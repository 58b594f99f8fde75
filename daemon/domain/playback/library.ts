// The music folder as the stream players' MPD reads it: one folder listed a page at a time with its tags (so playlists
// can be built from it), and rescans, which every stream player's MPD runs on its own database.
import type { LibraryPage } from '../../../drivers/playback.js';
import type { Logger } from '../../log.js';
import { conflict, requireWriter, unavailable, type Caller, type EventBus } from '../shared/index.js';
import type { StreamEngines } from './engines.js';
import { engineCall } from './errors.js';

export class Library {
  /** The players whose MPD scans now. */
  private readonly scanning = new Set<string>();

  constructor(
    private readonly engines: StreamEngines,
    private readonly bus: EventBus,
    private readonly log: Logger,
  ) {}

  /** Whether a rescan runs on any stream player. */
  get busy(): boolean {
    return this.scanning.size > 0;
  }

  /** One page of a folder (`''`: the top), folders first, then tracks with their tags; readable by every user. */
  list(folder: string, page: { offset: number; limit: number }): Promise<LibraryPage> {
    const engine = this.reader();
    return engineCall(() => engine.library.list(folder, page), 'folder');
  }

  /** Starts a rescan on every stream player that is up; `library.scanChanged` says when it began and ended. */
  rescan(caller: Caller): { scanning: boolean } {
    requireWriter(caller);
    this.reader();
    for (const id of this.engines.playerIds) {
      const engine = this.engines.up(id);
      engine?.library.rescan().catch((err: Error) => this.log.warn({ player: id, err: err.message }, 'a rescan of the music folder failed'));
    }
    return { scanning: true };
  }

  /** A scan began or ended on a player's MPD: the event tells when the first began and the last ended. */
  scanChanged(playerId: string, scanning: boolean): void {
    const before = this.busy;
    if (scanning) this.scanning.add(playerId);
    else this.scanning.delete(playerId);
    if (this.busy !== before) this.bus.publish({ type: 'library.scanChanged', payload: { scanning: this.busy } });
  }

  /** The engine that reads the library: any stream player's that is up. */
  private reader() {
    const ids = this.engines.playerIds;
    for (const id of ids) {
      const engine = this.engines.up(id);
      if (engine) return engine;
    }
    if (ids.length === 0) {
      throw conflict('the music library is read by the MPD of a stream player, and there is none: create one first (POST /api/players with an "output")');
    }
    // An engine that cannot run says why; one that starts or restarts will be there in a moment.
    const broken = ids.map((id) => this.engines.view(id)!).find((engine) => engine.state === 'missing' || engine.state === 'failed');
    if (broken) throw conflict(`no stream player's MPD runs: ${broken.detail ?? broken.state}`);
    throw unavailable('no stream player is up yet (MPD starts, or scans the music folder the first time): try again in a moment', 2);
  }
}
