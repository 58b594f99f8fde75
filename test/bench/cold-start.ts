// Start-up time (spawn → "listening" line → first 200 from /api/health) and idle RSS, against a bare uWS process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnBenchDaemon, waitHealthy } from './lib/daemon-process.js';
import { readContextSwitches, readMemory, readSmapsRollup } from './lib/proc.js';
import { ROOT, sleep, spawnTracked, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions } from './lib/report.js';
import { median, round } from './lib/stats.js';

const IDLE_SETTLE_MS = 1500;
/**
 * How long an idle process is watched for wake-ups (the target is at most one per 5 s), after a settling time in
 * which start-up work (V8 shrinking its heap after loading) is over.
 */
const WAKE_WINDOW_MS = { full: 20_000, quick: 10_000 };
const WAKE_SETTLE_MS = { full: 10_000, quick: 10_000 };

type Wakes = NonNullable<StartSample['wakes']>;

/** Lines of `--trace-opt` that name a function V8 marked for, or compiled with, an optimising tier. */
const OPTIMISED = /^\[(?:marking|compiling method|completed optimizing|optimizing)\b.*?<JSFunction ([^ >]*)/m;

/**
 * The functions V8 optimised while the built daemon made its first start (a new state folder: the first
 * administrator, the schema) and answered its first request. Once one is, the optimising compiler's code and memory
 * stay with the process (~4 MB of RSS, ARCHITECTURE.md "Memory"). V8 decides by the work a function did, and node's
 * path functions do work in proportion to the length of the paths: the figure holds for this checkout's folder,
 * which is deeper than the installed service's /opt/azcd.
 */
async function optimisedAtStart(args: string[] = []): Promise<string[]> {
  const daemon = await spawnBenchDaemon({
    stdout: 'read',
    args,
    nodeArgs: ['--trace-opt'],
    // As the service runs: no preload from the benchmark's own runner.
    env: { NODE_OPTIONS: '' },
  });
  await daemon.stop();
  const names = daemon
    .stdout()
    .split('\n')
    .map((line) => OPTIMISED.exec(line)?.[1]);
  return [...new Set(names.filter((name) => name !== undefined))];
}

/** The row of one optimisedAtStart() count (target: none). */
function optimisedRow(name: string, optimised: string[]): Row {
  return makeRow({
    section: 'start',
    name,
    value: optimised.length,
    unit: '',
    target: { on: 'value', op: '<=', threshold: 0 },
    note: optimised.length
      ? `optimised: ${optimised.join(', ')} (the optimising compiler then stays resident, ~4 MB)`
      : `none (--trace-opt); node's path work at start grows with the length of the checkout's path (${ROOT.length} characters here; the installed service's /opt/azcd is shorter)`,
  });
}

/** Context switches of every thread of an idle process over a window: each one is a wake-up. */
async function idleWakes(pid: number, startedAt: number, settleMs: number, windowMs: number): Promise<Wakes> {
  await sleep(Math.max(0, startedAt + settleMs - performance.now()));
  const before = readContextSwitches(pid);
  const started = performance.now();
  await sleep(windowMs);
  const after = readContextSwitches(pid);
  const smaps = readSmapsRollup(pid);
  return {
    total: after.total - before.total,
    main: after.main - before.main,
    threads: after.threads,
    windowMs: performance.now() - started,
    // Memory once start-up is long over (V8 has shrunk its heap): what an appliance idles at.
    rssKb: readMemory(pid).rss,
    privateKb: smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN,
  };
}
const kbToMB = (kb: number) => (kb * 1024) / 1e6;

/** A plain-node process (no tsx) that loads the same uWS binary through dist/daemon/http/uws.js and answers /api/health. */
export const BARE_SCRIPT = `
import { loadUws } from ${JSON.stringify(path.join(ROOT, 'dist/daemon/http/uws.js'))};
const { module: uws } = loadUws();
uws.App()
  .get('/api/health', (res) => { res.writeHeader('Content-Type', 'application/json').end('{"status":"ok"}'); })
  .listen('127.0.0.1', 0, (socket) => {
    process.stdout.write('listening on http://127.0.0.1:' + uws.us_socket_local_port(socket) + '\\n');
  });
`;

interface StartSample {
  listeningMs: number;
  /** Thread wake-ups of the idle process over the wake window (only where measured). */
  wakes?: { total: number; main: number; threads: number; windowMs: number; rssKb: number; privateKb: number };
  readyMs: number;
  idleRssKb: number;
  idleAnonKb: number;
  privateDirtyKb: number;
  /** Private_Dirty + Private_Clean: what this process alone holds in memory. */
  privateKb: number;
}

async function bareStart(wakeWindow?: { settleMs: number; windowMs: number }): Promise<StartSample> {
  const started = performance.now();
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', BARE_SCRIPT], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let buffer = '';
      const timer = setTimeout(() => reject(new Error('bare uWS did not print its port')), 10_000);
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        buffer += chunk;
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(buffer);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('exit', (code) => reject(new Error(`bare uWS exited with ${code}`)));
    });
    const listeningMs = performance.now() - started;
    await waitHealthy(port, performance.now() + 10_000, child);
    const readyMs = performance.now() - started;
    await sleep(IDLE_SETTLE_MS);
    const mem = readMemory(child.pid!);
    const smaps = readSmapsRollup(child.pid!);
    const wakes = wakeWindow
      ? await idleWakes(child.pid!, started, wakeWindow.settleMs, wakeWindow.windowMs)
      : undefined;
    return {
      wakes,
      listeningMs,
      readyMs,
      idleRssKb: mem.rss,
      idleAnonKb: mem.anon,
      privateDirtyKb: smaps?.privateDirty ?? Number.NaN,
      privateKb: smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN,
    };
  } finally {
    await stopChild(child, 2000);
  }
}

async function daemonStart(
  stateDir: string,
  wakeWindow?: { settleMs: number; windowMs: number },
): Promise<StartSample> {
  const started = performance.now();
  const daemon = await spawnBenchDaemon({ logLevel: 'info', stdout: 'read', stateDir, keepStateDir: true });
  try {
    await sleep(IDLE_SETTLE_MS);
    const mem = readMemory(daemon.pid);
    const smaps = readSmapsRollup(daemon.pid);
    // No client, no stream, no amplifier traffic beyond its own polling: whatever wakes it now is its own timers.
    const wakes = wakeWindow
      ? await idleWakes(daemon.pid, started, wakeWindow.settleMs, wakeWindow.windowMs)
      : undefined;
    return {
      listeningMs: daemon.listeningMs!,
      readyMs: daemon.readyMs,
      idleRssKb: mem.rss,
      idleAnonKb: mem.anon,
      privateDirtyKb: smaps?.privateDirty ?? Number.NaN,
      privateKb: smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN,
      wakes,
    };
  } finally {
    await daemon.stop();
  }
}

export async function benchColdStart(options: SectionOptions): Promise<Row[]> {
  const runs = options.quick ? 3 : 5;
  const wakeWindow = options.quick
    ? { settleMs: WAKE_SETTLE_MS.quick, windowMs: WAKE_WINDOW_MS.quick }
    : { settleMs: WAKE_SETTLE_MS.full, windowMs: WAKE_WINDOW_MS.full };
  const first: StartSample[] = [];
  const restart: StartSample[] = [];
  const bare: StartSample[] = [];
  for (let i = 0; i < runs; i++) {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-bench-start-'));
    try {
      const last = i === runs - 1;
      bare.push(await bareStart(last ? wakeWindow : undefined));
      first.push(await daemonStart(stateDir));
      // The wake-ups are counted once, on the last restart (an existing state, as the appliance runs for weeks).
      restart.push(await daemonStart(stateDir, last ? wakeWindow : undefined));
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    const f = first[i]!;
    options.log(
      `start: run ${i + 1}: first start listening ${Math.round(f.listeningMs)} ms, healthy ${Math.round(f.readyMs)} ms, idle RSS ${round(kbToMB(f.idleRssKb))} MB; ` +
        `restart healthy ${Math.round(restart[i]!.readyMs)} ms; bare uWS healthy ${Math.round(bare[i]!.readyMs)} ms, RSS ${round(kbToMB(bare[i]!.idleRssKb))} MB`,
    );
  }
  type Measure = Exclude<keyof StartSample, 'wakes'>;
  const med = (list: StartSample[], key: Measure) => median(list.map((s) => s[key]));
  const samples = (list: StartSample[], key: Measure) => list.map((s) => Math.round(s[key])).join('/');
  const wakes = restart[runs - 1]!.wakes!;
  const bareWakes = bare[runs - 1]!.wakes!;
  const per5s = (w: Wakes, n = w.total) => (n * 5000) / w.windowMs;
  const optimised = await optimisedAtStart();
  // The installed service announces itself over SSDP and mDNS, which load their chunk (node-ssdp and ciao bundled in):
  // the same start, announcing on loopback only (nothing reaches a real network from a benchmark).
  const optimisedWithSsdp = await optimisedAtStart(['--ssdp', '--ssdp-interfaces', 'lo']);
  return [
    optimisedRow('functions V8 optimised during a first start and its first request', optimised),
    optimisedRow(
      'functions V8 optimised during a first start and its first request, with SSDP (as installed)',
      optimisedWithSsdp,
    ),
    makeRow({
      section: 'start',
      name: `cold start, empty state dir: spawn → first 200 /api/health (median of ${runs})`,
      value: med(first, 'readyMs'),
      unit: 'ms',
      baseline: med(bare, 'readyMs'),
      target: { on: 'value', op: '<', threshold: 500 },
      note:
        `includes creating the admin (one scrypt hash, N=16384) and the schema; runs ${samples(first, 'readyMs')} ms; ` +
        `"listening" line at ${Math.round(med(first, 'listeningMs'))} ms (median); baseline = plain node loading the same uWS binary`,
      details: { first, bare },
    }),
    makeRow({
      section: 'start',
      name: `restart, existing state: spawn → first 200 /api/health (median of ${runs})`,
      value: med(restart, 'readyMs'),
      unit: 'ms',
      baseline: med(bare, 'readyMs'),
      target: { on: 'value', op: '<', threshold: 300 },
      note: `no admin to create; runs ${samples(restart, 'readyMs')} ms`,
      details: { restart },
    }),
    makeRow({
      section: 'start',
      name: `idle private memory ${IDLE_SETTLE_MS / 1000} s after first start (median of ${runs})`,
      value: kbToMB(med(first, 'privateKb')),
      unit: 'MB',
      baseline: kbToMB(med(bare, 'privateKb')),
      note: 'Private_Dirty + Private_Clean from smaps_rollup: what this process alone costs (the rest of RSS is shared, clean pages of node)',
    }),
    makeRow({
      section: 'start',
      name: `idle wake-ups per 5 s, all threads (${Math.round(wakes.windowMs / 1000)} s from ${wakeWindow.settleMs / 1000} s after start, no clients)`,
      value: per5s(wakes),
      unit: 'wakes',
      baseline: per5s(bareWakes),
      note:
        `context switches of the daemon's ${wakes.threads} threads over ${Math.round(wakes.windowMs / 1000)} s: ${wakes.total} (main thread ${wakes.main}); ` +
        `bare uWS ${bareWakes.total} (main ${bareWakes.main}): uWS updates its Date header from a 1 s timer that JavaScript cannot turn off`,
      details: { wakes, bareWakes },
    }),
    makeRow({
      section: 'start',
      name: "idle wake-ups per 5 s of the daemon's own (beyond bare uWS's)",
      value: Math.max(0, per5s(wakes) - per5s(bareWakes)),
      unit: 'wakes',
      target: { on: 'value', op: '<=', threshold: 1 },
      note: 'the daemon minus bare uWS measured the same way: the log flush, watchdog and every other timer of the daemon itself',
    }),
    makeRow({
      section: 'start',
      name: `idle RSS ${IDLE_SETTLE_MS / 1000} s after first start (median of ${runs})`,
      value: kbToMB(med(first, 'idleRssKb')),
      unit: 'MB',
      baseline: kbToMB(med(bare, 'idleRssKb')),
      target: { on: 'value', op: '<', threshold: 60 },
      note: `VmRSS in 10^6 bytes; anonymous (heap + native) ${round(kbToMB(med(first, 'idleAnonKb')))} MB vs bare ${round(kbToMB(med(bare, 'idleAnonKb')))} MB; Private_Dirty ${round(kbToMB(med(first, 'privateDirtyKb')))} MB vs bare ${round(kbToMB(med(bare, 'privateDirtyKb')))} MB (the rest is clean, shared file pages of node and its addons); restart ${round(kbToMB(med(restart, 'idleRssKb')))} MB; baseline = plain node + uWS`,
    }),
    makeRow({
      section: 'start',
      name: `idle RSS ${Math.round((wakeWindow.settleMs + wakes.windowMs) / 1000)} s after a restart (steady idle)`,
      value: kbToMB(wakes.rssKb),
      unit: 'MB',
      baseline: kbToMB(bareWakes.rssKb),
      target: { on: 'value', op: '<', threshold: 60 },
      note: `private (Private_Dirty + Private_Clean) ${round(kbToMB(wakes.privateKb))} MB vs bare ${round(kbToMB(bareWakes.privateKb))} MB; read at the end of the wake-up window`,
    }),
  ];
}
