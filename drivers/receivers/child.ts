// What the receivers' supervisor and the ALSA output both do with their programs: stop one within a bound, and read a
// FIFO of their own without a thread of the pool waiting on it.
import type { ChildProcess } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Clock } from '../core/clock.js';
import type { Exit } from '../mpd/process.js';
import { PlaybackError } from '../playback.js';

/** SIGTERM, then SIGKILL (after `killing` is called) if the child is still there after `boundMs`; resolves once it is gone. */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<Exit>,
  options: { clock: Clock; boundMs: number; killing: () => void },
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const { clock } = options;
  child.kill('SIGTERM');
  let timer: unknown;
  const bound = new Promise<void>((resolve) => {
    timer = clock.setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) {
        options.killing();
        child.kill('SIGKILL');
      }
      resolve();
    }, options.boundMs);
  });
  await Promise.race([exited, bound]);
  clock.clearTimeout(timer);
  await exited;
}

/**
 * A FIFO in a private folder, made if missing (0600) and opened read-write (so it never reads end of file between two
 * writers, or while its writer restarts), read as a socket: no thread of the pool waits on it.
 */
export function readFifo(file: string): Socket {
  try {
    process.getBuiltinModule('node:child_process').execFileSync('mkfifo', ['-m', '600', file], { stdio: 'ignore' });
  } catch {
    // It is there from an earlier run: what it is is checked on the open descriptor.
  }
  const fd = openSync(file, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  if (!fstatSync(fd).isFIFO()) {
    closeSync(fd);
    throw new PlaybackError('failed', `${file} is not a FIFO: remove it`);
  }
  return new (process.getBuiltinModule('node:net').Socket)({ fd, readable: true, writable: false });
}
