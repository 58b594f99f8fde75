// Readers for /proc: resident memory, open descriptors, CPU time and limits of a process (Linux only).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface MemoryKb {
  rss: number;
  /** Anonymous resident memory: the JS heap, native allocations and buffers (what grows when something leaks). */
  anon: number;
  /** Resident file-backed pages: the node binary, shared libraries, the uWS addon. */
  file: number;
  hwm: number;
}

function statusField(text: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

export function readMemory(pid: number): MemoryKb {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    rss: statusField(text, 'VmRSS'),
    anon: statusField(text, 'RssAnon'),
    file: statusField(text, 'RssFile'),
    hwm: statusField(text, 'VmHWM'),
  };
}

export function readRssKb(pid: number): number {
  return readMemory(pid).rss;
}

export function readThreads(pid: number): number {
  return statusField(readFileSync(`/proc/${pid}/status`, 'utf8'), 'Threads');
}

/** Open file descriptors (sockets, the database, pipes): a leak shows here before anywhere else. */
export function readFdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** How many of the process's descriptors are sockets. */
export function readSocketCount(pid: number): number {
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch {
      // closed between readdir and readlink
    }
  }
  return sockets;
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time the process has used so far, in milliseconds (10 ms resolution on most kernels). */
export function readCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces or parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/**
 * CPU time every thread of the process has run so far, in nanoseconds (the scheduler's own count in
 * /proc/<pid>/task/<tid>/schedstat): fine enough for work of a few milliseconds, where readCpuMs counts 10 ms ticks.
 */
export function readCpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read ran no more.
    }
  }
  return total;
}

/** Write system calls the process has made so far (`syscw` of /proc/<pid>/io): SQLite's WAL writes among them. */
export function readWriteCalls(pid: number): number {
  const match = /^syscw:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  if (!match) throw new Error(`no syscw in /proc/${pid}/io`);
  return Number(match[1]);
}

/**
 * Context switches of every thread of a process so far (voluntary + involuntary): each time a thread that slept
 * is woken counts once, so the difference over an idle window is how often the process woke up.
 */
export function readContextSwitches(pid: number): { total: number; main: number; threads: number } {
  let total = 0;
  let main = 0;
  const tasks = readdirSync(`/proc/${pid}/task`);
  for (const tid of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const n = statusField(text, 'voluntary_ctxt_switches') + statusField(text, 'nonvoluntary_ctxt_switches');
      total += n;
      if (tid === String(pid)) main = n;
    } catch {
      // the thread ended meanwhile
    }
  }
  return { total, main, threads: tasks.length };
}

/** Soft and hard limits on open files of this process. */
export function openFileLimit(pid: number | 'self' = 'self'): { soft: number; hard: number } {
  const text = readFileSync(`/proc/${pid}/limits`, 'utf8');
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  const parse = (v: string | undefined) =>
    v === undefined || v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v);
  return { soft: parse(match?.[1]), hard: parse(match?.[2]) };
}

/** Whether a process with this exact command name (comm) runs, scanning /proc (read-only). */
export function processRunning(comm: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

/** CPU share of one core a process used over a window: `cpuMs` / `wallMs` (1.0 = one core fully busy). */
export function cpuShare(cpuMs: number, wallMs: number): number {
  return wallMs > 0 ? cpuMs / wallMs : Number.NaN;
}

export interface SmapsRollupKb {
  pss: number;
  privateDirty: number;
  privateClean: number;
  sharedClean: number;
}

/**
 * Proportional and private memory: file-backed pages of the node binary count in RSS but are clean and shared with
 * every other node process, so Private_Dirty is what this process alone costs.
 */
export function readSmapsRollup(pid: number): SmapsRollupKb | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return {
      pss: statusField(text, 'Pss'),
      privateDirty: statusField(text, 'Private_Dirty'),
      privateClean: statusField(text, 'Private_Clean'),
      sharedClean: statusField(text, 'Shared_Clean'),
    };
  } catch {
    return undefined;
  }
}

/** 1-minute load average: above ~1 on this 2-core machine, something else competes with the benchmark. */
export function readLoadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
