// Request throughput of the daemon against a bare uWS server answering the same bytes, driven by wrk (C) on its
// own core while the server has the other, alternating rounds; the ratio is the median of the per-round ratios.
import type { BaselineConfig } from './baseline-server.js';
import { startBaseline, type BaselineProcess } from './lib/baseline.js';
import { startBenchDaemon, type BenchDaemon } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
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

interface Case {
  name: string;
  request: (t: { key: string; playerId: string }) => Pick<WrkSpec, 'method' | 'path' | 'headers' | 'bodies'>;
  target?: Target;
  connections?: number;
  /** Rounds for this case (login is slow by design: fewer). */
  rounds?: number;
}

const cpu = (r: WrkResult) =>
  `server ${round(r.serverCpuUsPerRequest)} µs/req at ${Math.round(r.serverCpuShare * 100)}% of a core, wrk ${round(r.generatorCpuUsPerRequest)} µs/req at ${Math.round(r.generatorCpuShare * 100)}%`;

const describe = (r: WrkResult): string =>
  `${round(r.reqPerSec)} req/s, p50 ${round(r.latencyMs.p50, 3)} ms, p99 ${round(r.latencyMs.p99, 3)} ms; ${cpu(r)}` +
  (r.non2xx || r.errors ? `; non-2xx ${r.non2xx}, socket errors ${r.errors}` : '') +
  (generatorBound(r) ? '; GENERATOR-BOUND' : '');

const brief = (r: WrkResult) => ({
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
});

const medianOf = (runs: WrkResult[], pick: (r: WrkResult) => number) => median(runs.map(pick));

export async function benchHttp(options: SectionOptions): Promise<Row[]> {
  assertWrk();
  const durationS = options.quick ? 2 : 5;
  const warmupS = options.quick ? 1 : 2;
  const rounds = options.quick ? 2 : 5;
  let daemon: BenchDaemon | undefined;
  let baseline: BaselineProcess | undefined;
  const rows: Row[] = [];
  try {
    daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard' });
    const fixture = await setupPlayers(daemon.base, daemon.adminKey);
    const api = fixture.api;
    const me = await api.get('/api/users/me');
    const players = await api.get('/api/players');
    const login = await api.post('/api/auth/login', { username: 'admin', password: daemon.adminPassword }, { key: '' });
    if (me.status !== 200 || players.status !== 200 || login.status !== 200) {
      throw new Error(`fixture requests failed: me ${me.status}, players ${players.status}, login ${login.status}`);
    }
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
      requestIdLength: (me.headers.get('x-request-id') ?? '').length,
    };
    baseline = await startBaseline(config);
    // Both servers on one core (only one is under load at a time), wrk alone on the other.
    pinProcess(daemon.pid, SERVER_CORE);
    pinProcess(baseline.pid, SERVER_CORE);
    options.log(
      `http: azcd on :${daemon.port} (log info → /dev/null), bare uWS on :${baseline.port} (${baseline.uws}), both on core ${SERVER_CORE}; ` +
        `wrk 1 thread, ${CONNECTIONS} connections, on core ${GENERATOR_CORE}`,
    );

    const cases: Case[] = [
      {
        name: 'GET /api/users/me',
        request: ({ key }) => ({ method: 'GET', path: '/api/users/me', headers: { 'X-API-Key': key } }),
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
      },
      {
        name: 'GET /api/players (4 players)',
        request: ({ key }) => ({ method: 'GET', path: '/api/players', headers: { 'X-API-Key': key } }),
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
      },
      {
        name: 'PUT /api/players/{id}/volume (2 zones, 3 events, durable ack)',
        request: ({ key, playerId }) => ({
          method: 'PUT',
          path: `/api/players/${playerId}/volume`,
          headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
          bodies: [JSON.stringify({ volume: 0.25 }), JSON.stringify({ volume: 0.75 })],
        }),
        target: { on: 'ratio', op: '>=', threshold: 0.5 },
      },
      {
        name: 'POST /api/auth/login (scrypt N=16384, 4 connections)',
        request: () => ({
          method: 'POST',
          path: '/api/auth/login',
          headers: { 'Content-Type': 'application/json' },
          bodies: [JSON.stringify({ username: 'admin', password: daemon!.adminPassword })],
        }),
        // The login throttle counts attempts in flight per username and per address (5 free): a 5th concurrent
        // login from 127.0.0.1 is answered 429 by design, so this case keeps 4 in flight.
        connections: 4,
        rounds: options.quick ? 1 : 2,
      },
    ];

    for (const c of cases) {
      const targets = {
        bare: { base: baseline.base, pid: baseline.pid },
        azcd: { base: daemon.base, pid: daemon.pid },
      };
      const load = (side: 'bare' | 'azcd', title: string, seconds: number) =>
        runWrk({
          title,
          base: targets[side].base,
          serverPid: targets[side].pid,
          ...c.request({ key: daemon!.adminKey, playerId: fixture.playerId }),
          connections: c.connections ?? CONNECTIONS,
          durationS: seconds,
          core: GENERATOR_CORE,
        });
      // Warm-up (JIT, SQLite page cache) on both, not recorded.
      for (const side of ['bare', 'azcd'] as const) await load(side, `${c.name} warm-up ${side}`, warmupS);

      // Alternating rounds (bare, azcd, bare, ...) so drift on a shared machine hits both alike.
      const bare: WrkResult[] = [];
      const azcd: WrkResult[] = [];
      const ratios: number[] = [];
      const caseRounds = c.rounds ?? rounds;
      for (let pass = 1; pass <= caseRounds; pass++) {
        const b = await load('bare', `${c.name} bare round ${pass}`, durationS);
        const a = await load('azcd', `${c.name} azcd round ${pass}`, durationS);
        if (a.non2xx > 0 || a.errors > 0)
          throw new Error(`${c.name} on azcd: ${a.non2xx} non-2xx responses, ${a.errors} socket errors`);
        bare.push(b);
        azcd.push(a);
        ratios.push(a.reqPerSec / b.reqPerSec);
        options.log(`http: ${c.name} round ${pass}: bare uWS ${describe(b)}`);
        options.log(
          `http: ${c.name} round ${pass}: azcd     ${describe(a)} → ratio ${round(a.reqPerSec / b.reqPerSec)}`,
        );
      }
      const boundRounds = [...bare, ...azcd].filter(generatorBound).length;
      const refused = boundRounds > 0;
      // Neither core full: something outside the benchmark took CPU time, and the figures are noisy.
      const contended = [...bare, ...azcd].filter(
        (r) => r.serverCpuShare < CONTENDED_SHARE && r.generatorCpuShare < CONTENDED_SHARE,
      ).length;
      const cpuRatio = medianOf(bare, (r) => r.serverCpuUsPerRequest) / medianOf(azcd, (r) => r.serverCpuUsPerRequest);
      const med = (runs: WrkResult[], pick: (r: WrkResult) => number) => round(medianOf(runs, pick));
      rows.push(
        makeRow({
          section: 'http',
          name: c.name,
          value: medianOf(azcd, (r) => r.reqPerSec),
          unit: 'req/s',
          baseline: medianOf(bare, (r) => r.reqPerSec),
          ratio: refused ? Number.NaN : median(ratios),
          spread: refused ? undefined : [Math.min(...ratios), Math.max(...ratios)],
          target: c.target,
          note:
            (refused
              ? `refused: wrk's core was full while the server's was not in ${boundRounds} run(s), so the figures are the generator's; `
              : '') +
            (contended
              ? `NOISY: in ${contended} run(s) neither the server's nor wrk's core was full (another process competed); `
              : '') +
            `median of ${caseRounds} per-round ratios ${ratios.map((r) => round(r)).join('/')}; ` +
            `CPU ratio (bare µs/req ÷ azcd µs/req) ${round(cpuRatio)}; ` +
            `CPU per request: azcd ${med(azcd, (r) => r.serverCpuUsPerRequest)} µs at ${Math.round(medianOf(azcd, (r) => r.serverCpuShare) * 100)}% of its core, ` +
            `bare ${med(bare, (r) => r.serverCpuUsPerRequest)} µs at ${Math.round(medianOf(bare, (r) => r.serverCpuShare) * 100)}%; ` +
            `wrk ${med(azcd, (r) => r.generatorCpuUsPerRequest)}/${med(bare, (r) => r.generatorCpuUsPerRequest)} µs at ` +
            `${Math.round(medianOf(azcd, (r) => r.generatorCpuShare) * 100)}%/${Math.round(medianOf(bare, (r) => r.generatorCpuShare) * 100)}%; ` +
            `p99 azcd ${med(azcd, (r) => r.latencyMs.p99)} ms, bare ${med(bare, (r) => r.latencyMs.p99)} ms`,
          details: {
            azcd: azcd.map(brief),
            bare: bare.map(brief),
            ratios,
            cpuRatio,
            contendedRuns: contended,
            connections: c.connections ?? CONNECTIONS,
            durationS,
            rounds: caseRounds,
          },
        }),
      );
    }
    return rows;
  } finally {
    await baseline?.stop();
    await daemon?.stop();
  }
}
