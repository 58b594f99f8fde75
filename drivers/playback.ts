// The playback seam: what the daemon knows about the engine that plays a stream player's queue (MPD today).
import type { Clock } from './core/clock.js';

/**
 * Where a stream player's audio goes. `fifo` and `pipe` carry raw PCM in PCM_FORMAT; `alsa` plays at the device's
 * own rate; `null` plays into the void, paced in real time (a player whose output is not wired yet).
 */
export type PlaybackOutput =
  /** An ALSA device as `aplay -L` names it: `hw:CARD=sndrpihifiberry,DEV=0`, `plughw:1,0`. */
  | { kind: 'alsa'; device: string }
  /** A FIFO someone else reads (tests, a Snapcast pipe source); created if missing. */
  | { kind: 'fifo'; path: string }
  /** A command run through /bin/sh that gets the PCM on its standard input. */
  | { kind: 'pipe'; command: string }
  | { kind: 'null' };

/** What an `alsa` device and a `fifo` path may be (closed lists); the engine refuses anything else. */
export {
  ALSA_DEVICE_FORMS,
  ALSA_PCM_NAMES,
  alsaDeviceProblem,
  FIFO_FOLDERS,
  type FifoPlace,
  placeFifo,
  resolveFifoPath,
} from './playback-outputs.js';

/** The track URIs an engine plays (`file:<path in the music folder>`, `http(s):`), checked without the disk. */
export { parseTrackUri } from './playback-uri.js';

/** The PCM of `fifo` and `pipe` outputs: 44.1 kHz, signed 16-bit little-endian, stereo (176 400 bytes a second). */
export const PCM_FORMAT = { rate: 44100, bits: 16, channels: 2 } as const;

export type PlaybackState = 'playing' | 'paused' | 'stopped';

/** What a player is playing, as last read from the engine. */
export interface PlaybackStatus {
  state: PlaybackState;
  /** Entries in the queue (the URIs last given by playQueue/replaceQueue/restore). */
  queueLength: number;
  /**
   * Index in the queue of the current track. null when there is none: nothing loaded, the queue played to its end,
   * or the playing track was left out of a replaced queue (it plays to its end; see replaceQueue).
   */
  index: number | null;
  /** The current track's URI as the caller gave it. */
  uri: string | null;
  title: string | null;
  artist: string | null;
  album: string | null;
  /** A radio stream's name (its `icy-name`). */
  name: string | null;
  /** null for a stream without an end. */
  durationMs: number | null;
  positionMs: number;
  /**
   * The engine clock's time when positionMs was read: while playing, the position now is
   * `positionMs + (now - positionAt)`, so a consumer can show a moving position between `position` events.
   */
  positionAt: number;
}

/** The status of a player with nothing loaded, read at `at` on the engine's clock. */
export const stoppedStatus = (at = 0): PlaybackStatus => ({
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
  positionAt: at,
});

/**
 * What announcements save and give back: the queue, the track and where in it, and whether it played. A track that
 * was left out of a replaced queue is saved as the track that would play after it, from its start.
 */
export interface PlaybackSnapshot {
  queue: string[];
  index: number | null;
  positionMs: number;
  state: PlaybackState;
}

/** Why a track was passed over: `other` carries the engine's words in the event's `detail`. */
export type SkipReason = 'missing' | 'unreachable' | 'unknown-format' | 'other';

/** How the engine came back after its process was restarted. */
export type Recovery =
  /** First start, or nothing was queued: nothing to give back. */
  | 'fresh'
  /** The queue, track, position and state from before the restart are back (the position to within about a second). */
  | 'restored'
  /** The playback could not be given back (`detail` says why); the queue is empty. */
  | 'lost';

/**
 * Events an engine reports. `playback`: the state, the current track or its tags changed (a radio stream's new
 * title too). `position`: while playing, at most once a second. `skipped`: a track that could not play was passed
 * over, reported once, when playback reaches it (an engine that tries the next track early says nothing before
 * then); `index` null for a track no longer in the queue. `engine`: the engine process went away (it is restarted
 * with back-off) or came up, with what happened to the playback. `fault`: an error that is no track's (an output
 * that cannot open: playback stops). `library`: a rescan of the music folder began or ended.
 */
export type PlaybackEvent =
  | { type: 'playback'; status: PlaybackStatus }
  | { type: 'position'; positionMs: number; durationMs: number | null; at: number }
  | { type: 'skipped'; index: number | null; uri: string; reason: SkipReason; detail: string }
  | { type: 'engine'; up: false; detail: string }
  | { type: 'engine'; up: true; recovery: Recovery; detail?: string }
  | { type: 'fault'; detail: string }
  | { type: 'library'; scanning: boolean };

export type PlaybackListener = (event: PlaybackEvent) => void;

/** One entry of a music folder listing. */
export interface LibraryEntry {
  kind: 'folder' | 'track';
  /** A track's `file:` URI (what a playlist stores), or a folder's path relative to the music folder. */
  uri: string;
  /** The last segment of the path. */
  name: string;
  title: string | null;
  artist: string | null;
  album: string | null;
  durationMs: number | null;
}

export interface LibraryPage {
  /** The folder listed, relative to the music folder ('' is the music folder itself). */
  folder: string;
  offset: number;
  limit: number;
  /** Entries in the whole folder: folders first, then tracks, each by name. */
  total: number;
  entries: LibraryEntry[];
}

/** The largest page a listing returns. */
export const LIBRARY_PAGE_MAX = 500;

/** A track URI checked against the music folder: a stream, or a file inside it (which may not exist yet). */
export type ResolvedTrack =
  | { kind: 'stream'; url: string }
  | { kind: 'file'; uri: string; relative: string; exists: boolean };

/** The music folder as the engine sees it: only files it can play, tags read by the engine. */
export interface PlaybackLibrary {
  /**
   * Checks a track URI as playQueue would (for a playlist edit): rejects with bad-uri when it may not play (scheme,
   * form, outside the music folder after every symlink); `relative` is the file's real path inside the folder.
   */
  resolve(uri: string): Promise<ResolvedTrack>;
  /** Lists one folder (`''` for the top), a page at a time; `limit` is 1..LIBRARY_PAGE_MAX. */
  list(folder: string, page: { offset: number; limit: number }): Promise<LibraryPage>;
  /** Rescans the music folder; resolves when the engine has read it (a `library` event marks both ends). */
  rescan(): Promise<void>;
}

/**
 * The engine of one stream player. Transport methods resolve once the engine took the command; the effect comes as
 * events. They reject with a PlaybackError for the caller's mistakes (a refused URI, an index out of range) and when
 * the engine is down; a track that cannot play is never a rejection but a `skipped` event, and the queue goes on.
 * Nothing the engine process does makes a method throw outside its promise or a listener see an exception.
 */
export interface PlaybackEngine {
  /** The player this engine plays for. */
  readonly id: string;
  /** Whether the engine process is up and answering. */
  readonly up: boolean;
  /** Starts the engine process; rejects (engine-missing, failed) only when it cannot run at all. */
  start(): Promise<void>;
  /** Stops the engine process (terminate, then kill after a bound) and clears every timer. */
  stop(): Promise<void>;
  onEvent(listener: PlaybackListener): () => void;
  /** The last status read (no round trip). */
  status(): PlaybackStatus;

  /** Replaces the queue and plays it from `index`, at `positionMs` into that track. */
  playQueue(uris: string[], index?: number, positionMs?: number): Promise<void>;
  /** Replaces the queue with one URI and plays it. */
  playUri(uri: string): Promise<void>;
  /** Jumps to entry `index` of the current queue. */
  play(index: number): Promise<void>;
  pause(): Promise<void>;
  /** Goes on from a pause; when stopped, plays the current entry from its start. */
  resume(): Promise<void>;
  /** Stops; the current entry stays current. */
  stopPlayback(): Promise<void>;
  next(): Promise<void>;
  previous(): Promise<void>;
  /** Moves within the current track; refused for a stream without a duration. */
  seek(positionMs: number): Promise<void>;
  /**
   * Replaces the queue without interrupting the track that plays: `{ current: i }` when it is entry i of `uris`
   * (the queue continues after it), `{ next: j }` when it is not (it plays to its end, then `uris[j]` plays).
   * When nothing plays, `current` (or `next`) becomes the current entry.
   */
  replaceQueue(uris: string[], at: { current: number } | { next: number }): Promise<void>;

  /** Reads the playback now, for restore(). */
  snapshot(): Promise<PlaybackSnapshot>;
  /** Gives back a snapshot: its queue, its track at its position, in its state. */
  restore(snapshot: PlaybackSnapshot): Promise<void>;

  readonly library: PlaybackLibrary;
}

/**
 * Why a command was refused. `engine-missing`: the engine program is not installed (the message names the package);
 * `engine-down`: the process is restarting; `bad-uri`: a URI the engine will not play (scheme, form, outside the
 * music folder; `problems` lists them by queue index); `bad-request`: an index, position or page out of range;
 * `not-found`: a library folder that does not exist or is not scanned yet (the message says which);
 * `timeout`: the engine did not answer in time; `failed`: anything else the engine refused (its words).
 */
export type PlaybackErrorCode =
  | 'engine-missing'
  | 'engine-down'
  | 'bad-uri'
  | 'bad-request'
  | 'not-found'
  | 'timeout'
  | 'failed';

export class PlaybackError extends Error {
  constructor(
    readonly code: PlaybackErrorCode,
    message: string,
    /** For bad-uri: each refused entry of a queue and why. */
    readonly problems: Array<{ index: number; message: string }> = [],
  ) {
    super(message);
    this.name = 'PlaybackError';
  }
}

/** How to build an engine (see drivers/mpd/index.ts for the factory). */
export interface PlaybackEngineOptions {
  /** The player's id: names its folder under `<stateDir>/players/`. */
  id: string;
  stateDir: string;
  /** The folder `file:` URIs are relative to; nothing outside it plays. */
  musicDir: string;
  output: PlaybackOutput;
  /** Also listen for MPD clients on this TCP address (off unless set: the control socket is private). */
  listen?: { host: string; port: number };
  /** Time as the engine sees it: injected so tests control ticks, back-off and time limits. */
  clock?: Clock;
  /** Diagnostics; never given a secret. */
  log?: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}
