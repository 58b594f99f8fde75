// Preloaded into a benchmarked daemon (`node --import <this> dist/daemon/main.js`, with an IPC channel): measures how
// long the main thread holds the event loop, in its own CPU time, and how long the garbage collector stops it. Nothing
// of it is in the daemon: a daemon started without it pays nothing.
//
// A 1 ms timer marks the loop's turns; the time between two of them is a "section" (every callback that ran without
// the timers' phase in between: an upper bound on any single synchronous section). The scheduler's own counts for each
// thread (/proc/self/task/<tid>/schedstat, ~1 µs a read) split a section's wall time into the main thread's CPU time
// (the daemon's own work), time it was runnable but waiting for a core another process had, and the rest: blocked in
// a system call (an fsync, a wait for the garbage collector's helper threads) or idle in the poll; beside it, the CPU
// time of the process's other threads (the collector's helpers, libuv's pool). A garbage-collection pause is reported
// with its wall time and a bound on its own part: no more than the CPU time all threads ran in its section. The parent
// sends {meter: 'reset'} at the start of a phase and {meter: 'take'} at its end, and gets the phase's figures back.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';

const TICK_MS = 1;
/** Sections and pauses kept per phase, the longest first. */
const KEEP = 5;
/** Threads come and go (libuv's pool starts on first use): the list is read again every this many ticks. */
const THREAD_SCAN_TICKS = 100;
/** Recent sections kept to find the one a garbage-collection pause fell in (its entry arrives after it). */
const RECENT = 4096;

const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

if (typeof process.send === 'function') start();

function start() {
  const buffer = Buffer.alloc(128);
  const main = String(process.pid);
  /** tid → { fd, cpu } for every thread; the main thread's entry also keeps its time waiting for a core. */
  const threads = new Map();
  const read = (fd) => {
    const text = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
    const space = text.indexOf(' ');
    return [Number(text.slice(0, space)), Number(text.slice(space + 1, text.indexOf(' ', space + 1)))];
  };
  const scan = () => {
    for (const tid of readdirSync('/proc/self/task')) {
      if (threads.has(tid)) continue;
      try {
        const fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
        const [cpu, queued] = read(fd);
        threads.set(tid, { fd, cpu, queued });
      } catch {
        // ended between the listing and the open
      }
    }
  };
  /** Reads every thread: the main thread's CPU and queued deltas (ns), and the other threads' CPU delta. */
  const sample = () => {
    const out = { cpu: 0, queued: 0, others: 0 };
    for (const [tid, t] of threads) {
      let now;
      try {
        now = read(t.fd);
      } catch {
        closeSync(t.fd);
        threads.delete(tid);
        continue;
      }
      if (tid === main) {
        out.cpu = now[0] - t.cpu;
        out.queued = now[1] - t.queued;
      } else {
        out.others += now[0] - t.cpu;
      }
      t.cpu = now[0];
      t.queued = now[1];
    }
    return out;
  };

  scan();
  let phase = fresh();
  const recent = new Array(RECENT);
  let lastAt = performance.now();
  let ticks = 0;

  const timer = setInterval(() => {
    const at = performance.now();
    const d = sample();
    const section = {
      wallMs: at - lastAt,
      cpuMs: d.cpu / 1e6,
      queuedMs: d.queued / 1e6,
      blockedMs: 0,
      othersCpuMs: d.others / 1e6,
      startedAt: lastAt,
      endedAt: at,
    };
    section.blockedMs = Math.max(0, section.wallMs - section.cpuMs - section.queuedMs);
    lastAt = at;
    record(phase, section);
    recent[ticks % RECENT] = section;
    if (++ticks % THREAD_SCAN_TICKS === 0) scan();
    if (waiting.length > 0) settle();
  }, TICK_MS);
  timer.unref();

  /** Pauses whose section has not ended yet: an entry can arrive before the tick that closes its section. */
  let waiting = [];
  const attribute = (entry, section) => {
    const allCpuMs = section ? section.cpuMs + section.othersCpuMs : entry.duration;
    recordGc(phase, {
      ms: entry.duration,
      ownMs: Math.min(entry.duration, allCpuMs),
      kind: GC_KINDS[entry.detail?.kind ?? entry.kind] ?? 'other',
      endedAt: performance.timeOrigin + entry.startTime + entry.duration,
    });
  };
  const sectionOf = (entry) => {
    const end = entry.startTime + entry.duration;
    return recent.find((s) => s !== undefined && s.startedAt <= entry.startTime + 0.5 && end <= s.endedAt + 0.5);
  };
  /** Attributes the waiting pauses whose section has ended (or, if it fell out of the recent ones, their wall time). */
  const settle = (all = false) => {
    const now = performance.now();
    waiting = waiting.filter((entry) => {
      const section = sectionOf(entry);
      if (!section && !all && entry.startTime + entry.duration > now - 1000) return true;
      attribute(entry, section);
      return false;
    });
  };
  const onGc = (entry) => {
    const section = sectionOf(entry);
    if (section) attribute(entry, section);
    else waiting.push(entry);
  };
  const gc = new PerformanceObserver((list) => list.getEntries().forEach(onGc));
  gc.observe({ entryTypes: ['gc'] });

  process.on('message', (message) => {
    if (!message || typeof message !== 'object' || !('meter' in message)) return;
    gc.takeRecords().forEach(onGc);
    settle(true);
    if (message.meter === 'take') process.send({ meter: summary(phase) });
    phase = fresh();
  });
  process.channel?.unref();
}

function fresh() {
  return {
    startedAt: performance.now(),
    sections: 0,
    over50: 0,
    cpuMs: 0,
    othersCpuMs: 0,
    byCpu: [],
    byWall: [],
    gc: { count: 0, totalMs: 0, longest: [], longestOwn: [] },
  };
}

function keepLongest(list, item, key) {
  if (list.length === KEEP && list[KEEP - 1][key] >= item[key]) return;
  list.push(item);
  list.sort((a, b) => b[key] - a[key]);
  if (list.length > KEEP) list.pop();
}

function record(phase, section) {
  phase.sections++;
  phase.cpuMs += section.cpuMs;
  phase.othersCpuMs += section.othersCpuMs;
  if (section.cpuMs > 50) phase.over50++;
  keepLongest(phase.byCpu, section, 'cpuMs');
  keepLongest(phase.byWall, section, 'wallMs');
}

function recordGc(phase, pause) {
  phase.gc.count++;
  phase.gc.totalMs += pause.ms;
  keepLongest(phase.gc.longest, pause, 'ms');
  keepLongest(phase.gc.longestOwn, pause, 'ownMs');
}

function summary(phase) {
  const seconds = (performance.now() - phase.startedAt) / 1000;
  const { startedAt: _started, cpuMs, ...rest } = phase;
  // What to add to performance.now() for the monotonic clock a CPU profile's timestamps use.
  const monotonicOffsetMs = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  return { seconds, mainCpuMs: cpuMs, monotonicOffsetMs, ...rest };
}
