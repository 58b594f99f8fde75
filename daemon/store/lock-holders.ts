// Who holds a lock on a file (Linux /proc/locks), so "the state directory is in use" can name the other process.
import { readFileSync, statSync } from 'node:fs';

export interface LockHolder {
  pid: number;
  /** The process's command name (/proc/<pid>/comm), when it can be read. */
  command: string | undefined;
}

/** glibc's major()/minor() of a st_dev, as /proc/locks prints them (hex). */
function deviceOf(dev: number): string {
  const major = ((dev >> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/**
 * The processes holding a POSIX lock on `file` other than this one, from /proc/locks (SQLite locks with fcntl, and the
 * kernel drops such a lock when its process dies, so a holder found here is alive). Empty where /proc/locks cannot be
 * read (not Linux) or nobody else holds one.
 */
export function lockHolders(file: string, locks = readLocks()): LockHolder[] {
  let id: string;
  try {
    const stat = statSync(file);
    id = `${deviceOf(stat.dev)}:${stat.ino}`;
  } catch {
    return [];
  }
  const pids = new Set<number>();
  for (const line of locks.split('\n')) {
    // "3: POSIX  ADVISORY  WRITE 24217 fe:00:2147474 1073741824 1073742335" (a blocked waiter's line has "->").
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== 'POSIX' || fields.includes('->')) continue;
    const pid = Number(fields[4]);
    if (fields[5] === id && pid > 0 && pid !== process.pid) pids.add(pid);
  }
  return [...pids].map((pid) => ({ pid, command: commandOf(pid) }));
}

function readLocks(): string {
  try {
    return readFileSync('/proc/locks', 'utf8');
  } catch {
    return '';
  }
}

function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
