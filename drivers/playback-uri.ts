// Track URIs a stream player accepts, and the safe way from a `file:` URI to a file inside the music folder.
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { PlaybackError } from './playback.js';

/** Longest URI accepted: a path or URL longer than this is a mistake, not a track. */
export const URI_MAX_LENGTH = 4096;

/**
 * Ports a stream may be on without being allowed by name: HTTP's and HTTPS's, and 8000–8999, where Icecast (8000)
 * and Shoutcast (8000, 8080, …) serve radio. Anything else (an SSH or database port, a printer's admin page on
 * 631) is not a radio station, and letting MPD fetch it would turn stream players into a LAN port scanner.
 */
export const STREAM_PORTS = { usual: [80, 443], from: 8000, to: 8999 } as const;

/** A `file:` track: the path relative to the music folder, as written after `file:`. */
export type TrackUri = { kind: 'file'; relative: string } | { kind: 'stream'; url: string };

/**
 * Parses a track URI without touching the disk. `file:` takes a path relative to the music folder, written as is
 * (`file:albums/Blue Train/01.flac`, no percent-encoding, the way MPD names songs); `http:` and `https:` are streams.
 * With `streamHosts` (what an engine plays), a stream must also be on a usual port (STREAM_PORTS) of a host other
 * than this machine, or on a host (`host`) or host and port (`host:port`) the list names.
 * Throws a bad-uri PlaybackError that says what is wrong and what is accepted.
 */
export function parseTrackUri(uri: string, streamHosts?: readonly string[]): TrackUri {
  const refuse = (why: string): never => {
    throw new PlaybackError('bad-uri', `track URI ${JSON.stringify(uri.slice(0, 200))} ${why}`);
  };
  if (typeof uri !== 'string' || uri.length === 0)
    refuse('is empty: give file:<path in the music folder> or an http(s) URL');
  if (uri.length > URI_MAX_LENGTH) refuse(`is longer than ${URI_MAX_LENGTH} characters`);
  // MPD's protocol is line-based: a line break or NUL would end the command early.
  if (/[\0\r\n]/.test(uri)) refuse('contains a line break or NUL');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  if (scheme === 'file') return { kind: 'file', relative: checkRelative(uri.slice(5), refuse) };
  if (scheme === 'http' || scheme === 'https') {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return refuse('is not a valid URL');
    }
    if (url.username || url.password)
      refuse('carries a user name or password: streams are played without credentials in the URL');
    if (!url.hostname) refuse('has no host');
    if (streamHosts) {
      const problem = streamPlaceProblem(url, streamHosts);
      if (problem) refuse(problem);
    }
    return { kind: 'stream', url: uri };
  }
  return refuse('has an unsupported scheme: use file:<path in the music folder>, http: or https:');
}

/** The port a URL connects to, its scheme's default when it names none. */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** This machine: a stream from it is no radio, and the daemon's own API and MPD's sockets are there. */
function isLoopback(host: string): boolean {
  // URL has already written every IPv4 form (2130706433, 0x7f.1) as dotted decimal, and IPv6 in its short form.
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^(127\.\d+\.\d+\.\d+|0\.0\.0\.0)$/.test(host) ||
    /^\[(::1?|::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}|::ffff:0:0)\]$/.test(host)
  );
}

/** Why a stream's host and port may not be played, or undefined when they may. */
function streamPlaceProblem(url: URL, streamHosts: readonly string[]): string | undefined {
  const host = url.hostname.toLowerCase();
  const port = portOf(url);
  const listed = streamHosts.some((entry) => {
    const wanted = entry.toLowerCase();
    return wanted === host || wanted === `${host}:${port}`;
  });
  if (listed) return undefined;
  const { usual, from, to } = STREAM_PORTS;
  const usualPort = (usual as readonly number[]).includes(port) || (port >= from && port <= to);
  const fix = 'ask an admin to add its host (or host:port) to playback.streamHosts';
  if (isLoopback(host))
    return `is on this appliance (${host}): streams come from radio stations on the network; ${fix}`;
  if (!usualPort) return `is on port ${port}: streams play from ports 80, 443 and ${from}–${to}; ${fix}`;
  return undefined;
}

/** A relative path with no `..`, no empty or absolute form; `''` (the top) only when `allowTop`. */
function checkRelative(relative: string, refuse: (why: string) => never, allowTop = false): string {
  if (relative.startsWith('/'))
    refuse('is absolute: a file: URI names a path inside the music folder, e.g. file:albums/track.flac');
  const segments = relative.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) refuse('climbs out with "..": name the file by its path inside the music folder');
  if (segments.length === 0 && !allowTop) refuse('names no file');
  return segments.join('/');
}

/** Checks a folder path relative to the music folder (for listings): `''` is the top. */
export function parseFolder(folder: string): string {
  const refuse = (why: string): never => {
    throw new PlaybackError('bad-uri', `folder ${JSON.stringify(folder.slice(0, 200))} ${why}`);
  };
  if (folder.length > URI_MAX_LENGTH) refuse(`is longer than ${URI_MAX_LENGTH} characters`);
  if (/[\0\r\n]/.test(folder)) refuse('contains a line break or NUL');
  return checkRelative(folder, refuse, true);
}

export interface ResolvedFile {
  /** The path relative to the (real) music folder after every symlink is resolved: what MPD is given. */
  relative: string;
  /** The absolute real path. */
  absolute: string;
  /** What is there: a missing file is skipped when its turn comes, not refused; anything not a regular file or folder is missing. */
  kind: 'file' | 'folder' | 'missing';
}

/**
 * Resolves a checked relative path inside `musicRoot` (already a real path), following symlinks, and refuses
 * anything that ends up outside it. A path that does not exist is resolved as far as it exists: its existing part
 * must be inside; a dangling symlink counts as missing, and the engine never hands a missing file over.
 */
export async function resolveMusicFile(musicRoot: string, relative: string): Promise<ResolvedFile> {
  const segments = relative === '' ? [] : relative.split('/');
  let existing = segments.length;
  let real: string | undefined;
  // Walk up until a prefix exists; each realpath() resolves every symlink of that prefix.
  for (; existing >= 0; existing--) {
    try {
      real = await realpath(path.join(musicRoot, ...segments.slice(0, existing)));
      break;
    } catch (err) {
      if (!isMissing(err)) throw new PlaybackError('failed', `cannot read ${relative}: ${(err as Error).message}`);
    }
  }
  if (real === undefined) throw new PlaybackError('failed', `the music folder ${musicRoot} is missing`);
  if (real !== musicRoot && !real.startsWith(musicRoot + path.sep)) {
    throw new PlaybackError(
      'bad-uri',
      `file:${relative} leads outside the music folder (through a symlink): only files inside ${musicRoot} play`,
    );
  }
  const absolute = path.join(real, ...segments.slice(existing));
  const kind = existing === segments.length ? await kindOf(absolute) : 'missing';
  return { relative: path.relative(musicRoot, absolute).split(path.sep).join('/'), absolute, kind };
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}

async function kindOf(absolute: string): Promise<ResolvedFile['kind']> {
  try {
    const stats = await lstat(absolute);
    return stats.isFile() ? 'file' : stats.isDirectory() ? 'folder' : 'missing';
  } catch {
    return 'missing';
  }
}
