// Reading MPD's `status` and `currentsong` replies, and the words of its playback errors (pure).

import { cleanText } from '../clean-text.js';
import type { PlaybackState, SkipReason } from '../playback.js';
import { field, type Pairs } from './protocol.js';

/** What one read of `status` + `currentsong` says. */
export interface MpdStatus {
  state: PlaybackState;
  /** The current song's id, if there is one. */
  songId: number | null;
  elapsedMs: number;
  durationMs: number | null;
  /** An audio format is known for the current song: its decoder started (or, moving past one that failed, the next one's did). */
  decoding: boolean;
  /** The last playback error, until `clearerror` (or until MPD starts another track). */
  error: string | null;
  tags: { title: string | null; artist: string | null; album: string | null; name: string | null };
}

const STATES: Record<string, PlaybackState> = { play: 'playing', pause: 'paused', stop: 'stopped' };

function number(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

const seconds = (text: string | undefined) => {
  const n = number(text);
  return n === null ? null : Math.round(n * 1000);
};

/**
 * A tag as people may see it: whoever made the file or runs the radio station wrote it (a stream's `icy-name`
 * among them), so it is cleaned by the names' rule (no controls, line separators or bidi overrides) before it
 * reaches the API, the dashboard or MQTT; null when nothing is left.
 */
export function tag(song: Pairs, name: string): string | null {
  const value = field(song, name);
  return value === undefined ? null : cleanText(value) || null;
}

export function parseStatus(status: Pairs, song: Pairs): MpdStatus {
  const id = number(field(status, 'songid'));
  return {
    state: STATES[field(status, 'state') ?? 'stop'] ?? 'stopped',
    songId: id,
    elapsedMs: seconds(field(status, 'elapsed')) ?? 0,
    // A stream has no duration; `Time`/`duration` of the song when status has none (paused just after a seek).
    durationMs: seconds(field(status, 'duration')) ?? seconds(field(song, 'duration')),
    decoding: field(status, 'audio') !== undefined,
    error: field(status, 'error') ?? null,
    tags: {
      title: id === null ? null : tag(song, 'Title'),
      artist: id === null ? null : tag(song, 'Artist'),
      album: id === null ? null : tag(song, 'Album'),
      name: id === null ? null : tag(song, 'Name'),
    },
  };
}

const FAILURE = /^Failed to (?:decode|open) (?:'([^']*)'|"([^"]*)"|(.*?))(?:; (.*)|)$/s;

/**
 * Why a track failed, from MPD's error text: "Failed to decode <uri>; CURL failed: …" for a stream it could not
 * reach, "…: No such file or directory" for a file gone since it was queued, "Failed to decode <uri>" with nothing
 * after it when no decoder understood the file. Only the cause is read: the URI itself may say anything.
 */
export function skipReason(message: string): SkipReason {
  const match = FAILURE.exec(message);
  const cause = match ? (match[4] ?? '') : message;
  if (match && cause === '') return 'unknown-format';
  if (/No such file or directory|not found/i.test(cause)) return 'missing';
  if (/CURL|HTTP status|resolve|connect|timed out|timeout|refused|unreachable|SSL|TLS|network/i.test(cause))
    return 'unreachable';
  if (/unrecognized|unsupported|no decoder|unknown format|invalid data/i.test(cause)) return 'unknown-format';
  return 'other';
}

/** The song URI or path MPD names in "Failed to decode <uri>; …" / "Failed to open <uri>", if it names one. */
export function failedUri(message: string): string | null {
  const match = FAILURE.exec(message);
  if (!match) return null;
  return (match[1] ?? match[2] ?? match[3] ?? '').trim() || null;
}

/** Whether an ACK to play/next/seek is a track that failed to start (MPD went on to the next) rather than a refusal. */
export function isPlaybackFailure(message: string): boolean {
  return FAILURE.test(message);
}
