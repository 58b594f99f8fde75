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
  /** Why it is not in MPD's queue, or why MPD failed it (kept until it is reported). */
  cause: SkipCause | null;
  mpdId: number | null;
}

export interface Skip {
  index: number;
  uri: string;
  cause: SkipCause;
}

/** What a track MPD passed over without keeping its error said (only the last error is kept). */
const UNEXPLAINED: SkipCause = { reason: 'other', detail: 'MPD passed over it while another track failed; only the later error was kept' };

export class QueueModel {
  entries: Entry[] = [];
  /** A playing track left out of a replaced queue: it plays to its end, outside the indexes. */
  detached: { mpdId: number; uri: string } | null = null;
  /** The current entry while MPD has none (restored or replaced while stopped). */
  parked: number | null = null;
  /**
   * Where natural playback came from: entries after it and before the next current one were passed over. null after
   * a backwards jump, when nothing in between can have been skipped.
   */
  cursor: number | null = null;
  private byId = new Map<number, number>();

  replace(entries: Entry[]): void {
    this.entries = entries;
    this.byId = new Map();
    entries.forEach((entry, index) => entry.mpdId !== null && this.byId.set(entry.mpdId, index));
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
   * Records MPD's error on the entry it names: the first one from the cursor on (the current entry or one ahead);
   * entries playback has passed are reported already. Returns false when no such entry has that target (an
   * output's error, not a track's, or a late word about a track already reported).
   */
  noteFailure(matches: (entry: Entry) => boolean, cause: SkipCause): boolean {
    for (let i = Math.max(0, this.cursor ?? 0); i < this.entries.length; i++) {
      if (matches(this.entries[i]!)) {
        this.entries[i]!.cause = cause;
        return true;
      }
    }
    return false;
  }

  /**
   * Playback moved to `index` (null: it ended). Returns the entries it passed over since the cursor, in order:
   * those never queued, and those MPD failed. The cursor moves to `index`.
   */
  advance(index: number | null): Skip[] {
    const skips: Skip[] = [];
    if (this.cursor !== null && (index === null || index > this.cursor)) {
      const end = index ?? this.entries.length;
      for (let i = this.cursor + 1; i < end; i++) skips.push(this.take(i, UNEXPLAINED));
    }
    this.cursor = index;
    return skips;
  }

  /** Failures noted for entries that advance() will not pass (the stopped-on entry, one behind a jump). */
  pendingFailures(): Skip[] {
    const skips: Skip[] = [];
    this.entries.forEach((entry, i) => {
      if (entry.target !== null && entry.cause) skips.push(this.take(i, entry.cause));
    });
    return skips;
  }

  /**
   * What one read of MPD means: the status to publish, and the entries passed over since the last read, in order.
   * MPD stopped with no song, or on a song it failed, after playing on its own: the queue ended.
   */
  read(s: MpdStatus, now: number): { status: PlaybackStatus; skips: Skip[] } {
    let index = this.indexOf(s.songId);
    const ended = s.state === 'stopped' && this.cursor !== null && (s.songId === null || this.hasFailure(index));
    const passed = ended ? this.advance(null) : index !== null ? this.advance(index) : [];
    const skips = [...passed, ...this.pendingFailures()].sort((a, b) => a.index - b.index);
    if (ended) index = null;
    else if (s.songId !== null) this.parked = null;
    else index = this.parked;
    const detachedUri = this.detached && s.songId === this.detached.mpdId ? this.detached.uri : null;
    const tagged = (index !== null && s.songId !== null && !ended) || detachedUri !== null;
    const status: PlaybackStatus = {
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
    return { status, skips };
  }

  private hasFailure(index: number | null): boolean {
    return index !== null && this.entries[index]?.target !== null && this.entries[index]?.cause != null;
  }

  private take(index: number, fallback: SkipCause): Skip {
    const entry = this.entries[index]!;
    const cause = entry.cause ?? fallback;
    // A queued entry's failure is reported once; an entry that was never queued is reported each time it is passed.
    if (entry.target !== null) entry.cause = null;
    return { index, uri: entry.uri, cause };
  }
}
