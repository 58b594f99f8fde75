// From the caller's URIs to songs in MPD's queue: refused URIs first, missing files left out, new files scanned.
import path from 'node:path';
import { PlaybackError } from '../playback.js';
import { parseTrackUri, resolveMusicFile } from '../playback-uri.js';
import { QUEUE_MAX } from './config.js';
import type { MpdConnection } from './connection.js';
import { ACK, command, field, MpdAck } from './protocol.js';
import type { Entry } from './queue-model.js';
import { skipReason } from './status.js';

/** Files resolved at once (each is a realpath and an lstat on the thread pool). */
const RESOLVE_PARALLEL = 32;
/** Songs added per command list. */
const ADD_BATCH = 256;

/**
 * Checks every URI and resolves every file, without touching MPD. Throws one bad-uri error listing each refused
 * entry; a file that does not exist (or is not a file) becomes an entry with a skip cause, skipped when its turn comes.
 */
export async function prepareEntries(
  uris: readonly string[],
  musicRoot: string,
  streamHosts: readonly string[],
): Promise<Entry[]> {
  if (!Array.isArray(uris)) throw new PlaybackError('bad-request', 'the queue must be a list of URIs');
  if (uris.length > QUEUE_MAX)
    throw new PlaybackError('bad-request', `a queue holds at most ${QUEUE_MAX} entries, got ${uris.length}`);
  const entries: Entry[] = new Array(uris.length);
  const problems: Array<{ index: number; message: string }> = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < uris.length; i = next++) {
      try {
        entries[i] = await prepare(uris[i]!, musicRoot, streamHosts);
      } catch (err) {
        if (!(err instanceof PlaybackError) || err.code !== 'bad-uri') throw err;
        problems.push({ index: i, message: err.message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(RESOLVE_PARALLEL, uris.length) }, worker));
  if (problems.length) {
    problems.sort((a, b) => a.index - b.index);
    const first = problems[0]!;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw new PlaybackError('bad-uri', `entry ${first.index}: ${first.message}${more}`, problems);
  }
  return entries;
}

async function prepare(uri: string, musicRoot: string, streamHosts: readonly string[]): Promise<Entry> {
  const parsed = parseTrackUri(uri, streamHosts);
  if (parsed.kind === 'stream') return { uri, target: parsed.url, cause: null, mpdId: null };
  const file = await resolveMusicFile(musicRoot, parsed.relative);
  if (file.kind !== 'file') {
    const detail =
      file.kind === 'folder' ? `${uri} is a folder, not a track` : `${uri} is not in the music folder (no such file)`;
    return { uri, target: null, cause: { reason: file.kind === 'folder' ? 'other' : 'missing', detail }, mpdId: null };
  }
  return { uri, target: file.relative, cause: null, mpdId: null };
}

export interface AddContext {
  connection: MpdConnection;
  /** Scans one folder (or file) of the music folder into MPD's database and resolves when MPD has finished. */
  update: (relativeFolder: string) => Promise<void>;
}

/**
 * Adds the entries that have a target to MPD's queue, at `position` onwards (or at the end), setting their mpdId.
 * A file MPD does not know yet (added to the music folder since the last scan) has its folder scanned, once, and
 * is tried again; an entry MPD still refuses gets a skip cause and stays out of the queue.
 */
export async function addEntries(context: AddContext, entries: Entry[], position: number | null): Promise<void> {
  const pending = entries.filter((entry) => entry.target !== null && entry.mpdId === null);
  const scanned = new Set<string>();
  let at = position;
  let i = 0;
  while (i < pending.length) {
    const batch = pending.slice(i, i + ADD_BATCH);
    const commands = batch.map((entry, j) =>
      at === null ? command('addid', entry.target!) : command('addid', entry.target!, at + j),
    );
    let results: Array<Array<[string, string]>>;
    try {
      results = await context.connection.request(commands);
    } catch (err) {
      if (!(err instanceof MpdAck)) throw err;
      results = err.completed;
      const refused = batch[err.index]!;
      const folder = isFile(refused) ? scanScope(refused.target!) : null;
      assignIds(batch, results);
      i += results.length;
      if (at !== null) at += results.length;
      if (err.code === ACK.NO_EXIST && folder !== null && !scanned.has(folder)) {
        scanned.add(folder);
        await context.update(folder);
        continue;
      }
      refused.cause = refusal(refused, err);
      i += 1;
      continue;
    }
    assignIds(batch, results);
    i += batch.length;
    if (at !== null) at += batch.length;
  }
}

/** What to scan for a file MPD does not know: its folder, so a new album comes in one scan; a file at the top alone. */
function scanScope(target: string): string {
  const folder = path.posix.dirname(target);
  return folder === '.' ? target : folder;
}

function isFile(entry: Entry): boolean {
  return !/^https?:/i.test(entry.target!);
}

function assignIds(batch: Entry[], results: Array<Array<[string, string]>>): void {
  results.forEach((pairs, j) => {
    const id = Number(field(pairs, 'Id'));
    if (Number.isInteger(id)) batch[j]!.mpdId = id;
  });
}

function refusal(entry: Entry, ack: MpdAck): Entry['cause'] {
  if (ack.code === ACK.NO_EXIST && isFile(entry)) {
    return { reason: 'unknown-format', detail: `${entry.uri} is not a file MPD can play (${ack.text})` };
  }
  return { reason: skipReason(ack.text), detail: `MPD refused ${entry.uri}: ${ack.text}` };
}
