// Locates the project's files whether running from source (daemon/) or compiled (dist/daemon/), and keeps the
// state directory private whatever the umask.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the azcd installation (package.json) above ' + fileURLToPath(import.meta.url));
}

export const PROJECT_ROOT = findRoot();
export const UI_DIR = path.join(PROJECT_ROOT, 'daemon', 'ui');
export const VERSION: string = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Creates `dir` (and missing parents) as 0700, or takes group and other access away from an existing one. The
 * state directory holds password hashes and the device key: outside systemd (UMask=0077) a 022 umask would
 * leave it world-readable.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
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
