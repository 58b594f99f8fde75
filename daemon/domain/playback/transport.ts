// Transport of stream players: play a playlist (from a track) or a URI, pause, resume, stop, next, previous, seek, and
// a playing playlist's edits carried into what plays next. One operation per player at a time, in the player's lane
// (NowPlaying.serially); each checks its caller when its turn comes, where it loads the player.
import type { PlaybackEngine, PlaybackError } from '../../../drivers/playback.js';
import type { PlayersService } from '../audio/index.js';
import type { PlaylistsService, TrackView } from '../playlists/index.js';
import {
  asWriter,
  type Caller,
  conflict,
  invalid,
  notFound,
  type PlaybackView,
  type PlayerView,
} from '../shared/index.js';
import type { CastArtwork } from './casting.js';
import type { StreamEngines } from './engines.js';
import { engineCall, fromPlaybackError, refusalReasons, refusedIndexes } from './errors.js';
import { emptySession, type NowPlaying, type SessionView } from './now-playing.js';

/** What to play: a playlist (from one of its tracks, at a position in it), or one URI. */
export type PlayRequest = { playlistId: string; trackId?: string; positionMs?: number } | { uri: string };

/** The caller as it is when an operation's turn comes (a front door re-resolves it). */
export type Recheck = () => Caller;

export class Transport {
  constructor(
    private readonly engines: StreamEngines,
    private readonly now: NowPlaying,
    private readonly players: Pick<PlayersService, 'get'>,
    private readonly playlists: Pick<PlaylistsService, 'get'>,
  ) {}

  /** A stream player's playback, for anyone who may see the player. */
  get(caller: Caller, playerId: string): PlaybackView {
    const player = this.players.get(caller, playerId);
    streamPlayer(player);
    return this.now.view(player.id);
  }

  /** The cover art of the cast a stream player plays, for anyone who may see the player; not-found when none. */
  artwork(caller: Caller, playerId: string): CastArtwork {
    const player = this.players.get(caller, playerId);
    streamPlayer(player);
    const artwork = this.now.castArtwork(player.id);
    if (!artwork)
      throw notFound(
        `player "${player.name}" shows no cover art: none is cast to it, or its sender gave none (its playback's artwork is null then)`,
      );
    return artwork;
  }

  play(caller: Caller, playerId: string, request: PlayRequest, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, async (engine, id) => {
      // The source a person started last holds the output: a cast holding it lets go before MPD plays (once the
      // request is known to be good: a refused one leaves the cast playing).
      if ('uri' in request) {
        await this.now.mpdStarting(id);
        await this.now.load(id, { ...emptySession(), trackIds: [null] }, () =>
          engineCall(() => engine.playUri(request.uri), 'uri'),
        );
        return;
      }
      const playlist = this.playlists.get(request.playlistId);
      if (playlist.tracks.length === 0)
        throw conflict(`playlist "${playlist.name}" has no tracks: add some before playing it`);
      const first =
        request.trackId === undefined
          ? playlist.tracks[0]
          : playlist.tracks.find((track) => track.id === request.trackId);
      if (!first)
        throw invalid(`playlist "${playlist.name}" has no track ${request.trackId}`, {
          trackId: ['is not a track of this playlist'],
        });
      // The playlist knows the track's length when it was added with one: a start past it would only skip the track.
      if (request.positionMs !== undefined && first.durationMs !== null)
        withinTrack(request.positionMs, first.durationMs, `track "${first.title}"`);
      await this.now.mpdStarting(id);
      await this.playTracks(id, engine, playlist.id, playlist.tracks, request.trackId, request.positionMs ?? 0);
    });
  }

  /** Pauses the player: the cast holding its output if one does (which then loses it), else its MPD. */
  pause(caller: Caller, playerId: string, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, (engine, id) => this.halt(id, () => engine.pause()));
  }

  resume(caller: Caller, playerId: string, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, async (engine, id) => {
      await this.now.mpdStarting(id);
      await engineCall(() => engine.resume());
    });
  }

  /** Stops the player: the cast holding its output if one does (which then loses it), else its MPD. */
  stop(caller: Caller, playerId: string, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, (engine, id) => this.halt(id, () => engine.stopPlayback()));
  }

  /**
   * A pause or stop: a cast holding the output is what a person sees playing, so it is the cast that ends (MPD is
   * paused under it already); otherwise MPD does as asked and the output is nobody's.
   */
  private async halt(playerId: string, command: () => Promise<void>): Promise<void> {
    if (await this.now.endCast(playerId)) return;
    await engineCall(command);
    await this.now.mpdStopped(playerId);
  }

  next(caller: Caller, playerId: string, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, (engine) => engineCall(() => engine.next()));
  }

  previous(caller: Caller, playerId: string, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, (engine) => engineCall(() => engine.previous()));
  }

  /** Moves within the current track: 409 when nothing plays or a stream has no end, 400 past the track's end. */
  seek(caller: Caller, playerId: string, positionMs: number, recheck: Recheck = () => caller): Promise<PlaybackView> {
    return this.command(playerId, recheck, async (engine, id) => {
      const status = engine.status();
      if (status.state === 'stopped' || status.index === null)
        throw conflict('nothing is playing: play something before seeking');
      if (status.durationMs === null)
        throw conflict(`${status.uri ?? 'this stream'} is a stream without an end: there is no position to seek to`);
      withinTrack(positionMs, status.durationMs, 'the track');
      await engineCall(() => engine.seek(positionMs), 'positionMs');
      // A seek moves only the position, which no playback event carries: published here.
      this.now.refresh(id, true);
    });
  }

  /**
   * The queue follows the player's playlist after an edit: the playing track plays on (or, removed, plays to its
   * end) and what follows is the playlist as it is now. A playlist deleted leaves the playing track to end. While an
   * announcement plays or MPD is down, the session is marked and followed later.
   */
  follow(playerId: string): Promise<void> {
    return this.now.serially(playerId, async () => {
      const session = this.now.session(playerId);
      if (!session?.playlistId) return;
      const engine = this.engines.up(playerId);
      if (!engine || this.now.announcementOf(playerId) !== undefined) {
        this.now.setStale(playerId, true);
        return;
      }
      this.now.setStale(playerId, false);
      let tracks: TrackView[] = [];
      try {
        tracks = this.playlists.get(session.playlistId).tracks;
      } catch {
        // The playlist was deleted: the playing track plays to its end, with nothing after it.
        this.now.playlistGone(playerId);
      }
      await this.replaceTracks(playerId, engine, session, tracks);
      this.now.refresh(playerId);
    });
  }

  /** One operation on a stream player the caller may change: checked when its turn comes. */
  private command(
    playerId: string,
    recheck: Recheck,
    task: (engine: PlaybackEngine, playerId: string) => Promise<void>,
  ): Promise<PlaybackView> {
    return this.now.serially(playerId, async () => {
      const player = this.players.get(asWriter(recheck()), playerId);
      streamPlayer(player);
      const announcement = this.now.announcementOf(player.id);
      if (announcement)
        throw conflict(`player "${player.name}" is playing announcement ${announcement}: try again when it has ended`);
      await task(await this.engines.ready(player.id), player.id);
      this.now.refresh(player.id);
      return this.now.view(player.id);
    });
  }

  /**
   * Plays the tracks from `startTrackId`. Tracks the engine refuses (a scheme it does not play, a path outside the
   * music folder) are left out and reported as skipped; the track asked for being one of them is a 400.
   */
  private async playTracks(
    playerId: string,
    engine: PlaybackEngine,
    playlistId: string,
    tracks: TrackView[],
    startTrackId: string | undefined,
    positionMs: number,
  ): Promise<void> {
    const refused: Array<{ track: TrackView; why: string }> = [];
    let entries = tracks;
    for (let attempt = 0; ; attempt++) {
      const start = startTrackId === undefined ? 0 : entries.findIndex((track) => track.id === startTrackId);
      const session = {
        ...emptySession(),
        playlistId,
        trackIds: entries.map((track) => track.id),
        refused: new Set(refused.map(({ track }) => track.id)),
      };
      try {
        await this.now.load(playerId, session, () =>
          engine.playQueue(
            entries.map((track) => track.uri),
            start,
            positionMs,
          ),
        );
        break;
      } catch (err) {
        const indexes = attempt === 0 ? refusedIndexes(err) : undefined;
        if (!indexes) throw fromPlaybackError(err, 'positionMs');
        const reasons = refusalReasons(err as PlaybackError);
        for (const index of indexes) refused.push({ track: entries[index]!, why: reasons.get(index)! });
        const first = refused.find(({ track }) => track.id === startTrackId);
        if (first)
          throw invalid(`track "${first.track.title}" cannot play here: ${first.why}`, { trackId: [first.why] });
        if (refused.length === tracks.length) {
          throw invalid(`no track of this playlist can play here: ${refused[0]!.why}`, {
            playlistId: [`no track can play here: ${refused[0]!.why}`],
          });
        }
        const out = new Set(indexes);
        entries = entries.filter((_, i) => !out.has(i));
      }
    }
    for (const { track, why } of refused) {
      this.now.skipped(playerId, { index: null, trackId: track.id, uri: track.uri, reason: 'refused', detail: why });
    }
  }

  /** The engine's queue becomes `tracks` (less those it refuses) around what plays now. */
  private async replaceTracks(
    playerId: string,
    engine: PlaybackEngine,
    session: SessionView,
    tracks: TrackView[],
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const entries = tracks.filter((track) => !session.refused.has(track.id));
      const at = placeOf(engine.status().index, session.trackIds, entries);
      try {
        await engine.replaceQueue(
          entries.map((track) => track.uri),
          at,
        );
        this.now.queued(
          playerId,
          entries.map((track) => track.id),
        );
        return;
      } catch (err) {
        const indexes = attempt === 0 ? refusedIndexes(err) : undefined;
        if (!indexes) throw err;
        const reasons = refusalReasons(err as PlaybackError);
        for (const index of indexes) {
          const track = entries[index]!;
          this.now.refuse(playerId, track.id);
          this.now.skipped(playerId, {
            index: null,
            trackId: track.id,
            uri: track.uri,
            reason: 'refused',
            detail: reasons.get(index)!,
          });
        }
      }
    }
  }
}

/** Refuses (400) a position past the end of a track `durationMs` long. */
function withinTrack(positionMs: number, durationMs: number, track: string): void {
  if (positionMs <= durationMs) return;
  const why = `must be from 0 to ${durationMs}, the length of ${track} in ms`;
  throw invalid(`"positionMs" ${why}, got ${positionMs}`, { positionMs: [why] });
}

/** Refuses (409) a player the appliance does not play. */
function streamPlayer(player: PlayerView): void {
  if (player.output !== null) return;
  throw conflict(
    `player "${player.name}" is a device wired to input ${player.input.channel}: the appliance does not play it. ` +
      `Give it an output (PUT /api/players/${player.id} {"output": {"kind": "alsa", "device": …}}) to make it a stream player`,
  );
}

/**
 * Where the track that plays now goes in the new queue: `current` when it is still there, else `next` (it plays to
 * its end, then the first track after it that is still there); `next: 0` when nothing is current.
 */
export function placeOf(
  index: number | null,
  trackIds: ReadonlyArray<string | null>,
  entries: ReadonlyArray<{ id: string }>,
): { current: number } | { next: number } {
  if (index === null) return { next: 0 };
  const position = new Map(entries.map((track, i) => [track.id, i]));
  const playing = trackIds[index];
  const at = playing === null || playing === undefined ? undefined : position.get(playing);
  if (at !== undefined) return { current: at };
  for (let i = index + 1; i < trackIds.length; i++) {
    const later = trackIds[i];
    const next = later === null || later === undefined ? undefined : position.get(later);
    if (next !== undefined) return { next };
  }
  return { next: entries.length };
}
