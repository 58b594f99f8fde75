// The music folder through MPD's database: one folder listed a page at a time with its tags, and rescans.
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
    const connection = await this.context.connection();
    let pairs: Pairs;
    try {
      [pairs = []] = await connection.request([command('lsinfo', resolved.relative)]);
    } catch (err) {
      if (err instanceof MpdAck && err.code === ACK.NO_EXIST) {
        throw new PlaybackError('not-found', `the folder ${JSON.stringify(relative)} is not in the library yet: rescan the music folder`);
      }
      throw err;
    }
    const entries = records(pairs, ['file', 'directory', 'playlist'])
      .map(entryOf)
      .filter((entry): entry is LibraryEntry => entry !== null)
      .sort((a, b) => (a.kind === b.kind ? names.compare(a.name, b.name) : a.kind === 'folder' ? -1 : 1));
    return { folder: resolved.relative, offset, limit, total: entries.length, entries: entries.slice(offset, offset + limit) };
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
