// What a stream player's output may name, as closed lists: the ALSA PCM names of a sound card, and FIFO paths that lead
// (symlinks followed) into a folder FIFOs are kept in. The daemon checks requests and restores with these; the MPD
// driver checks again before it writes mpd.conf, so a value that skipped the first check still never reaches MPD.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The ALSA PCM names an output may use: a card's devices as `aplay -L` lists them. None of them reaches a file or a
 * program (ALSA's `file`, `pipe`, `tee`, `shm`… plugins are not on the list, nor are its configuration's quotes and
 * braces).
 */
export const ALSA_PCM_NAMES: readonly string[] = [
  'default',
  'sysdefault',
  'hw',
  'plughw',
  'dmix',
  'dsnoop',
  'front',
  'rear',
  'center_lfe',
  'side',
  'surround21',
  'surround40',
  'surround41',
  'surround50',
  'surround51',
  'surround71',
  'iec958',
  'spdif',
  'hdmi',
];

/** The forms an ALSA device may have, as problems name them. */
export const ALSA_DEVICE_FORMS =
  `one of ${ALSA_PCM_NAMES.join(', ')}, optionally followed by ":" and its card: positional (hw:0,0, plughw:1, hw:Headphones) ` +
  'or CARD=<name>, DEV=<n>, SUBDEV=<n> (plughw:CARD=sndrpihifiberry,DEV=0), a card name being 1 to 32 of A-Z a-z 0-9 _ - and a number digits';

const CARD = /^[A-Za-z0-9_-]{1,32}$/;
const NUMBER = /^[0-9]{1,3}$/;
/** The keyed arguments, and the positional ones in their order. */
const KEYS: Record<string, RegExp> = { CARD, DEV: NUMBER, SUBDEV: NUMBER };
const POSITIONS = [CARD, NUMBER, NUMBER];

/** Why `device` is no ALSA name an output may have (ALSA_DEVICE_FORMS), or undefined when it is one. */
export function alsaDeviceProblem(device: string): string | undefined {
  const refused = `must be ${ALSA_DEVICE_FORMS}; got ${JSON.stringify(device.slice(0, 80))}`;
  const colon = device.indexOf(':');
  const name = colon < 0 ? device : device.slice(0, colon);
  if (!ALSA_PCM_NAMES.includes(name)) return refused;
  if (colon < 0) return undefined;
  const args = device.slice(colon + 1).split(',');
  if (args.length > POSITIONS.length) return refused;
  const keys = new Set<string>();
  for (const [i, arg] of args.entries()) {
    const equals = arg.indexOf('=');
    if (equals < 0) {
      // Positional arguments come first, as ALSA reads them.
      if (keys.size > 0 || !POSITIONS[i]!.test(arg)) return refused;
      continue;
    }
    const key = arg.slice(0, equals);
    const form = KEYS[key];
    if (!form || keys.has(key) || !form.test(arg.slice(equals + 1))) return refused;
    keys.add(key);
  }
  return undefined;
}

/**
 * The folders a FIFO output may be in (or below), as the path resolves: where programs that read PCM from a FIFO keep
 * it (Snapcast's /tmp/snapfifo, /run/snapserver/…), and nowhere else — no system folder, no home folder.
 */
export const FIFO_FOLDERS: readonly string[] = ['/run', '/tmp', '/var/tmp', '/dev/shm', '/srv'];

/** Where a FIFO path leads, or why it may not be an output. */
export type FifoPlace = { path: string; problem?: undefined } | { path?: undefined; problem: string };

const inside = (target: string, folder: string) =>
  target === folder || target.startsWith(folder.endsWith('/') ? folder : `${folder}/`);

/**
 * Where the absolute `target` leads: `//` and `/./` normalised, every symlink of the part that exists followed, the
 * rest appended. Two spellings of one FIFO resolve alike. Throws (with the errno's code) when the part that exists
 * cannot be read or holds a symlink that leads nowhere.
 */
export function resolveFifoPath(target: string): string {
  let existing = path.posix.resolve(target);
  const rest: string[] = [];
  for (;;) {
    try {
      lstatSync(existing);
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || existing === '/') throw err;
      rest.unshift(path.posix.basename(existing));
      existing = path.posix.dirname(existing);
    }
  }
  return path.posix.join(realpathSync(existing), ...rest);
}

/**
 * Where a FIFO output at `target` (an absolute path without `..`) writes, or why it may not: it must resolve into
 * one of FIFO_FOLDERS, outside `stateDir` (the database, its journal and the players' files are there), and name a
 * FIFO or nothing yet (MPD creates it) below a folder, never another kind of file.
 */
export function placeFifo(target: string, stateDir: string): FifoPlace {
  let resolved: string;
  try {
    resolved = resolveFifoPath(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'leads through a symlink that points nowhere'
        : code === 'ENOTDIR'
          ? 'has a file where a folder should be'
          : `cannot be checked (${code ?? 'error'})`;
    return { problem: `${why}: name a FIFO in ${FIFO_FOLDERS.join(', ')} or a folder below them` };
  }
  const shown = resolved === target ? '' : ` (it leads to ${resolved})`;
  let state: string;
  try {
    state = realpathSync(stateDir);
  } catch {
    state = path.posix.resolve(stateDir);
  }
  if (inside(resolved, state))
    return {
      problem: `must be outside azcd's state folder ${state}${shown}: its database and players' files are there`,
    };
  if (!FIFO_FOLDERS.some((folder) => inside(resolved, folder)) || FIFO_FOLDERS.includes(resolved)) {
    return {
      problem: `must be in ${FIFO_FOLDERS.join(', ')} or a folder below them${shown}, e.g. /run/snapserver/azcd.pcm`,
    };
  }
  let kind: string | undefined;
  try {
    const stat = statSync(resolved);
    if (!stat.isFIFO()) kind = stat.isDirectory() ? 'a folder' : stat.isFile() ? 'a regular file' : 'not a FIFO';
  } catch {
    // Nothing there yet: MPD makes the FIFO when it starts.
  }
  if (kind)
    return { problem: `names ${resolved}, which is ${kind}: name an existing FIFO or a path where nothing is yet` };
  return { path: resolved };
}
