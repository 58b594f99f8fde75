// The music folder through MPD's database: one folder listed a page at a time with its tags, and rescans.

import { cleanText } from '../clean-text.js';
import {
  LIBRARY_PAGE_MAX,
  type LibraryEntry,
  type LibraryPage,
  PlaybackError,
  type PlaybackLibrary,
  type ResolvedTrack,
} from '../playback.js';
import { parseFolder, parseTrackUri, resolveMusicFile } from '../playback-uri.js';
import { OUTPUT_BUFFER_KIB } from './config.js';
import type { MpdConnection } from './connection.js';
import { ACK, command, field, MpdAck, type Pairs } from './protocol.js';
import { tag } from './status.js';

export interface LibraryContext {
  /** The music folder's real path. */
  musicRoot(): string;
  /** The engine's command connection (rejects with engine-down while MPD restarts). */
  connection: () => Promise<MpdConnection>;
  /** Runs `update` on a folder ('' for all) and resolves when MPD has finished. */
  update: (relativeFolder: string) => Promise<void>;
  scanning: (scanning: boolean) => void;
}

/**
 * The most one listing may read: MPD's own limit on what it holds for a client, and a little more for what the
 * socket holds. A folder whose listing is longer is refused with the fix (split it), not half-listed.
 */
const LISTING_MAX_BYTES = OUTPUT_BUFFER_KIB * 1024 + (1 << 20);

const names = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
/** Folders first, then tracks, each by name as people count (track 2 before track 10). */
const byKindAndName = (a: LibraryEntry, b: LibraryEntry) =>
  a.kind === b.kind ? names.compare(a.name, b.name) : a.kind === 'folder' ? -1 : 1;

/**
 * Comparisons made in one turn of the event loop. A comparison of names costs about 2 µs on a busy core, and a
 * folder of 25 000 tracks in no order needs some 400 000 of them: in one turn that held the loop for most of a second.
 */
export const COMPARISONS_PER_TURN = 4096;

/** Reply lines turned into entries in one turn (a folder of 25 000 tracks is some 200 000 of them). */
export const PAIRS_PER_TURN = 8192;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The entries of an lsinfo reply, PAIRS_PER_TURN lines a turn; lines before the first entry and playlists are left out. */
export async function entriesInTurns(pairs: Pairs): Promise<LibraryEntry[]> {
  const entries: LibraryEntry[] = [];
  let record: Pairs | undefined;
  const done = () => {
    const entry = record && entryOf(record);
    if (entry) entries.push(entry);
  };
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    if (pair[0] === 'file' || pair[0] === 'directory' || pair[0] === 'playlist') {
      done();
      record = [pair];
    } else record?.push(pair);
    if ((i + 1) % PAIRS_PER_TURN === 0) await nextTurn();
  }
  done();
  return entries;
}

/**
 * A stable merge sort that gives the event loop back every COMPARISONS_PER_TURN comparisons: short runs sorted one
 * per turn (a run of 341 takes at most some 3 000), then merged two by two.
 */
export async function sortInTurns<T>(items: readonly T[], compare: (a: T, b: T) => number): Promise<T[]> {
  let runs: T[][] = [];
  const run = Math.max(2, Math.floor(COMPARISONS_PER_TURN / Math.max(1, Math.log2(COMPARISONS_PER_TURN))));
  for (let i = 0; i < items.length; i += run) {
    runs.push(items.slice(i, i + run).sort(compare));
    await nextTurn();
  }
  let budget = COMPARISONS_PER_TURN;
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const left = runs[r]!;
      const right = runs[r + 1] ?? [];
      const out: T[] = new Array(left.length + right.length);
      let i = 0;
      let j = 0;
      let k = 0;
      while (i < left.length && j < right.length) {
        // `<= 0` takes the left one on a tie: equal names keep MPD's order.
        out[k++] = compare(left[i]!, right[j]!) <= 0 ? left[i++]! : right[j++]!;
        if (--budget === 0) {
          budget = COMPARISONS_PER_TURN;
          await nextTurn();
        }
      }
      while (i < left.length) out[k++] = left[i++]!;
      while (j < right.length) out[k++] = right[j++]!;
      merged.push(out);
    }
    runs = merged;
  }
  return runs[0] ?? [];
}

function entryOf(record: Pairs): LibraryEntry | null {
  const [key, path] = record[0] ?? [];
  if (key !== 'file' && key !== 'directory') return null;
  const seconds = Number(field(record, 'duration') ?? field(record, 'Time'));
  return {
    kind: key === 'file' ? 'track' : 'folder',
    uri: key === 'file' ? `file:${path}` : path!,
    // Shown, never used to find the entry again (the URI is): a file's name and tags are cleaned like any metadata
    // from outside (status.ts tag), a name left empty shows as its URI does.
    name: cleanText(path!.slice(path!.lastIndexOf('/') + 1)) || path!,
    title: key === 'file' ? tag(record, 'Title') : null,
    artist: key === 'file' ? tag(record, 'Artist') : null,
    album: key === 'file' ? tag(record, 'Album') : null,
    durationMs: key === 'file' && Number.isFinite(seconds) ? Math.round(seconds * 1000) : null,
  };
}

export class MpdLibrary implements PlaybackLibrary {
  /** The listing under way: one at a time, so listings hold at most one more connection and one reply. */
  private listing: Promise<unknown> = Promise.resolve();
  /** The last folder listed, sorted, and the database version it was read from (MPD's stats). */
  private last: { folder: string; version: string; entries: LibraryEntry[] } | undefined;

  constructor(private readonly context: LibraryContext) {}

  async resolve(uri: string): Promise<ResolvedTrack> {
    const parsed = parseTrackUri(uri);
    if (parsed.kind === 'stream') return parsed;
    const file = await resolveMusicFile(this.context.musicRoot(), parsed.relative);
    return { kind: 'file', uri, relative: file.relative, exists: file.kind === 'file' };
  }

  async list(folder: string, page: { offset: number; limit: number }): Promise<LibraryPage> {
    const { offset, limit } = page;
    if (!Number.isInteger(offset) || offset < 0)
      throw new PlaybackError('bad-request', `offset must be a whole number from 0, got ${offset}`);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIBRARY_PAGE_MAX) {
      throw new PlaybackError(
        'bad-request',
        `limit must be a whole number from 1 to ${LIBRARY_PAGE_MAX}, got ${limit}`,
      );
    }
    const relative = parseFolder(folder);
    const resolved = await resolveMusicFile(this.context.musicRoot(), relative);
    if (resolved.kind !== 'folder')
      throw new PlaybackError('not-found', `the music folder has no folder ${JSON.stringify(relative)}`);
    const entries = await this.oneAtATime(() => this.sorted(resolved.relative));
    return {
      folder: resolved.relative,
      offset,
      limit,
      total: entries.length,
      entries: entries.slice(offset, offset + limit),
    };
  }

  /**
   * A folder's entries, sorted, read on a connection of their own: MPD answers `lsinfo` whole (it cannot page it),
   * and ends a connection whose reply outgrows its output buffer, so the transport's connection never carries one.
   * The last folder read is kept with the version of the database it was read from, so that its next pages cost a
   * `stats` instead of a listing and a sort.
   */
  private async sorted(folder: string): Promise<LibraryEntry[]> {
    const own = await (await this.context.connection()).another({ maxReplyBytes: LISTING_MAX_BYTES });
    try {
      const [stats = []] = await own.request(['stats']);
      const version = ['db_update', 'songs', 'db_playtime'].map((key) => field(stats, key) ?? '').join('/');
      if (this.last?.folder === folder && this.last.version === version) return this.last.entries;
      this.last = undefined;
      const entries = await sortInTurns(await entriesInTurns(await this.lsinfo(own, folder)), byKindAndName);
      this.last = { folder, version, entries };
      return entries;
    } finally {
      own.close();
    }
  }

  private async lsinfo(own: MpdConnection, folder: string): Promise<Pairs> {
    try {
      const [pairs = []] = await own.request([command('lsinfo', folder)]);
      return pairs;
    } catch (err) {
      if (err instanceof MpdAck && err.code === ACK.NO_EXIST) {
        throw new PlaybackError(
          'not-found',
          `the folder ${JSON.stringify(folder)} is not in the library yet: rescan the music folder`,
        );
      }
      // The listing's connection ended while MPD still runs (the command connection answers): the reply was too long.
      if (
        err instanceof PlaybackError &&
        (err.code === 'engine-down' || err.code === 'failed') &&
        (await this.stillUp())
      ) {
        throw new PlaybackError(
          'failed',
          `the folder ${JSON.stringify(folder)} holds more than one listing can carry (${OUTPUT_BUFFER_KIB / 1024} MiB of tags): split it into smaller folders`,
        );
      }
      throw err;
    }
  }

  private async stillUp(): Promise<boolean> {
    try {
      await (await this.context.connection()).request(['ping']);
      return true;
    } catch {
      return false;
    }
  }

  private oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const run = this.listing.then(work, work);
    this.listing = run.catch(() => undefined);
    return run;
  }

  async rescan(): Promise<void> {
    this.last = undefined;
    this.context.scanning(true);
    try {
      await this.context.update('');
    } finally {
      this.context.scanning(false);
    }
  }
}
