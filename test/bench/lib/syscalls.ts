// What a process does while it should sleep: `strace -f` over a window, read as wake-ups, memory calls and processes.
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface IdleTrace {
  windowMs: number;
  /** Blocking waits that returned: epoll waits with a timeout (the event loop slept) and futex waits (a thread slept). */
  wakes: number;
  loopWakes: number;
  threadWakes: number;
  /** mmap, munmap, madvise, mprotect, brk: the allocator and the garbage collector at work. */
  memoryCalls: number;
  /** Processes started (fork, vfork, clone without CLONE_THREAD, execve). */
  processes: number;
  /** Every system call, by name. */
  calls: Record<string, number>;
}

const MEMORY = new Set(['mmap', 'munmap', 'madvise', 'mprotect', 'brk', 'mremap']);

/** Parses `strace -f -o` output: one call per line, `<pid> <name>(<args>...`, unfinished calls counted where they start. */
export function readTrace(text: string): Omit<IdleTrace, 'windowMs'> {
  const calls: Record<string, number> = {};
  let loopWakes = 0;
  let threadWakes = 0;
  let processes = 0;
  let memoryCalls = 0;
  for (const line of text.split('\n')) {
    const match = /^\d+\s+(?:[\d:.]+\s+)?([a-z_0-9]+)\((.*)$/.exec(line);
    if (!match) continue; // "<... resumed>", signals, exits
    const [, name, args] = match as unknown as [string, string, string];
    calls[name] = (calls[name] ?? 0) + 1;
    if (name === 'epoll_pwait' || name === 'epoll_wait' || name === 'epoll_pwait2') {
      // epoll_pwait(epfd, events, maxevents, timeout, ...): a zero timeout only polls, it never sleeps.
      const timeout = /^\d+, (?:\[.*?\]|0x[0-9a-f]+|\{.*?\}), \d+, (-?\d+)/.exec(args)?.[1];
      if (timeout !== '0') loopWakes++;
    } else if (name === 'futex' && /FUTEX_WAIT/.test(args)) threadWakes++;
    else if (MEMORY.has(name)) memoryCalls++;
    else if (
      name === 'fork' ||
      name === 'vfork' ||
      name === 'execve' ||
      ((name === 'clone' || name === 'clone3') && !/CLONE_THREAD/.test(args))
    )
      processes++;
  }
  return { wakes: loopWakes + threadWakes, loopWakes, threadWakes, memoryCalls, processes, calls };
}

/** Traces every thread of `pid` for `windowMs` with strace (Debian's; scripts/install-bench-deps.sh installs it). */
export async function traceIdle(pid: number, windowMs: number): Promise<IdleTrace> {
  const file = path.join(tmpdir(), `azc-bench-strace-${pid}-${Date.now()}.txt`);
  const started = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      // timeout ends strace with SIGINT after the window: strace then detaches and leaves the process running.
      execFile(
        'timeout',
        ['-s', 'INT', `${windowMs / 1000}`, 'strace', '-f', '-qq', '-o', file, '-p', String(pid)],
        (err) => {
          // timeout exits 124 when it had to stop strace, which is the normal end here.
          if (err && (err as { code?: number }).code !== 124) reject(new Error(`strace failed: ${err.message}`));
          else resolve();
        },
      );
    });
    return { ...readTrace(readFileSync(file, 'utf8')), windowMs: performance.now() - started };
  } finally {
    rmSync(file, { force: true });
  }
}
