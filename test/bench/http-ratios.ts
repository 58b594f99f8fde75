// Request throughput of the daemon against baselines in the same run, driven by wrk (C) on its own core while the
// server under test has the other, alternating rounds; each ratio is the median of the per-round ratios. Reads are
// set against bare uWS answering the same bytes; the volume PUT against the same-work baseline (same-work-server.ts:
// the same body checks, rows, commit per turn and event frames to the same six streams), and bare uWS for reference.
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client } from '../helpers/client.js';
import type { BaselineConfig } from './baseline-server.js';
import { type BaselineProcess, startBaseline, startSameWork } from './lib/baseline.js';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { captureFrames, withoutSequence } from './lib/event-frames.js';
import { setupPlayers } from './lib/fixture.js';
import { readCpuNs } from './lib/proc.js';
import { BENCH_DIR, forkTs, nextMessage, sleep, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions, type Target } from './lib/report.js';
import { median, round } from './lib/stats.js';
import { assertWrk, generatorBound, pinProcess, runWrk, type WrkResult, type WrkSpec } from './lib/wrk.js';

/** The daemon's password hashing parameters (daemon/domain/accounts/secrets.ts, SCRYPT); the baseline repeats the same work. */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };
const CONNECTIONS = 10;
/** The server under test runs on this core, wrk on the other (the machine has two). */
const SERVER_CORE = 0;
const GENERATOR_CORE = 1;
/** Below this share of a core on both sides, neither the server nor wrk set the pace: the machine was busy. */
const CONTENDED_SHARE = 0.85;
/** Event streams open on each server during the volume PUT: every PUT writes its three frames to each. */
const SUBSCRIBERS = 6;

type Baseline = 'bare' | 'same';
type Side = Baseline | 'azcd';

const BASELINE_NAMES: Record<Baseline, string> = {
  bare: 'bare uWS',
  same: 'the same-work baseline',
};

interface Case {
  name: string;
  request: (t: { key: string; playerId: string }) => Pick<WrkSpec, 'method' | 'path' | 'headers' | 'bodies'>;
  /** The baselines measured beside azcd in each round; the target applies to the ratio against the first. */
  against: Baseline[];
  target?: Target;
  connections?: number;
  /** Rounds for this case (login is slow by design: fewer). */
  rounds?: number;
  /** The shortest run and warm-up in seconds (a login takes long enough on a busy machine that 1-2 s may end none). */
  minSeconds?: number;
  /** Six event streams open on every server while this case runs (they receive what the requests publish). */
  streams?: boolean;
}

/** One wrk run, with the subscriber process's share of the generator's core and the frames each stream got. */
interface Run extends WrkResult {
  /** The share of core 1 the stream reader took (0 without streams). */
  sinkCpuShare: number;
  /** Frames each stream received per request answered (undefined without streams). */
  framesPerRequest?: number;
}

const cpu = (r: WrkResult) =>
  `server ${round(r.serverCpuUsPerRequest)} µs/req at ${Math.round(r.serverCpuShare * 100)}% of a core, wrk ${round(r.generatorCpuUsPerRequest)} µs/req at ${Math.round(r.generatorCpuShare * 100)}%`;

const describe = (r: WrkResult): string =>
  `${round(r.reqPerSec)} req/s, p50 ${round(r.latencyMs.p50, 3)} ms, p99 ${round(r.latencyMs.p99, 3)} ms; ${cpu(r)}` +
  (r.non2xx || r.errors ? `; non-2xx ${r.non2xx}, socket errors ${r.errors}` : '') +
  (generatorBound(r) ? '; GENERATOR-BOUND' : '');

const brief = (r: Run) => ({
  reqPerSec: round(r.reqPerSec),
  requests: r.requests,
  non2xx: r.non2xx,
  errors: r.errors,
  latencyMs: {
    p50: round(r.latencyMs.p50, 3),
    p90: round(r.latencyMs.p90, 3),
    p99: round(r.latencyMs.p99, 3),
    max: round(r.latencyMs.max, 3),
  },
  serverCpuShare: round(r.serverCpuShare),
  serverCpuUsPerRequest: round(r.serverCpuUsPerRequest),
  generatorCpuShare: round(r.generatorCpuShare),
  generatorCpuUsPerRequest: round(r.generatorCpuUsPerRequest),
  sinkCpuShare: round(r.sinkCpuShare),
  framesPerRequest: r.framesPerRequest === undefined ? undefined : round(r.framesPerRequest, 3),
});

const medianOf = <R extends WrkResult>(runs: R[], pick: (r: R) => number) => median(runs.map(pick));

/** The generator's core was (nearly) full, wrk and the stream reader together, while the server's was not. */
const generatorFull = (r: Run) =>
  generatorBound(r) || (r.generatorCpuShare + r.sinkCpuShare >= 0.9 && r.serverCpuShare < 0.9);

/** The process holding the event streams (lib/sse-sink.ts), on the generator's core. */
interface Sink {
  child: ChildProcess;
  open(name: Side, port: number, headers: Record<string, string>): Promise<void>;
  frames(name: Side): Promise<number>;
  /** The frames once the reader has caught up (no more for 200 ms, at most 5 s): it may lag on a busy core. */
  settledFrames(name: Side): Promise<number>;
  close(name: Side): Promise<void>;
  stop(): Promise<void>;
}

async function startSink(core: number): Promise<Sink> {
  const child = forkTs(path.join(BENCH_DIR, 'lib/sse-sink.ts'));
  await nextMessage(child, (m) => m?.type === 'ready', 30_000, 'event stream reader start');
  pinProcess(child.pid!, core);
  const frames = async (name: Side) => {
    child.send({ type: 'counts' });
    const { counts } = await nextMessage<{ counts: Record<string, { frames: number }> }>(
      child,
      (m) => m?.type === 'counts',
      10_000,
      'event stream counts',
    );
    return counts[name]?.frames ?? 0;
  };
  return {
    child,
    frames,
    settledFrames: async (name) => {
      const until = performance.now() + 5000;
      let last = await frames(name);
      for (;;) {
        await sleep(200);
        const now = await frames(name);
        if (now === last || performance.now() > until) return now;
        last = now;
      }
    },
    open: async (name, port, headers) => {
      child.send({ type: 'open', name, port, path: '/api/stream/events', headers, count: SUBSCRIBERS });
      await nextMessage(child, (m) => m?.type === 'opened' && m.name === name, 30_000, `${name} event streams`);
    },
    close: async (name) => {
      child.send({ type: 'close', name });
      await nextMessage(child, (m) => m?.type === 'closed' && m.name === name, 10_000, `closing ${name} streams`);
    },
    stop: () => stopChild(child, 2000),
  };
}

/**
 * Starts the daemon on a state folder holding the fixture (four players, one driving two zones) and copies that
 * database for the same-work baseline: the daemon is stopped once (SQLite is held alone while it runs) and started
 * again on the same folder, so both servers work on the same rows and pages.
 */
async function daemonWithCopy(copyDir: string): Promise<{ daemon: BenchDaemon; playerId: string; dbCopy: string }> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-bench-'));
  let first: BenchDaemon | undefined;
  let playerId: string;
  try {
    first = await startBenchDaemon({ logLevel: 'info', stdout: 'discard', stateDir, keepStateDir: true });
    playerId = (await setupPlayers(first.base, first.adminKey)).playerId;
  } catch (err) {
    await first?.stop();
    rmSync(stateDir, { recursive: true, force: true });
    throw err;
  }
  await first.stop();
  const dbCopy = path.join(copyDir, 'azc.db');
  copyFileSync(path.join(stateDir, 'azc.db'), dbCopy);
  if (existsSync(path.join(stateDir, 'azc.db-wal'))) copyFileSync(path.join(stateDir, 'azc.db-wal'), `${dbCopy}-wal`);
  // The second start owns the folder: its stop() removes it.
  const daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard', stateDir });
  return { daemon, playerId, dbCopy };
}

export async function benchHttp(options: SectionOptions): Promise<Row[]> {
  assertWrk();
  const durationS = options.quick ? 2 : 5;
  const warmupS = options.quick ? 1 : 2;
  const rounds = options.quick ? 2 : 5;
  const copyDir = mkdtempSync(path.join(tmpdir(), 'azc-same-work-'));
  let daemon: BenchDaemon | undefined;
  let baseline: BaselineProcess | undefined;
  let sameWork: BaselineProcess | undefined;
  let sink: Sink | undefined;
  const rows: Row[] = [];
  try {
    const started = await daemonWithCopy(copyDir);
    daemon = started.daemon;
    const { playerId, dbCopy } = started;
    const key = daemon.adminKey;
    const api = client(daemon.base, key);
    const me = await api.get('/api/users/me');
    const players = await api.get('/api/players');
    const login = await api.post('/api/auth/login', { username: 'admin', password: daemon.adminPassword }, { key: '' });
    if (me.status !== 200 || players.status !== 200 || login.status !== 200) {
      throw new Error(`fixture requests failed: me ${me.status}, players ${players.status}, login ${login.status}`);
    }
    const requestIdLength = (me.headers.get('x-request-id') ?? '').length;
    const config: BaselineConfig = {
      canned: [
        { path: '/api/users/me', body: me.text, contentType: me.headers.get('content-type') ?? 'application/json' },
        {
          path: '/api/players',
          body: players.text,
          contentType: players.headers.get('content-type') ?? 'application/json',
        },
      ],
      jsonPut: ['/api/players/:id/volume', '/api/zones/:id/volume'],
      login: { path: '/api/auth/login', body: login.text, scrypt: SCRYPT, salt: 'YmVuY2gtc2FsdC0xMjM0NQ' },
      requestIdLength,
    };
    baseline = await startBaseline(config);

    // The frames one PUT makes on the daemon: the same-work baseline writes the same, with ids of the same length.
    const firstPut = (port: number) => () =>
      client(`http://127.0.0.1:${port}`, key)
        .put(`/api/players/${playerId}/volume`, { volume: 0.5 })
        .then((r) => {
          if (r.status !== 204) throw new Error(`PUT volume on :${port}: ${r.status} ${r.text.slice(0, 200)}`);
        });
    const daemonFrames = await captureFrames(daemon.port, { 'x-api-key': key }, 3, firstPut(daemon.port));
    const eventIdPrefix = /^id: (.*?)\d+\n/.exec(daemonFrames[0]!)?.[1] ?? '';
    sameWork = await startSameWork({ dbFile: dbCopy, requestIdLength, eventIdPrefix });
    const sameFrames = await captureFrames(sameWork.port, {}, 3, firstPut(sameWork.port));
    const shape = (frames: string[]) => frames.map(withoutSequence).sort().join('');
    if (shape(daemonFrames) !== shape(sameFrames))
      throw new Error(
        `the same-work baseline's frames differ from the daemon's:\n${daemonFrames.join('\n')}\n--\n${sameFrames.join('\n')}`,
      );

    const servers: Record<Side, { base: string; pid: number; port: number }> = {
      bare: baseline,
      same: sameWork,
      azcd: daemon,
    };
    // The servers on one core (only one is under load at a time), wrk and the stream reader alone on the other.
    for (const server of Object.values(servers)) pinProcess(server.pid, SERVER_CORE);
    sink = await startSink(GENERATOR_CORE);
    options.log(
      `http: azcd on :${daemon.port} (log info → /dev/null), bare uWS on :${baseline.port} (${baseline.uws}), ` +
        `same-work baseline on :${sameWork.port}, all on core ${SERVER_CORE}; wrk 1 thread, ${CONNECTIONS} connections, ` +
        `and the PUT's ${SUBSCRIBERS} event streams per server, on core ${GENERATOR_CORE}`,
    );

    const cases: Case[] = [
      {
        name: 'GET /api/users/me',
        request: ({ key }) => ({ method: 'GET', path: '/api/users/me', headers: { 'X-API-Key': key } }),
        against: ['bare'],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
      },
      {
        name: 'GET /api/players (4 players)',
        request: ({ key }) => ({ method: 'GET', path: '/api/players', headers: { 'X-API-Key': key } }),
        against: ['bare'],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
      },
      {
        name: `PUT /api/players/{id}/volume (2 zones, 3 events to ${SUBSCRIBERS} streams, durable ack)`,
        request: ({ key, playerId }) => ({
          method: 'PUT',
          path: `/api/players/${playerId}/volume`,
          headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
          bodies: [JSON.stringify({ volume: 0.25 }), JSON.stringify({ volume: 0.75 })],
        }),
        against: ['same', 'bare'],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
        streams: true,
      },
      {
        name: 'POST /api/auth/login (scrypt N=16384, 4 connections)',
        request: () => ({
          method: 'POST',
          path: '/api/auth/login',
          headers: { 'Content-Type': 'application/json' },
          bodies: [JSON.stringify({ username: 'admin', password: daemon!.adminPassword })],
        }),
        against: ['bare'],
        // The login throttle counts attempts in flight per username and per address (5 free): a 5th concurrent
        // login from 127.0.0.1 is answered 429 by design, so this case keeps 4 in flight.
        connections: 4,
        rounds: options.quick ? 1 : 2,
        minSeconds: 3,
      },
    ];

    for (const c of cases) {
      const sides: Side[] = [...c.against, 'azcd'];
      if (c.streams) {
        await sink.open('azcd', daemon.port, { 'X-API-Key': key });
        await sink.open('same', sameWork.port, {});
      }
      const load = async (side: Side, title: string, seconds: number): Promise<Run> => {
        const streams = c.streams && side !== 'bare';
        const framesBefore = streams ? await sink!.frames(side) : 0;
        const sinkBefore = readCpuNs(sink!.child.pid!);
        const began = performance.now();
        const r = await runWrk({
          title,
          base: servers[side].base,
          serverPid: servers[side].pid,
          ...c.request({ key, playerId }),
          connections: c.connections ?? CONNECTIONS,
          durationS: Math.max(seconds, c.minSeconds ?? 0),
          core: GENERATOR_CORE,
        });
        const sinkCpuShare = (readCpuNs(sink!.child.pid!) - sinkBefore) / 1e6 / (performance.now() - began);
        const framesPerRequest = streams
          ? ((await sink!.settledFrames(side)) - framesBefore) / SUBSCRIBERS / r.requests
          : undefined;
        return { ...r, sinkCpuShare, framesPerRequest };
      };
      // Warm-up (JIT, SQLite page cache) on every server, not recorded.
      for (const side of sides) await load(side, `${c.name} warm-up ${side}`, warmupS);

      // Alternating rounds (bare, [same,] azcd, bare, ...) so drift on a shared machine hits all alike.
      const runs: Record<Side, Run[]> = { bare: [], same: [], azcd: [] };
      const caseRounds = c.rounds ?? rounds;
      for (let pass = 1; pass <= caseRounds; pass++) {
        for (const side of sides) {
          const r = await load(side, `${c.name} ${side} round ${pass}`, durationS);
          if (side === 'azcd' && (r.non2xx > 0 || r.errors > 0))
            throw new Error(`${c.name} on azcd: ${r.non2xx} non-2xx responses, ${r.errors} socket errors`);
          runs[side].push(r);
          const frames = r.framesPerRequest === undefined ? '' : `; ${round(r.framesPerRequest)} frames/req per stream`;
          const reader = c.streams ? `, stream reader ${Math.round(r.sinkCpuShare * 100)}%` : '';
          options.log(
            `http: ${c.name} round ${pass}: ${side.padEnd(4)} ${describe(r)}${reader}${frames}` +
              (generatorFull(r) ? '; GENERATOR CORE FULL' : ''),
          );
        }
      }
      if (c.streams) {
        await sink.close('azcd');
        await sink.close('same');
      }
      c.against.forEach((against, i) => {
        rows.push(ratioRow(c, against, runs[against], runs.azcd, i === 0 ? c.target : undefined, caseRounds));
      });
    }
    if (sameWork) {
      sameWork.child.send({ type: 'stats' });
      const stats = await nextMessage<{ commits: number; rowWrites: number; answered: number }>(
        sameWork.child,
        (m) => m?.type === 'stats',
        5000,
        'same-work stats',
      );
      options.log(
        `http: same-work baseline: ${stats.answered} PUTs answered in ${stats.commits} commits ` +
          `(${round(stats.answered / Math.max(1, stats.commits))} per commit, ${round(stats.rowWrites / Math.max(1, stats.commits))} rows each)`,
      );
    }
    return rows;
  } finally {
    await sink?.stop();
    await sameWork?.stop();
    await baseline?.stop();
    await daemon?.stop();
    rmSync(copyDir, { recursive: true, force: true });
  }
}

/** azcd against one baseline over the same alternating rounds: the median per-round ratio, its spread and the CPU. */
function ratioRow(
  c: Case,
  against: Baseline,
  base: Run[],
  azcd: Run[],
  target: Target | undefined,
  caseRounds: number,
): Row {
  const ratios = azcd.map((a, i) => a.reqPerSec / base[i]!.reqPerSec);
  const cpuRatios = azcd.map((a, i) => base[i]!.serverCpuUsPerRequest / a.serverCpuUsPerRequest);
  const boundRounds = [...base, ...azcd].filter(generatorFull).length;
  const refused = boundRounds > 0;
  // Neither core full: something outside the benchmark took CPU time, and the figures are noisy.
  const contended = [...base, ...azcd].filter(
    (r) => r.serverCpuShare < CONTENDED_SHARE && r.generatorCpuShare + r.sinkCpuShare < CONTENDED_SHARE,
  ).length;
  const cpuRatio = median(cpuRatios);
  // When most runs were contended, how much CPU each server got decided its rate more than its own work: the
  // CPU each spent per request is then the figure judged (the rate ratio stays in the note).
  const byCpu = contended > (base.length + azcd.length) / 2;
  const judged = byCpu ? cpuRatios : ratios;
  const med = (runs: Run[], pick: (r: Run) => number) => round(medianOf(runs, pick));
  const pct = (runs: Run[], pick: (r: Run) => number) => Math.round(medianOf(runs, pick) * 100);
  const label = BASELINE_NAMES[against];
  const frames = azcd[0]?.framesPerRequest !== undefined && base[0]?.framesPerRequest !== undefined;
  return makeRow({
    section: 'http',
    name: c.against.length > 1 ? `${c.name} vs ${label}` : c.name,
    // The figures the ratio is made of: CPU per request when that is what is judged (the rates are in the note).
    value: byCpu ? medianOf(azcd, (r) => r.serverCpuUsPerRequest) : medianOf(azcd, (r) => r.reqPerSec),
    unit: byCpu ? 'µs CPU/req' : 'req/s',
    baseline: byCpu ? medianOf(base, (r) => r.serverCpuUsPerRequest) : medianOf(base, (r) => r.reqPerSec),
    ratio: refused ? Number.NaN : median(judged),
    spread: refused ? undefined : [Math.min(...judged), Math.max(...judged)],
    target,
    note:
      (refused
        ? `refused: the generator's core (wrk${c.streams ? ' and the stream reader' : ''}) was full while the server's was not in ${boundRounds} run(s), so the figures are the generator's; `
        : '') +
      (contended
        ? `NOISY: in ${contended} of ${base.length + azcd.length} runs neither the server's nor the generator's core was full (another process competed)${byCpu ? ', so the ratio judged is CPU per request (baseline µs/req ÷ azcd µs/req, per round)' : ''}; `
        : '') +
      `against ${label}; req/s ${round(medianOf(azcd, (r) => r.reqPerSec))} against ${round(medianOf(base, (r) => r.reqPerSec))}, ` +
      `ratio ${round(median(ratios))}, rounds ${ratios.map((r) => round(r)).join('/')}; ` +
      `CPU ratio (baseline µs/req ÷ azcd µs/req) ${round(cpuRatio)}, rounds ${cpuRatios.map((r) => round(r)).join('/')}; ` +
      `CPU per request: azcd ${med(azcd, (r) => r.serverCpuUsPerRequest)} µs at ${pct(azcd, (r) => r.serverCpuShare)}% of its core, ` +
      `baseline ${med(base, (r) => r.serverCpuUsPerRequest)} µs at ${pct(base, (r) => r.serverCpuShare)}%; ` +
      `wrk ${med(azcd, (r) => r.generatorCpuUsPerRequest)}/${med(base, (r) => r.generatorCpuUsPerRequest)} µs at ` +
      `${pct(azcd, (r) => r.generatorCpuShare)}%/${pct(base, (r) => r.generatorCpuShare)}%` +
      (c.streams
        ? `, stream reader at ${pct(azcd, (r) => r.sinkCpuShare)}%/${pct(base, (r) => r.sinkCpuShare)}%`
        : '') +
      ` of core ${GENERATOR_CORE}; ` +
      (frames
        ? `frames per request per stream ${med(azcd, (r) => r.framesPerRequest ?? 0)}/${med(base, (r) => r.framesPerRequest ?? 0)}; `
        : '') +
      `p99 azcd ${med(azcd, (r) => r.latencyMs.p99)} ms, baseline ${med(base, (r) => r.latencyMs.p99)} ms`,
    details: {
      against,
      azcd: azcd.map(brief),
      baseline: base.map(brief),
      ratios,
      cpuRatios,
      judgedOn: byCpu ? 'cpu per request' : 'requests per second',
      contendedRuns: contended,
      generatorFullRuns: boundRounds,
      connections: c.connections ?? CONNECTIONS,
      rounds: caseRounds,
    },
  });
}
