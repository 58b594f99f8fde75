// Locates the project's files whether running from source (daemon/) or compiled (dist/daemon/), and keeps the
// state directory private whatever the umask.
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error(`cannot find the azcd installation (package.json) above ${fileURLToPath(import.meta.url)}`);
}

export const PROJECT_ROOT = findRoot();
export const UI_DIR = path.join(PROJECT_ROOT, 'daemon', 'ui');
export const VERSION: string = (
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/**
 * Creates `dir` (and missing parents) as 0700, or takes group and other access away from an existing one. The
 * state directory holds password hashes and the device key: outside systemd (UMask=0077) a 022 umask would
 * leave it world-readable.
 */
export function ensurePrivateDir(dir: string): void {
  makeDirs(dir);
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/**
 * mkdir -p, one level at a time: node's recursive mkdir never returns under /proc (it retries ENOENT for ever).
 * New folders are 0700.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !existsSync(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const folder of missing) mkdirSync(folder, { mode: 0o700 });
}

/** A state folder that cannot be used; its message is one line naming the path and the fix. */
export class StateDirError extends Error {}

/** File systems of the kernel's own (proc, sysfs, cgroup, debugfs, securityfs): no place for state. */
const KERNEL_FS: Record<number, string> = {
  40864: 'proc',
  1650812274: 'sysfs',
  2613483: 'cgroup',
  1667723888: 'cgroup2',
  1684170528: 'debugfs',
  1935894131: 'securityfs',
};
const FIX = 'choose a folder on writable storage with --state-dir (or AZC_STATE_DIR), e.g. /var/lib/azcd';

/**
 * Makes the state folder ready before anything opens a file in it, or stops the start with a StateDirError: it is
 * created (0700) if missing; it must be a folder on writable storage, which is checked by writing a file; and
 * every folder and file found under it, whatever an older version, a restore by hand or a 022 umask left there,
 * is made private (0700, 0600). Symbolic links are left as they are and never followed.
 */
export function prepareStateDir(dir: string): void {
  const existing = deepestExisting(dir);
  const kernel = KERNEL_FS[Number(statfsSync(existing).type)];
  if (kernel)
    throw new StateDirError(
      `the state folder ${dir} is on the kernel's ${kernel} file system, which cannot hold files; ${FIX}`,
    );
  if (!statSync(existing).isDirectory()) {
    const where = existing === path.resolve(dir) ? 'it' : existing;
    throw new StateDirError(`the state folder ${dir} cannot be used: ${where} is a file, not a folder; ${FIX}`);
  }
  // Everything under the state folder is made private: a home folder or the root would lose every other mode. The
  // folder systemd made for the service (StateDirectory=, named in $STATE_DIRECTORY) is its own, also when it is the
  // home of the system user azcd runs as (systemd/azcd.sysusers gives azcd /var/lib/azcd).
  const resolved = path.resolve(dir);
  const madeForService = (process.env.STATE_DIRECTORY ?? '')
    .split(':')
    .some((d) => d !== '' && path.resolve(d) === resolved);
  if (resolved === path.parse(resolved).root || (resolved === homedir() && !madeForService)) {
    throw new StateDirError(
      `the state folder ${dir} is not a folder of azcd's own (azcd makes everything in it private); ${FIX}`,
    );
  }
  try {
    makeDirs(dir);
  } catch (err) {
    throw new StateDirError(`the state folder ${dir} cannot be created in ${existing}: ${why(err)}; ${FIX}`);
  }
  try {
    const probe = path.join(dir, `.azcd-write-check-${process.pid}`);
    const fd = openSync(probe, 'w', 0o600);
    try {
      writeSync(fd, 'azcd');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
      unlinkSync(probe);
    }
  } catch (err) {
    throw new StateDirError(
      `the state folder ${dir} is not writable: ${why(err)}; give the user azcd runs as (uid ${process.getuid?.()}) write access (chown -R), or ${FIX}`,
    );
  }
  makePrivate(dir, dir);
}

/** Folders 0700 and files 0600, through the whole tree under `root`; links are not followed. */
function makePrivate(root: string, at: string): void {
  const stat = lstatSync(at);
  if (stat.isSymbolicLink()) return;
  const wanted = stat.isDirectory() ? 0o700 : 0o600;
  if ((stat.mode & 0o777) !== wanted) {
    try {
      chmodSync(at, wanted);
    } catch (err) {
      throw new StateDirError(
        `${at} in the state folder cannot be made private (${wanted.toString(8)}): ${why(err)}; it belongs to uid ${stat.uid} and azcd runs as uid ` +
          `${process.getuid?.()}: chown -R that user ${root}, or ${FIX}`,
      );
    }
  }
  if (stat.isDirectory()) for (const name of readdirSync(at)) makePrivate(root, path.join(at, name));
}

function deepestExisting(dir: string): string {
  let at = path.resolve(dir);
  while (!existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  return at;
}

/** An error code in plain words. */
function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    case 'ENOTDIR':
      return 'part of the path is a file, not a folder';
    case 'EDQUOT':
      return 'the disk quota is used up';
    default:
      return (err as Error).message;
  }
}

/**
 * Makes `file` 0600: creates it empty when `create` is set and it is missing, and takes group and other access
 * away when it exists. SQLite gives the -wal and -shm files the database file's mode, so creating the database
 * 0600 before opening it keeps them private too.
 */
export function ensurePrivateFile(file: string, options: { create?: boolean } = {}): void {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (options.create) closeSync(openSync(file, 'a', 0o600));
    return;
  }
  if ((mode & 0o077) !== 0) chmodSync(file, 0o600);
}
