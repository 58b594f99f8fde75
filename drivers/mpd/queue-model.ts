// The engine's own queue: the caller's URIs by index, MPD's song ids, and which tracks playback passed over (pure).
import type { PlaybackStatus, SkipReason } from '../playback.js';
import type { MpdStatus } from './status.js';

/** Why a track is passed over: the reason a `skipped` event reports, and the words that explain it. */
export interface SkipCause {
  reason: SkipReason;
  detail: string;
}

export interface Entry {
  /** As the caller gave it. */
  uri: string;
  /** What MPD is given (a path relative to the music folder, or the stream URL); null when it cannot be queued. */
  target: string | null;
  /**
   * Why it is not in MPD's queue; or, for a queued entry, MPD's words the last time it failed to open it (kept
   * until playback passes the entry, when they are reported).
   */
  cause: SkipCause | null;
  mpdId: number | null;
}

export interface Skip {
  index: number;
  uri: string;
  cause: SkipCause;
}

/** An entry playback passed over: `cause` null while MPD's words about it have not been read yet. */
export interface Passed {
  index: number;
  uri: string;
  cause: SkipCause | null;
}

/**
 * What one read of MPD means: the status to publish and the entries passed over; or, not settled, that MPD is past
 * a track that failed and not yet on the next one. `goOnAfter`: MPD stopped because that entry failed, and whether
 * it goes on by itself depends on how the track was started (MPD stays after a seek), so the engine goes on from
 * there. null: MPD is trying again a track it failed ahead of its turn, or shows it while moving past it; a later
 * read says which. Nothing changed in the model either way.
 */
export type Reading =
  | { settled: true; status: PlaybackStatus; passed: Passed[] }
  | { settled: false; goOnAfter: number | null };

export class QueueModel {
  entries: Entry[] = [];
  /** A playing track left out of a replaced queue: it plays to its end, outside the indexes. */
  detached: { mpdId: number; uri: string } | null = null;
  /** The current entry while MPD has none (restored or replaced while stopped). */
  parked: number | null = null;
  /**
   * Where natural playback came from: entries after it and before the next current one were passed over. null after
   * a backwards jump, when nothing in between can have been skipped. See placeCursor().
   */
  cursor: number | null = null;
  /** Whether the cursor entry is one MPD played (so what it says about it counts), not one playback starts after. */
  private playedAtCursor = false;
  private byId = new Map<number, number>();
  /** Queued entries passed before MPD's words about them were read: a word that comes now is still theirs. */
  private awaiting: number[] = [];
  /** The played entry playback left without a word from MPD about it; see advance() and awaitsWord. */
  private left: { index: number; uri: string } | null = null;
  /**
   * Entries whose failure was noted before their turn: MPD opens the next track while the current one plays, and
   * may open it again when its turn comes. Those words hold until MPD shows the entry playing after all.
   */
  private failedAhead = new Set<number>();
  /** The entry the engine's last start began with, when it began paused (see startedAt). */
  private pausedStart: number | null = null;

  replace(entries: Entry[]): void {
    this.entries = entries;
    this.byId = new Map();
    entries.forEach((entry, index) => entry.mpdId !== null && this.byId.set(entry.mpdId, index));
    this.awaiting = [];
    this.left = null;
    this.failedAhead.clear();
    this.playedAtCursor = false;
    this.pausedStart = null;
  }

  /**
   * The engine started entry `index`, paused if asked. A failure noted for an entry after a paused start of it is that
   * start's (failures were forgotten as it began), and MPD stays paused on the entry whatever it shows (read()).
   */
  startedAt(index: number, paused: boolean): void {
    this.pausedStart = paused ? index : null;
  }

  /** Whether entry `index` is the one the last start began with, paused. */
  startedPausedAt(index: number): boolean {
    return this.pausedStart === index;
  }

  /** Puts the cursor on entry `at`: the one playing (`played`), or the one a start or a jump begins after. */
  placeCursor(at: number | null, played = false): void {
    this.cursor = at;
    this.playedAtCursor = played && at !== null;
  }

  indexOf(mpdId: number | null): number | null {
    return mpdId === null ? null : (this.byId.get(mpdId) ?? null);
  }

  /** The first entry at or after `index` that is in MPD's queue. */
  firstQueued(index: number): number | null {
    for (let i = Math.max(0, index); i < this.entries.length; i++) if (this.entries[i]!.mpdId !== null) return i;
    return null;
  }

  /**
   * Records MPD's words about a track that failed on the entry they name: one passed while they were on their way,
   * else the first one from the playing entry on (or one ahead: MPD opens the next track before the current one
   * ends). Returns the entry's index, or null when no such entry has that target (an output's error, not a
   * track's, or a late word about a track already reported or left behind).
   */
  noteFailure(matches: (entry: Entry) => boolean, cause: SkipCause): number | null {
    const waiting = this.awaiting.find((i) => this.entries[i]!.cause === null && matches(this.entries[i]!));
    if (waiting !== undefined) {
      this.entries[waiting]!.cause = cause;
      return waiting;
    }
    const from = this.cursor === null ? 0 : this.playedAtCursor ? this.cursor : this.cursor + 1;
    for (let i = from; i < this.entries.length; i++) {
      if (matches(this.entries[i]!)) {
        this.entries[i]!.cause = cause;
        if (this.cursor === null || i > this.cursor) this.failedAhead.add(i);
        else this.failedAhead.delete(i);
        return i;
      }
    }
    return null;
  }

  /** The listener moved playback: MPD opens the tracks afresh, so what it said about them before no longer holds. */
  forgetFailures(): void {
    for (const entry of this.entries) if (entry.target !== null) entry.cause = null;
    this.failedAhead.clear();
    this.pausedStart = null;
  }

  /**
   * Playback moved to `index` (null: it ended). Returns the entries it passed over, in order: the one it leaves if
   * MPD failed it while playing it, those never queued, and those MPD failed on its way. The cursor moves to `index`.
   */
  advance(index: number | null): Passed[] {
    const passed: Passed[] = [];
    if (this.cursor !== null && (index === null || index > this.cursor)) {
      const leaving = this.entries[this.cursor];
      if (this.playedAtCursor && leaving?.target != null) {
        if (leaving.cause) passed.push(this.take(this.cursor));
        else {
          // It played to its end, or failed as it started (a stream MPD could not reach is seen playing first) with
          // MPD's word still on its way: explain() reports it if the word comes.
          this.awaiting.push(this.cursor);
          this.left = { index: this.cursor, uri: leaving.uri };
        }
      }
      const end = index ?? this.entries.length;
      for (let i = this.cursor + 1; i < end; i++) {
        const entry = this.entries[i]!;
        if (entry.target !== null && entry.cause === null) {
          // MPD writes a track's failure to its log before it moves on, but the log and the socket are read apart.
          this.awaiting.push(i);
          passed.push({ index: i, uri: entry.uri, cause: null });
        } else passed.push(this.take(i));
      }
    }
    this.placeCursor(index, true);
    return passed;
  }

  /**
   * The skips among `passed`, once the words still awaited have had their chance to be read: an entry MPD passed
   * without a word did not fail (it played between two reads) and is no skip.
   */
  explain(passed: Passed[]): Skip[] {
    const left = this.left;
    this.awaiting = [];
    this.left = null;
    const skips: Skip[] = [];
    const heard = (p: { index: number; uri: string }) =>
      this.entries[p.index]?.uri === p.uri && this.entries[p.index]!.cause;
    if (left && heard(left)) skips.push(this.take(left.index));
    for (const p of passed) {
      if (p.cause) skips.push({ ...p, cause: p.cause });
      else if (heard(p)) skips.push(this.take(p.index));
    }
    return skips;
  }

  /** Whether an entry was passed or left with MPD's word about it possibly still on its way (see explain()). */
  awaitsWord(passed: Passed[]): boolean {
    return this.left !== null || passed.some((p) => p.cause === null);
  }

  /**
   * What one read of MPD means (see Reading). `errorAt`: the entry the read's `error` named (see noteFailure). MPD
   * stopped with no song after playing on its own, or stopped by the failure of its current song with nothing
   * queued after it: the queue ended.
   */
  read(s: MpdStatus, now: number, errorAt: number | null = null): Reading {
    let index = this.indexOf(s.songId);
    const stoppedBy =
      s.state === 'stopped' && s.error !== null && index !== null && errorAt !== null && errorAt >= index;
    if (stoppedBy && (errorAt! > index! || this.firstQueued(index! + 1) !== null))
      return { settled: false, goOnAfter: errorAt };
    // A position past 0 with a decoded format: MPD plays the song (one it moves past shows neither, or 0).
    const plays = s.state !== 'stopped' && s.decoding && s.elapsedMs > 0;
    // Paused where the engine's own paused start left it: a failure noted for it since is that start's.
    const startedHere = s.state === 'paused' && index !== null && this.pausedStart === index;
    if (s.state !== 'stopped' && this.hasFailure(index) && (this.failedAhead.has(index!) || startedHere) && !plays) {
      // Paused on it with nothing decoded (started paused, at a position): MPD opens a track again only as it plays,
      // so it stays there, and playback goes on after it as after a stop the failure caused. The same after the
      // engine's paused start of it with a format shown: that is the next track's, whose decoder MPD started as
      // this one failed (seen under load, when the read comes later), and MPD still stays paused here; and the same
      // when MPD's word came after the read that settled the start (mpdSaid then reads again).
      if (s.state === 'paused' && (!s.decoding || startedHere)) return { settled: false, goOnAfter: index! };
      return { settled: false, goOnAfter: null };
    }
    const ended = s.state === 'stopped' && (s.songId === null ? this.cursor !== null : stoppedBy);
    const passed = ended ? this.advance(null) : index !== null ? this.advance(index) : [];
    if (ended) index = null;
    else if (s.songId !== null) this.parked = null;
    else index = this.parked;
    if (index !== null && plays && this.failedAhead.delete(index)) {
      // It plays after all (MPD opened it again at its turn): what it said when it opened it ahead no longer holds.
      this.entries[index]!.cause = null;
    }
    passed.push(...this.failuresBefore(ended ? this.entries.length : (index ?? 0)));
    passed.sort((a, b) => a.index - b.index);
    const detachedUri = this.detached && s.songId === this.detached.mpdId ? this.detached.uri : null;
    return { settled: true, status: this.statusOf(s, index, detachedUri, ended, now), passed };
  }

  /**
   * MPD stopped because entry `at` failed: the entries up to it are passed, `at` included, and playback goes on
   * after it (a late word about it is dropped).
   */
  passFailed(at: number): Passed[] {
    const passed = this.advance(at);
    if (this.entries[at]?.cause) passed.push(this.take(at));
    this.placeCursor(at);
    return passed;
  }

  /** Failures noted for entries behind `end` that advance() did not pass (one behind a backwards jump). */
  private failuresBefore(end: number): Passed[] {
    const passed: Passed[] = [];
    for (let i = 0; i < end; i++) {
      const entry = this.entries[i]!;
      if (entry.target !== null && entry.cause) passed.push(this.take(i));
    }
    return passed;
  }

  private statusOf(
    s: MpdStatus,
    index: number | null,
    detachedUri: string | null,
    ended: boolean,
    now: number,
  ): PlaybackStatus {
    const tagged = (index !== null && s.songId !== null && !ended) || detachedUri !== null;
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
      positionMs: s.songId !== null && !ended ? s.elapsedMs : 0,
      positionAt: now,
    };
  }

  private hasFailure(index: number | null): boolean {
    return index !== null && this.entries[index]?.target !== null && this.entries[index]?.cause != null;
  }

  private take(index: number): Skip {
    const entry = this.entries[index]!;
    const cause = entry.cause!;
    // A queued entry's failure is reported once; an entry that was never queued is reported each time it is passed.
    if (entry.target !== null) entry.cause = null;
    this.failedAhead.delete(index);
    return { index, uri: entry.uri, cause };
  }
}
