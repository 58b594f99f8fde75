// The reading half of a restore: the request body is read as it arrives (json-stream.ts), each track is checked and
// staged apart as it comes (restore-staging.ts), and the rest of the document is kept for the checks of the whole.
// Memory holds the document without its tracks; each piece of the body costs time in proportion to its size.
import { canonicalId } from '../../ids.js';
import type { Store } from '../../store/db.js';
import { RestoreStaging, type StagedTrack } from '../../store/restore-staging.js';
import { type FieldErrors, invalid } from '../shared/index.js';
import { type DocumentLimits, trackProblems } from './backup-format.js';
import { type JsonPath, JsonStream, JsonStreamError } from './json-stream.js';

/** Staged tracks are written this many at a time (one small transaction each). */
const STAGE_BATCH = 1000;
/** Problems listed from the tracks (the document's own checks list theirs beside these). */
const MAX_TRACK_PROBLEMS = 20;
/** The nesting bound every request body has (MAX_JSON_DEPTH of the HTTP layer); a backup nests six levels. */
const MAX_DEPTH = 32;
/** A passphrase or the sealed secrets are the longest strings a restore body holds. */
const MAX_STRING_CHARS = 64 * 1024 * 1024;

/** What the body held once it is read whole: the request without its tracks, and the tracks staged. */
export interface UploadedBackup {
  /** The request body (`{backup, passphrase}`) with every playlist's `tracks` empty. */
  body: unknown;
  staging: RestoreStaging;
  /** Problems found in tracks as they arrived, by field (`backup.playlists.3.tracks.7.uri`). */
  trackErrors: FieldErrors;
  /** Per playlist index: its number of tracks and the sum of their known durations. */
  playlists: Map<number, { tracks: number; durationMs: number }>;
  tracks: number;
}

const isTracksArray = (path: JsonPath) =>
  path.length === 4 &&
  path[0] === 'backup' &&
  path[1] === 'playlists' &&
  typeof path[2] === 'number' &&
  path[3] === 'tracks';

export class RestoreUpload {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly json: JsonStream;
  private staging: RestoreStaging | undefined;
  private pending: StagedTrack[] = [];
  private readonly trackErrors: FieldErrors = {};
  private readonly playlists = new Map<number, { tracks: number; durationMs: number }>();
  private tracks = 0;
  private done = false;

  constructor(
    store: Store,
    private readonly limits: DocumentLimits & { restoreBytes: number },
    /** Called once when the upload ends without being taken (abort) or once it was handed on (read). */
    private readonly release: () => void,
  ) {
    this.staging = new RestoreStaging(store);
    this.json = new JsonStream({
      detach: isTracksArray,
      onElement: (value, path) => this.track(value, path[2] as number, path[4] as number),
      maxDepth: MAX_DEPTH,
      maxKeptChars: limits.restoreBytes,
      maxStringChars: MAX_STRING_CHARS,
    });
  }

  /** A piece of the body; throws a 400 for the client when the body cannot be a backup this appliance takes. */
  write(piece: Buffer): void {
    if (this.done) return;
    try {
      this.json.write(this.decoder.decode(piece, { stream: true }));
      if (this.pending.length >= STAGE_BATCH) this.stage();
    } catch (err) {
      this.abort();
      throw asClientError(err);
    }
  }

  /** The whole body has arrived: the rest of it, checked as JSON, and the staged tracks; the caller closes staging. */
  read(): UploadedBackup {
    try {
      this.json.write(this.decoder.decode());
      const body = this.json.end();
      this.stage();
      const staging = this.staging!;
      this.staging = undefined;
      this.done = true;
      return { body, staging, trackErrors: this.trackErrors, playlists: this.playlists, tracks: this.tracks };
    } catch (err) {
      this.abort();
      throw asClientError(err);
    }
  }

  /** The upload ends here: what was staged is dropped and the restore slot is free again. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    this.staging?.close();
    this.staging = undefined;
    this.release();
  }

  private track(value: unknown, playlist: number, position: number): void {
    const field = `backup.playlists.${playlist}.tracks`;
    const counts = this.playlists.get(playlist) ?? { tracks: 0, durationMs: 0 };
    this.playlists.set(playlist, counts);
    counts.tracks++;
    this.tracks++;
    if (counts.tracks > this.limits.tracksPerPlaylist) {
      throw invalid(
        `the backup was not restored: "${field}" holds more than ${this.limits.tracksPerPlaylist} tracks, the most a playlist here holds; nothing was changed`,
        {
          [field]: [
            `holds more than ${this.limits.tracksPerPlaylist} tracks; a playlist here holds at most ${this.limits.tracksPerPlaylist}`,
          ],
        },
      );
    }
    const problems = trackProblems(value);
    for (const [sub, message] of problems) this.problem(`${field}.${position}${sub}`, message);
    if (problems.length > 0 || Object.keys(this.trackErrors).length > 0) return;
    const t = value as { id: string; title: string; uri: string; durationMs: number | null };
    counts.durationMs += t.durationMs ?? 0;
    this.pending.push({
      // Tracks stream past the document's check: this is their front door for ids.
      id: canonicalId(t.id),
      playlist,
      position,
      title: t.title,
      uri: t.uri,
      duration_ms: t.durationMs,
    });
  }

  /** Writes the pending tracks to staging; an id staged before is a problem of the track that repeats it. */
  private stage(): void {
    if (this.pending.length === 0) return;
    const repeated = this.staging!.add(this.pending);
    this.pending = [];
    for (const t of repeated)
      this.problem(`backup.playlists.${t.playlist}.tracks.${t.position}.id`, `the id ${t.id} is used twice`);
  }

  private problem(field: string, message: string): void {
    if (Object.keys(this.trackErrors).length < MAX_TRACK_PROBLEMS) (this.trackErrors[field] ??= []).push(message);
  }
}

/** What the client gets for a body that is not JSON (or not UTF-8): a 400 that says where. */
function asClientError(err: unknown): unknown {
  if (err instanceof JsonStreamError)
    return invalid(`the backup was not restored: ${err.message}; nothing was changed`, { body: [err.message] });
  if (err instanceof TypeError && /encoded data was not valid/i.test(err.message)) {
    return invalid('the backup was not restored: the request body is not valid UTF-8; nothing was changed', {
      body: ['is not valid UTF-8'],
    });
  }
  return err;
}
