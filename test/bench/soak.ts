// `npm run soak`: minutes of mixed API load plus 500 churning SSE clients; is the daemon's memory and fd count flat?
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { createPlaylist, setupPlayers } from './lib/fixture.js';
import { type LoadResult, runLoad } from './lib/load.js';
import { readCpuMs, readFdCount, readLoadAverage, readMemory, readSocketCount, readThreads } from './lib/proc.js';
import { BENCH_DIR, ensureBuild, forkTs, nextMessage, sleep, stopChild } from './lib/processes.js';
import { formatTable, machineInfo, makeRow, type Row, writeResults } from './lib/report.js';
import { mean, round } from './lib/stats.js';

const SAMPLE_EVERY_S = 10;
const CLIENT_PROCESSES = 2;
const API_RATE = 200;
const API_CONNECTIONS = 4;

interface Sample {
  t: number;
  phase: 'idle' | 'load' | 'after';
  rssKb: number;
  anonKb: number;
  fds: number;
  sockets: number;
  threads: number;
  cpuShare: number;
  requests: number;
  sseOpen: number;
  sseOpened: number;
}

function parseArgs(argv: string[]): { minutes: number; subscribers: number } {
  let minutes = argv.includes('--quick') ? 0.5 : 3;
  let subscribers = 500;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--minutes') minutes = Number(argv[++i]);
    else if (argv[i] === '--sse') subscribers = Number(argv[++i]);
  }
  if (!(minutes > 0 && minutes <= 60)) throw new Error(`--minutes must be from 0 to 60, got ${minutes}`);
  if (!(subscribers >= 0 && subscribers <= 5000)) throw new Error(`--sse must be from 0 to 5000, got ${subscribers}`);
  return { minutes, subscribers };
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den > 0 ? num / den : 0;
}

function thirds<T>(list: T[]): { first: T[]; last: T[] } {
  const n = Math.max(1, Math.floor(list.length / 3));
  return { first: list.slice(0, n), last: list.slice(list.length - n) };
}

function curveTable(samples: Sample[]): string {
  const header = [
    't s',
    'phase',
    'RSS MiB',
    'anon MiB',
    'fds',
    'sockets',
    'threads',
    'CPU %',
    'requests',
    'SSE open',
    'SSE opened',
  ];
  const rows = samples.map((s) => [
    String(Math.round(s.t)),
    s.phase,
    (s.rssKb / 1024).toFixed(1),
    (s.anonKb / 1024).toFixed(1),
    String(s.fds),
    String(s.sockets),
    String(s.threads),
    String(Math.round(s.cpuShare * 100)),
    String(s.requests),
    String(s.sseOpen),
    String(s.sseOpened),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

export async function soak(
  minutes: number,
  subscribers: number,
  log: (line: string) => void,
): Promise<{ rows: Row[]; samples: Sample[]; load: LoadResult; churn: unknown[] }> {
  const durationS = Math.round(minutes * 60);
  let daemon: BenchDaemon | undefined;
  const clients: ChildProcess[] = [];
  try {
    daemon = await startBenchDaemon({
      logLevel: 'info',
      stdout: 'discard',
      needFds: subscribers + 512,
      limits: { streamsPerUser: subscribers + 16, streamsTotal: subscribers + 64 },
    });
    const fixture = await setupPlayers(daemon.base, daemon.adminKey);
    const editPlaylistId = await createPlaylist(fixture.api, 'Soak edits', 3);
    const reorderPlaylistId = await createPlaylist(fixture.api, 'Soak reorder', 5);
    log(
      `soak: azcd pid ${daemon.pid} on :${daemon.port} (log info→/dev/null); ${durationS} s of ${API_RATE} req/s mixed API load over ${API_CONNECTIONS} connections + ${subscribers} churning SSE clients`,
    );

    const samples: Sample[] = [];
    const started = performance.now();
    let lastCpu = readCpuMs(daemon.pid);
    let lastWall = performance.now();
    let requests = 0;
    const churnStats = new Map<ChildProcess, { open: number; opened: number }>();
    const sample = (phase: Sample['phase']) => {
      const mem = readMemory(daemon!.pid);
      const cpu = readCpuMs(daemon!.pid);
      const wall = performance.now();
      const s: Sample = {
        t: (wall - started) / 1000,
        phase,
        rssKb: mem.rss,
        anonKb: mem.anon,
        fds: readFdCount(daemon!.pid),
        sockets: readSocketCount(daemon!.pid),
        threads: readThreads(daemon!.pid),
        cpuShare: (cpu - lastCpu) / Math.max(1, wall - lastWall),
        requests,
        sseOpen: [...churnStats.values()].reduce((a, c) => a + c.open, 0),
        sseOpened: [...churnStats.values()].reduce((a, c) => a + c.opened, 0),
      };
      lastCpu = cpu;
      lastWall = wall;
      samples.push(s);
      log(
        `soak: t=${Math.round(s.t)} s ${phase}: RSS ${(s.rssKb / 1024).toFixed(1)} MiB (anon ${(s.anonKb / 1024).toFixed(1)}), fds ${s.fds} (${s.sockets} sockets), ` +
          `CPU ${Math.round(s.cpuShare * 100)}%, ${s.requests} requests, ${s.sseOpen} streams open (${s.sseOpened} opened)`,
      );
    };
    sample('idle');

    const perClient = Math.ceil(subscribers / CLIENT_PROCESSES);
    if (subscribers > 0) {
      for (let i = 0; i < CLIENT_PROCESSES; i++)
        clients.push(forkTs(path.join(BENCH_DIR, 'lib/sse-child.ts'), [], { needFds: perClient + 256 }));
      await Promise.all(clients.map((c) => nextMessage(c, (m) => m?.type === 'ready', 30_000, 'SSE client start')));
    }
    const churnDone = clients.map((c, i) => {
      c.on('message', (m: any) => {
        if (m?.type === 'churn-stats') churnStats.set(c, { open: m.open, opened: m.opened });
      });
      c.send({
        type: 'churn',
        port: daemon!.port,
        key: daemon!.adminKey,
        count: Math.min(perClient, subscribers - i * perClient),
        minLifeMs: 1000,
        maxLifeMs: 10_000,
        durationS,
      });
      return nextMessage<Record<string, number>>(
        c,
        (m) => m?.type === 'churn-done',
        (durationS + 60) * 1000,
        'SSE churn',
      );
    });
    const loadDone = runLoad(
      {
        title: 'soak mixed API',
        url: daemon.base,
        connections: API_CONNECTIONS,
        pipelining: 1,
        durationS,
        overallRate: API_RATE,
        requests: [],
        scenario: 'soak-mixed',
        scenarioArgs: {
          apiKey: daemon.adminKey,
          playerIds: fixture.playerIds,
          zoneIds: fixture.zoneIds,
          editPlaylistId,
          reorderPlaylistId,
          reorderLength: 5,
        },
        progressEveryS: 5,
      },
      { serverPid: daemon.pid, onProgress: (p) => (requests = p.completed) },
    );
    // Sample on a fixed schedule until the load ends (it is bounded by durationS).
    let loadResult: LoadResult | undefined;
    let loadError: unknown;
    loadDone.then(
      (r) => (loadResult = r),
      (err) => (loadError = err),
    );
    for (let next = SAMPLE_EVERY_S; loadResult === undefined && loadError === undefined; next += SAMPLE_EVERY_S) {
      while (performance.now() - started < next * 1000 && loadResult === undefined && loadError === undefined)
        await sleep(200);
      if (daemon.child.exitCode !== null || daemon.child.signalCode !== null)
        throw new Error(`azcd exited during the soak (${daemon.child.exitCode ?? daemon.child.signalCode})`);
      if (loadResult === undefined && loadError === undefined) sample('load');
    }
    if (loadError) throw loadError;
    requests = loadResult!.completed;
    const churn = await Promise.all(churnDone);
    for (const c of clients) c.send({ type: 'close' });
    await Promise.all(clients.map((c) => stopChild(c, 3000)));
    churnStats.clear();
    await sleep(5000);
    sample('after');

    const during = samples.filter((s) => s.phase === 'load');
    const idle = samples.find((s) => s.phase === 'idle')!;
    const after = samples[samples.length - 1]!;
    const { first, last } = thirds(during);
    const rssFirst = mean(first.map((s) => s.rssKb));
    const rssLast = mean(last.map((s) => s.rssKb));
    const anonFirst = mean(first.map((s) => s.anonKb));
    const anonLast = mean(last.map((s) => s.anonKb));
    const fdFirst = mean(first.map((s) => s.fds));
    const fdLast = mean(last.map((s) => s.fds));
    const rssSlope = slope(
      during.map((s) => s.t / 60),
      during.map((s) => s.rssKb / 1024),
    );
    // Flat: the last third within 5% (or 4 MiB, whichever is larger) of the first third; fds within 5% or 20.
    const rssFlat = rssLast - rssFirst <= Math.max(0.05 * rssFirst, 4096);
    const fdFlat = Math.abs(fdLast - fdFirst) <= Math.max(0.05 * fdFirst, 20);
    const fdReturned = after.fds - idle.fds <= 5;
    const churnOpened = churn.reduce((a, c) => a + (c.opened ?? 0), 0);
    const churnFailed = churn.reduce((a, c) => a + (c.failed ?? 0), 0);
    const events = churn.reduce((a, c) => a + (c.events ?? 0), 0);
    const load = loadResult!;
    const rows: Row[] = [
      makeRow({
        section: 'soak',
        name: 'RSS, last third vs first third of the load',
        value: rssLast / 1024,
        unit: 'MiB',
        baseline: rssFirst / 1024,
        note: `${rssFlat ? 'flat' : 'GROWING'} (limit +max(5%, 4 MiB)); slope ${round(rssSlope)} MiB/min; anon ${round(anonFirst / 1024)} → ${round(anonLast / 1024)} MiB; idle ${round(idle.rssKb / 1024)} MiB, after load ${round(after.rssKb / 1024)} MiB`,
      }),
      makeRow({
        section: 'soak',
        name: 'open fds, last third vs first third of the load',
        value: fdLast,
        unit: 'fds',
        baseline: fdFirst,
        note: `${fdFlat ? 'flat' : 'CHANGING'} (limit ±max(5%, 20)); idle ${idle.fds}, 5 s after the load ${after.fds} (${fdReturned ? 'back to idle' : 'NOT back to idle: leaked descriptors?'})`,
      }),
      makeRow({
        section: 'soak',
        name: 'mixed API requests (GET players/zones/playlists, volume PUTs, playlist edits)',
        value: load.reqPerSec,
        unit: 'req/s',
        note: `${load.ok} ok, ${load.non2xx} non-2xx ${JSON.stringify(load.statusCodes)}, ${load.errors} errors; p50/p99 ${round(load.latencyMs.p50, 3)}/${round(load.latencyMs.p99, 3)} ms; target rate ${API_RATE} req/s`,
      }),
      makeRow({
        section: 'soak',
        name: 'SSE streams opened and closed (1-10 s lifetimes)',
        value: churnOpened,
        unit: 'streams',
        note: `${churnFailed} failed to open; ${events} events received in total; ${subscribers} kept open at a time`,
      }),
    ];
    rows[0]!.pass = rssFlat;
    rows[1]!.pass = fdFlat && fdReturned;
    return { rows, samples, load, churn };
  } finally {
    for (const c of clients) if (c.connected) c.send({ type: 'close' });
    await Promise.all(clients.map((c) => stopChild(c, 3000)));
    await daemon?.stop();
  }
}

async function main(): Promise<void> {
  const { minutes, subscribers } = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stdout.write(`${line}\n`);
  await ensureBuild(log);
  const startedAt = new Date().toISOString();
  const loadBefore = readLoadAverage();
  if (loadBefore > 1)
    log(`warning: load average ${loadBefore} before starting: other processes compete for the 2 cores`);
  const result = await soak(minutes, subscribers, log);
  log('');
  log(curveTable(result.samples));
  log('');
  log(formatTable(result.rows));
  const file = writeResults('soak', {
    kind: 'soak',
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machineInfo(),
    options: {
      minutes,
      subscribers,
      sampleEveryS: SAMPLE_EVERY_S,
      apiRate: API_RATE,
      apiConnections: API_CONNECTIONS,
      logLevel: 'info (stdout → /dev/null)',
    },
    loadAverage: { before: loadBefore, after: readLoadAverage() },
    rows: result.rows,
    samples: result.samples,
    load: result.load,
    churn: result.churn,
  });
  log(`\nresults: ${path.relative(process.cwd(), file)}`);
  const broken = result.load.errors > 0 || result.load.non2xx > result.load.completed * 0.01;
  if (broken) {
    process.stderr.write('soak: requests failed during the soak (see non-2xx/errors above)\n');
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
