// The music folder through MPD's database: one folder listed a page at a time with its tags, and rescans.
import { OUTPUT_BUFFER_KIB } from './config.js';
import { LIBRARY_PAGE_MAX, PlaybackError, type LibraryEntry, type LibraryPage, type PlaybackLibrary, type ResolvedTrack } from '../playback.js';
import { parseFolder, parseTrackUri, resolveMusicFile } from '../playback-uri.js';
import type { MpdConnection } from './connection.js';
import { ACK, command, field, MpdAck, records, type Pairs } from './protocol.js';

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

function entryOf(record: Pairs): LibraryEntry | null {
  const [key, path] = record[0] ?? [];
  if (key !== 'file' && key !== 'directory') return null;
  const seconds = Number(field(record, 'duration') ?? field(record, 'Time'));
  return {
    kind: key === 'file' ? 'track' : 'folder',
    uri: key === 'file' ? `file:${path}` : path!,
    name: path!.slice(path!.lastIndexOf('/') + 1),
    title: key === 'file' ? (field(record, 'Title') ?? null) : null,
    artist: key === 'file' ? (field(record, 'Artist') ?? null) : null,
    album: key === 'file' ? (field(record, 'Album') ?? null) : null,
    durationMs: key === 'file' && Number.isFinite(seconds) ? Math.round(seconds * 1000) : null,
  };
}

export class MpdLibrary implements PlaybackLibrary {
  /** The listing under way: one at a time, so listings hold at most one more connection and one reply. */
  private listing: Promise<unknown> = Promise.resolve();

  constructor(private readonly context: LibraryContext) {}

  async resolve(uri: string): Promise<ResolvedTrack> {
    const parsed = parseTrackUri(uri);
    if (parsed.kind === 'stream') return parsed;
    const file = await resolveMusicFile(this.context.musicRoot(), parsed.relative);
    return { kind: 'file', uri, relative: file.relative, exists: file.kind === 'file' };
  }

  async list(folder: string, page: { offset: number; limit: number }): Promise<LibraryPage> {
    const { offset, limit } = page;
    if (!Number.isInteger(offset) || offset < 0) throw new PlaybackError('bad-request', `offset must be a whole number from 0, got ${offset}`);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIBRARY_PAGE_MAX) {
      throw new PlaybackError('bad-request', `limit must be a whole number from 1 to ${LIBRARY_PAGE_MAX}, got ${limit}`);
    }
    const relative = parseFolder(folder);
    const resolved = await resolveMusicFile(this.context.musicRoot(), relative);
    if (resolved.kind !== 'folder') throw new PlaybackError('not-found', `the music folder has no folder ${JSON.stringify(relative)}`);
    const pairs = await this.oneAtATime(() => this.lsinfo(resolved.relative));
    const entries = records(pairs, ['file', 'directory', 'playlist'])
      .map(entryOf)
      .filter((entry): entry is LibraryEntry => entry !== null)
      .sort((a, b) => (a.kind === b.kind ? names.compare(a.name, b.name) : a.kind === 'folder' ? -1 : 1));
    return { folder: resolved.relative, offset, limit, total: entries.length, entries: entries.slice(offset, offset + limit) };
  }

  /**
   * MPD's listing of one folder, on a connection of its own: MPD answers `lsinfo` whole (it cannot page it), and
   * ends a connection whose reply outgrows its output buffer, so the transport's connection never carries one.
   */
  private async lsinfo(folder: string): Promise<Pairs> {
    const commands = await this.context.connection();
    const own = await commands.another({ maxReplyBytes: LISTING_MAX_BYTES });
    try {
      const [pairs = []] = await own.request([command('lsinfo', folder)]);
      return pairs;
    } catch (err) {
      if (err instanceof MpdAck && err.code === ACK.NO_EXIST) {
        throw new PlaybackError('not-found', `the folder ${JSON.stringify(folder)} is not in the library yet: rescan the music folder`);
      }
      // The listing's connection ended while MPD still runs (the command connection answers): the reply was too long.
      if (err instanceof PlaybackError && (err.code === 'engine-down' || err.code === 'failed') && (await this.stillUp())) {
        throw new PlaybackError(
          'failed',
          `the folder ${JSON.stringify(folder)} holds more than one listing can carry (${OUTPUT_BUFFER_KIB / 1024} MiB of tags): split it into smaller folders`,
        );
      }
      throw err;
    } finally {
      own.close();
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
    this.context.scanning(true);
    try {
      await this.context.update('');
    } finally {
      this.context.scanning(false);
    }
  }
}
