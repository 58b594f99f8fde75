// The engine's own queue (pure): the caller's URIs by index, MPD's song ids, one state per entry, and what a read of MPD means.
//
// Why a track failed comes from two places read apart: MPD's socket (the `error` of `status`, an ACK to a start) and
// its log (the engine reads mpd's stderr). The socket alone is not enough: MPD clears a track's error from `status`
// as soon as the next track starts, so a track that fails between two reads leaves no word there. Counted over the
// skip tests (test/drivers/mpd-skips.test.ts and the API's playback and transport tests on the real MPD: missing,
// unreadable and unreachable tracks, alone, in a row, after a seek): of 12 skips of tracks MPD failed, 9 had their
// reason only in the log, 3 in both, none only on the socket. Without the log those 9 would read as tracks that
// played, so it is kept, correlated in the simplest way that holds: a word is noted on the entry it names
// (noteFailure), and an entry passed before its word was read waits for one more reply from MPD (awaiting).
import type { PlaybackStatus, SkipReason } from '../playback.js';
import type { MpdStatus } from './status.js';

/** Why a track is passed over: the reason a `skipped` event reports, and the words that explain it. */
export interface SkipCause {
  reason: SkipReason;
  detail: string;
}

/** An entry as the loader prepares it for MPD. */
export interface Entry {
  /** As the caller gave it. */
  uri: string;
  /** What MPD is given (a path relative to the music folder, or the stream URL); null when it cannot be queued. */
  target: string | null;
  /** Why it is not in MPD's queue (null for one that is, or is still to be added). */
  cause: SkipCause | null;
  /** Its song id in MPD's queue, once added. */
  mpdId: number | null;
}

export interface Skip {
  index: number;
  uri: string;
  cause: SkipCause;
}

/**
 * Where one entry stands. An entry starts `refused` (never in MPD's queue) or `queued`; a move the listener makes
 * (a start, next, previous, resume) takes every entry MPD has back to `queued`, as MPD opens them afresh.
 * - refused: not in MPD's queue (no such file, MPD would not take it): passed over with its cause each time.
 * - queued: in MPD's queue, nothing said against it.
 * - failedAhead: MPD failed to open it before its turn (it opens the next track while one plays). It may open it
 *   again at its turn: the words hold until MPD shows it playing after all (back to queued) or passes it.
 * - failed: MPD failed it at its turn (or behind where playback is): reported when playback leaves or passes it.
 * - awaiting: playback passed or left it while MPD's word about it may still be on its way (`cause` once it came);
 *   explain() settles it: with a word it is a skip, without one it played between two reads (back to queued).
 * - passed: playback passed over it and it was reported. MPD, stopped, may name it as its song: nothing is current.
 */
type State =
  | { is: 'refused'; cause: SkipCause }
  | { is: 'queued' }
  | { is: 'failedAhead'; cause: SkipCause }
  | { is: 'failed'; cause: SkipCause }
  | { is: 'awaiting'; cause: SkipCause | null }
  | { is: 'passed' };

interface Slot {
  uri: string;
  target: string | null;
  mpdId: number | null;
  state: State;
}

/** When MPD was never given an entry and nothing said why (the loader gives every entry an id or a cause). */
const NOT_QUEUED: SkipCause = { reason: 'other', detail: 'MPD did not queue it' };

/**
 * What one read of MPD means: the status to publish and the skips known now (explain() adds those whose words were
 * on their way); or, not settled, that MPD is past a track that failed and not yet on the next one. `goOnAfter`:
 * MPD stopped because that entry failed, and whether it goes on by itself depends on how the track was started (MPD
 * stays after a seek), so the engine goes on from there. null: MPD is trying again a track it failed ahead of its
 * turn, or shows it while moving past it; a later read says which. `keepError`: MPD's error names the track it still
 * shows, not stopped and with nothing of it played (MPD reports "play" before its decoder gives up); cleared now, the
 * stop that follows would read like a listener's and the failure would never be reported.
 */
export type Reading =
  | { settled: true; status: PlaybackStatus; skips: Skip[]; keepError: boolean }
  | { settled: false; goOnAfter: number | null; keepError: boolean };

/** Where to start again from a stop (see restartPoint()). */
export type RestartPoint = { songId: number } | { index: number } | null;

export class QueueModel {
  private entries: Slot[] = [];
  private byId = new Map<number, number>();
  /**
   * Where natural playback came from: entries after `at` and before the next current one were passed over. `played`:
   * MPD played entry `at` (so what it says about it counts), rather than a start beginning after it. null after a
   * backwards jump or the end of the queue, when nothing in between can have been skipped.
   */
  private cursor: { at: number; played: boolean } | null = null;
  /** A queue loaded while stopped: the entry current while MPD has none, until playback starts or MPD names one. */
  private parked: number | null = null;
  /** A playing track left out of a replaced queue: it plays to its end, outside the indexes. */
  private detached: { mpdId: number; uri: string } | null = null;
  /** The entry the engine's last start began with, when it began paused (see startedAt). */
  private pausedStart: number | null = null;

  get length(): number {
    return this.entries.length;
  }

  uris(): string[] {
    return this.entries.map((entry) => entry.uri);
  }

  mpdIdAt(index: number): number | null {
    return this.entries[index]?.mpdId ?? null;
  }

  indexOf(mpdId: number | null): number | null {
    return mpdId === null ? null : (this.byId.get(mpdId) ?? null);
  }

  /** The first entry at or after `index` that is in MPD's queue. */
  firstQueued(index: number): number | null {
    for (let i = Math.max(0, index); i < this.entries.length; i++) if (this.entries[i]!.mpdId !== null) return i;
    return null;
  }

  /** The URI of the track left out of a replaced queue while it plays on, if there is one. */
  detachedUri(): string | null {
    return this.detached?.uri ?? null;
  }

  /** After the left-out track, playback goes on with this entry (for a snapshot); null when none is left out. */
  detachedNext(): number | null {
    return this.detached ? (this.cursor?.at ?? -1) + 1 : null;
  }

  /** Whether entry `index` is the one the last start began with, paused. */
  startedPausedAt(index: number): boolean {
    return this.pausedStart === index;
  }

  /** Where a resume from a stop starts: the song MPD names, else the parked entry, else the first entry. */
  restartPoint(songId: number | null): RestartPoint {
    if (songId !== null) return { songId };
    return this.entries.length ? { index: this.parked ?? 0 } : null;
  }

  /** A new queue: nothing is current, nothing was said about it, nothing is left out. */
  replace(entries: Entry[]): void {
    this.entries = entries.map(({ uri, target, mpdId, cause }) => ({
      uri,
      target,
      mpdId,
      state: mpdId === null ? { is: 'refused', cause: cause ?? NOT_QUEUED } : { is: 'queued' },
    }));
    this.byId = new Map();
    this.entries.forEach((entry, index) => entry.mpdId !== null && this.byId.set(entry.mpdId, index));
    this.cursor = null;
    this.parked = null;
    this.detached = null;
    this.pausedStart = null;
  }

  /** The queue was loaded while stopped: entry `index` is current while MPD has none (null: none). */
  park(index: number | null): void {
    this.parked = index;
  }

  /**
   * The queue was replaced around the song MPD plays: it is entry `at.current`, or it plays to its end outside the
   * queue and playback goes on with entry `at.next`.
   */
  keep(at: { current: number } | { next: number }, playing: { mpdId: number; uri: string }): void {
    if ('current' in at) this.cursor = { at: at.current, played: true };
    else {
      this.detached = playing;
      this.cursor = { at: at.next - 1, played: false };
    }
  }

  /** The left-out track is over once MPD shows another song: its id, to take out of MPD's queue too. */
  detachedEnded(songId: number | null): number | null {
    if (!this.detached || this.detached.mpdId === songId) return null;
    const { mpdId } = this.detached;
    this.detached = null;
    return mpdId;
  }

  /** The engine starts playback at entry `index`: what MPD said before no longer holds, nothing is parked. */
  starting(index: number): void {
    this.forgetFailures();
    this.cursor = { at: index - 1, played: false };
    this.parked = null;
  }

  /**
   * The engine started entry `index`, paused if asked. A failure noted for an entry after a paused start of it is that
   * start's (failures were forgotten as it began), and MPD stays paused on the entry whatever it shows (read()).
   */
  startedAt(index: number, paused: boolean): void {
    this.pausedStart = paused ? index : null;
  }

  /** The listener moved playback (next, previous, resume): backwards, nothing in between was passed over. */
  moved(backwards = false): void {
    this.forgetFailures();
    if (backwards) this.cursor = null;
  }

  /**
   * Records MPD's words about a track that failed on the entry they name: one passed while they were on their way,
   * else the first one from the playing entry on (or one ahead: MPD opens the next track before the current one
   * ends). Returns the entry's index, or null when no such entry is waiting for words (an output's error, not a
   * track's, or a late word about a track already reported or left behind).
   */
  noteFailure(names: (target: string) => boolean, cause: SkipCause): number | null {
    const matches = (entry: Slot) => entry.target !== null && names(entry.target);
    const waiting = this.entries.findIndex(
      (entry) => entry.state.is === 'awaiting' && entry.state.cause === null && matches(entry),
    );
    if (waiting >= 0) {
      this.entries[waiting]!.state = { is: 'awaiting', cause };
      return waiting;
    }
    const { cursor } = this;
    const from = cursor === null ? 0 : cursor.played ? cursor.at : cursor.at + 1;
    for (let i = Math.max(0, from); i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.state.is === 'refused' || entry.state.is === 'passed' || !matches(entry)) continue;
      entry.state = cursor === null || i > cursor.at ? { is: 'failedAhead', cause } : { is: 'failed', cause };
      return i;
    }
    return null;
  }

  /**
   * What one read of MPD means (see Reading). `errorAt`: the entry the read's `error` named (see noteFailure).
   * Stopped and running reads mean different things: see readStopped() and readRunning().
   */
  read(s: MpdStatus, now: number, errorAt: number | null = null): Reading {
    const index = this.indexOf(s.songId);
    const keepError =
      errorAt !== null && errorAt === index && s.state !== 'stopped' && !(s.decoding && s.elapsedMs > 0);
    return s.state === 'stopped'
      ? this.readStopped(s, index, errorAt, now)
      : this.readRunning(s, index, now, keepError);
  }

  /**
   * MPD stopped because entry `at` failed: the entries up to it are passed, `at` included, and playback goes on
   * after it (a late word about it is dropped).
   */
  passFailed(at: number): Skip[] {
    const skips = this.advance(at);
    const state = this.entries[at]?.state;
    if (state?.is === 'failed' || state?.is === 'failedAhead') skips.push(this.take(at));
    this.cursor = { at, played: false };
    return skips;
  }

  /** Nothing from the cursor on can play: the queue ended, every entry after the cursor is passed over. */
  passRest(): Skip[] {
    return this.advance(null);
  }

  /** Whether an entry was passed or left with MPD's word about it possibly still on its way (see explain()). */
  awaitsWord(): boolean {
    return this.entries.some((entry) => entry.state.is === 'awaiting');
  }

  /**
   * The skips: `known` and, once the words still awaited have had their chance to be read, the entries that got
   * theirs. An entry MPD passed without a word did not fail (it played between two reads) and is no skip.
   */
  explain(known: Skip[]): Skip[] {
    const skips = [...known];
    this.entries.forEach((entry, i) => {
      if (entry.state.is !== 'awaiting') return;
      if (entry.state.cause) skips.push(this.take(i));
      else entry.state = { is: 'queued' };
    });
    return skips.sort((a, b) => a.index - b.index);
  }

  /**
   * Stopped. With no song: after playing on its own, the queue ended; else the parked entry (if any) is current.
   * Stopped by the failure of its song (or of one it opened ahead of it) with more queued after it: not settled, the
   * engine goes on; with nothing after it: the queue ended. Any other stop is on the entry MPD names, current unless
   * playback passed over it (MPD names a failed song as its own while stopped on it).
   */
  private readStopped(s: MpdStatus, index: number | null, errorAt: number | null, now: number): Reading {
    if (s.songId === null) {
      if (this.cursor !== null) return this.ended(s, now);
      return this.settled(this.statusOf(s, now, this.parked, 'untagged'), [], this.parked ?? 0);
    }
    if (s.error !== null && index !== null && errorAt !== null && errorAt >= index) {
      if (errorAt > index || this.firstQueued(index + 1) !== null)
        return { settled: false, goOnAfter: errorAt, keepError: false };
      return this.ended(s, now);
    }
    this.parked = null;
    const skips = index !== null ? this.advance(index) : [];
    if (index !== null && this.entries[index]!.state.is === 'passed')
      return this.settled(this.statusOf(s, now, null, 'nothing'), skips, index);
    return this.settled(this.statusOf(s, now, index, 'song'), skips, index ?? 0);
  }

  /** A settled read of a stopped MPD: with the failures noted for entries behind `end` (see failuresBefore()). */
  private settled(status: PlaybackStatus, skips: Skip[], end: number): Reading {
    skips.push(...this.failuresBefore(end));
    return { settled: true, status, skips: skips.sort((a, b) => a.index - b.index), keepError: false };
  }

  /** The queue ended: every entry after the cursor is passed over, and nothing is current. */
  private ended(s: MpdStatus, now: number): Reading {
    return this.settled(this.statusOf(s, now, null, 'nothing'), this.advance(null), this.entries.length);
  }

  /**
   * Playing or paused. On an entry MPD failed ahead of its turn (or the engine's paused start began with) and not
   * playing it: not settled. Paused there with nothing decoded (started paused, at a position), MPD opens a track
   * again only as it plays, so it stays there, and playback goes on after it as after a stop the failure caused; the
   * same after the engine's paused start of it with a format shown: that is the next track's, whose decoder MPD
   * started as this one failed (seen under load, when the read comes later), and MPD still stays paused here; and the
   * same when MPD's word came after the read that settled the start (the player reads again). Anything else: MPD is
   * on that entry, and the entries between the last one and it were passed over.
   */
  private readRunning(s: MpdStatus, index: number | null, now: number, keepError: boolean): Reading {
    const state = index === null ? null : this.entries[index]!.state.is;
    // A position past 0 with a decoded format: MPD plays the song (one it moves past shows neither, or 0).
    const plays = s.decoding && s.elapsedMs > 0;
    const startedHere = s.state === 'paused' && index !== null && this.pausedStart === index;
    if (!plays && (state === 'failedAhead' || (state === 'failed' && startedHere))) {
      const goOnAfter = s.state === 'paused' && (!s.decoding || startedHere) ? index : null;
      return { settled: false, goOnAfter, keepError };
    }
    const skips = index !== null ? this.advance(index) : [];
    if (s.songId !== null) this.parked = null;
    const shown = s.songId !== null ? index : this.parked;
    // It plays after all (MPD opened it again at its turn): what it said when it opened it ahead no longer holds.
    if (shown !== null && plays && this.entries[shown]!.state.is === 'failedAhead')
      this.entries[shown]!.state = { is: 'queued' };
    skips.push(...this.failuresBefore(shown ?? 0));
    return {
      settled: true,
      status: this.statusOf(s, now, shown, s.songId !== null ? 'song' : 'untagged'),
      skips: skips.sort((a, b) => a.index - b.index),
      keepError,
    };
  }

  /**
   * Playback moved to `index` (null: it ended). Returns the skips known now, in order: the entry it leaves if MPD
   * failed it while playing it, those never queued, and those MPD failed on its way; those it passed without a word
   * yet are awaiting (see explain()). The cursor moves to `index`.
   */
  private advance(index: number | null): Skip[] {
    const skips: Skip[] = [];
    const { cursor } = this;
    if (cursor !== null && (index === null || index > cursor.at)) {
      // It played to its end, or failed as it started (a stream MPD could not reach is seen playing first) with
      // MPD's word still on its way.
      if (cursor.played && cursor.at >= 0) this.pass(cursor.at, skips, false);
      const end = index ?? this.entries.length;
      // MPD writes a track's failure to its log before it moves on, but the log and the socket are read apart.
      for (let i = cursor.at + 1; i < end; i++) this.pass(i, skips, true);
    }
    this.cursor = index === null ? null : { at: index, played: true };
    return skips;
  }

  /** Playback passed entry `i` (`over`: without playing it; else it left it). */
  private pass(i: number, skips: Skip[], over: boolean): void {
    const entry = this.entries[i];
    if (!entry) return;
    switch (entry.state.is) {
      case 'refused':
        if (over) skips.push(this.take(i));
        return;
      case 'queued':
      case 'passed':
        entry.state = { is: 'awaiting', cause: null };
        return;
      case 'failed':
      case 'failedAhead':
        skips.push(this.take(i));
        return;
      case 'awaiting':
        if (entry.state.cause) skips.push(this.take(i));
        return;
    }
  }

  /** Failures noted for entries behind `end` that advance() did not pass (one behind a backwards jump). */
  private failuresBefore(end: number): Skip[] {
    const skips: Skip[] = [];
    for (let i = 0; i < Math.min(end, this.entries.length); i++) {
      const { is } = this.entries[i]!.state;
      if (is === 'failed' || is === 'failedAhead') skips.push(this.take(i));
    }
    return skips;
  }

  /** The listener moved playback: MPD opens the tracks afresh, so what it said about them before no longer holds. */
  private forgetFailures(): void {
    for (const entry of this.entries) if (entry.state.is !== 'refused') entry.state = { is: 'queued' };
    this.pausedStart = null;
  }

  /**
   * The status to publish with entry `index` current. `song`: MPD's song (tags and position are its); `untagged`: an
   * entry MPD does not show (parked); `nothing`: nothing current (the queue ended, or MPD names a passed entry).
   */
  private statusOf(
    s: MpdStatus,
    now: number,
    index: number | null,
    shown: 'song' | 'untagged' | 'nothing',
  ): PlaybackStatus {
    const detachedUri =
      shown === 'song' && this.detached && s.songId === this.detached.mpdId ? this.detached.uri : null;
    const tagged = shown === 'song' && (index !== null || detachedUri !== null);
    return {
      state: s.state,
      queueLength: this.entries.length,
      index,
      uri: index !== null ? this.entries[index]!.uri : detachedUri,
      title: tagged ? s.tags.title : null,
      artist: tagged ? s.tags.artist : null,
      album: tagged ? s.tags.album : null,
      name: tagged ? s.tags.name : null,
      durationMs: tagged ? s.durationMs : null,
      positionMs: s.songId !== null && shown === 'song' ? s.elapsedMs : 0,
      positionAt: now,
    };
  }

  /** Entry `index` is reported: a queued entry once (it is passed), one never queued each time it is passed. */
  private take(index: number): Skip {
    const entry = this.entries[index]!;
    const { state } = entry;
    const cause = state.is === 'refused' || state.is === 'failed' || state.is === 'failedAhead' ? state.cause : null;
    const awaited = state.is === 'awaiting' ? state.cause : null;
    if (state.is !== 'refused') entry.state = { is: 'passed' };
    return { index, uri: entry.uri, cause: (cause ?? awaited)! };
  }
}
