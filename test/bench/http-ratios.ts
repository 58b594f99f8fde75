// Request throughput of the daemon against a bare uWS server answering the same bytes, measured in the same run.
import type { BaselineConfig } from './baseline-server.js';
import { startBaseline, type BaselineProcess } from './lib/baseline.js';
import { startDaemon, type DaemonProcess, type LogLevel } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { runLoad, type LoadResult, type RequestSpec } from './lib/load.js';
import { makeRow, type Row, type SectionOptions, type Target } from './lib/report.js';
import { round } from './lib/stats.js';

/** The daemon's password hashing parameters (daemon/domain/secrets.ts, SCRYPT); the baseline repeats the same work. */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };
const CONNECTIONS = 10;
const PIPELINING = 1;

interface Case {
  name: string;
  requests: (t: { key: string; playerId: string }) => RequestSpec[];
  target?: Target;
  levels: LogLevel[];
  connections?: number;
}

const describe = (r: LoadResult): string =>
  `${round(r.reqPerSec)} req/s, p50 ${round(r.latencyMs.p50, 3)} ms, p99 ${round(r.latencyMs.p99, 3)} ms, ` +
  `server CPU ${Math.round((r.serverCpuShare ?? NaN) * 100)}% of a core (${round(r.serverCpuUsPerRequest ?? NaN)} µs/req), ` +
  `generator CPU ${Math.round(r.generatorCpuShare * 100)}%` +
  (r.non2xx || r.errors ? `, non-2xx ${r.non2xx}, errors ${r.errors}` : '');

const brief = (r: LoadResult) => ({
  reqPerSec: round(r.reqPerSec),
  ok: r.ok,
  non2xx: r.non2xx,
  statusCodes: r.statusCodes,
  errors: r.errors,
  timeouts: r.timeouts,
  latencyMs: { p50: round(r.latencyMs.p50, 3), p90: round(r.latencyMs.p90, 3), p99: round(r.latencyMs.p99, 3), max: round(r.latencyMs.max, 3) },
  serverCpuShare: round(r.serverCpuShare ?? NaN),
  serverCpuUsPerRequest: round(r.serverCpuUsPerRequest ?? NaN),
  generatorCpuShare: round(r.generatorCpuShare),
});

/** The round with the median throughput (its latencies and CPU figures stay together). */
function medianRun(runs: LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.reqPerSec - b.reqPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

export async function benchHttp(options: SectionOptions): Promise<Row[]> {
  const durationS = options.quick ? 2 : 5;
  const warmupS = options.quick ? 0.5 : 1;
  const rounds = options.quick ? 1 : 3;
  const daemons: Partial<Record<LogLevel, DaemonProcess>> = {};
  let baseline: BaselineProcess | undefined;
  const rows: Row[] = [];
  try {
    // Two daemons with identical state: the default log level (info, stdout to /dev/null) and warn (no access log).
    for (const level of ['info', 'warn'] as const) {
      daemons[level] = await startDaemon({ logLevel: level, stdout: 'discard' });
    }
    const fixtures = {
      info: await setupPlayers(daemons.info!.base, daemons.info!.adminKey),
      warn: await setupPlayers(daemons.warn!.base, daemons.warn!.adminKey),
    };
    const info = daemons.info!;
    const api = fixtures.info.api;
    const me = await api.get('/api/users/me');
    const players = await api.get('/api/players');
    const login = await api.post('/api/auth/login', { username: 'admin', password: info.adminPassword }, { key: '' });
    if (me.status !== 200 || players.status !== 200 || login.status !== 200) {
      throw new Error(`fixture requests failed: me ${me.status}, players ${players.status}, login ${login.status}`);
    }
    const config: BaselineConfig = {
      canned: [
        { path: '/api/users/me', body: me.text, contentType: me.headers.get('content-type') ?? 'application/json' },
        { path: '/api/players', body: players.text, contentType: players.headers.get('content-type') ?? 'application/json' },
      ],
      jsonPut: ['/api/players/:id/volume', '/api/zones/:id/volume'],
      login: { path: '/api/auth/login', body: login.text, scrypt: SCRYPT, salt: 'YmVuY2gtc2FsdC0xMjM0NQ' },
      requestIdLength: (me.headers.get('x-request-id') ?? '').length,
    };
    baseline = await startBaseline(config);
    options.log(`http: daemons on :${daemons.info!.port} (info) and :${daemons.warn!.port} (warn), bare uWS on :${baseline.port} (${baseline.uws})`);

    const json = (key: string) => ({ 'content-type': 'application/json', 'x-api-key': key });
    const cases: Case[] = [
      {
        name: 'GET /api/users/me',
        requests: ({ key }) => [{ method: 'GET', path: '/api/users/me', headers: { 'x-api-key': key } }],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
        levels: ['info', 'warn'],
      },
      {
        name: 'GET /api/players (3 players)',
        requests: ({ key }) => [{ method: 'GET', path: '/api/players', headers: { 'x-api-key': key } }],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
        levels: ['info', 'warn'],
      },
      {
        name: 'PUT /api/players/{id}/volume (2 zones, 3 events)',
        requests: ({ key, playerId }) => [0.25, 0.75].map((volume) => ({
          method: 'PUT',
          path: `/api/players/${playerId}/volume`,
          headers: json(key),
          body: JSON.stringify({ volume }),
        })),
        target: { on: 'ratio', op: '>=', threshold: 0.5 },
        levels: ['info', 'warn'],
      },
      {
        name: 'POST /api/auth/login (scrypt N=16384, 4 connections)',
        requests: () => [{ method: 'POST', path: '/api/auth/login', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: info.adminPassword }) }],
        levels: ['info'],
        // The login throttle counts attempts in flight per username and per address (5 free): a 5th concurrent login
        // from 127.0.0.1 is answered 429 by design, so this case keeps 4 in flight.
        connections: 4,
      },
    ];

    for (const c of cases) {
      const target = (level: LogLevel | 'bare') =>
        level === 'bare'
          ? { url: baseline!.base, pid: baseline!.pid, key: info.adminKey, playerId: fixtures.info.playerId }
          : { url: daemons[level]!.base, pid: daemons[level]!.pid, key: daemons[level]!.adminKey, playerId: fixtures[level as 'info' | 'warn'].playerId };
      const load = (title: string, level: LogLevel | 'bare', seconds: number) => {
        const t = target(level);
        return runLoad(
          { title, url: t.url, connections: c.connections ?? CONNECTIONS, pipelining: PIPELINING, durationS: seconds, requests: c.requests(t) },
          { serverPid: t.pid },
        );
      };
      // Warm-up (JIT, SQLite page cache) on every target, not recorded.
      for (const level of ['bare', ...c.levels] as const) await load(`${c.name} warm-up ${level}`, level, warmupS);

      // Alternating rounds (bare, info, warn, bare, ...) so drift on a shared machine hits every target alike;
      // each target is represented by its median round.
      const results: Record<string, LoadResult[]> = {};
      for (let pass = 1; pass <= rounds; pass++) {
        for (const level of ['bare', ...c.levels] as const) {
          const result = await load(`${c.name} ${level} round ${pass}`, level, durationS);
          if (level !== 'bare' && result.non2xx > 0) {
            throw new Error(`${c.name} on azcd (${level}) answered ${result.non2xx} non-2xx responses: ${JSON.stringify(result.statusCodes)}`);
          }
          (results[level] ??= []).push(result);
          options.log(`http: ${c.name} ${level === 'bare' ? 'bare uWS' : `azcd log ${level}`} round ${pass}: ${describe(result)}`);
        }
      }
      const bare = medianRun(results.bare!);
      for (const level of c.levels) {
        const result = medianRun(results[level]!);
        const levelText = level === 'info' ? 'log info→/dev/null (default)' : 'log warn';
        rows.push(
          makeRow({
            section: 'http',
            name: `${c.name} [${levelText}]`,
            value: result.reqPerSec,
            unit: 'req/s',
            baseline: bare.reqPerSec,
            target: level === 'info' ? c.target : undefined,
            note:
              `azcd p50/p99 ${round(result.latencyMs.p50, 3)}/${round(result.latencyMs.p99, 3)} ms vs bare ${round(bare.latencyMs.p50, 3)}/${round(bare.latencyMs.p99, 3)} ms; ` +
              `azcd ${round(result.serverCpuUsPerRequest ?? NaN)} µs CPU/req at ${Math.round((result.serverCpuShare ?? NaN) * 100)}% of a core, ` +
              `bare ${round(bare.serverCpuUsPerRequest ?? NaN)} µs/req at ${Math.round((bare.serverCpuShare ?? NaN) * 100)}%; ` +
              `generator ${Math.round(result.generatorCpuShare * 100)}%/${Math.round(bare.generatorCpuShare * 100)}% of a core; ` +
              `rounds azcd ${results[level]!.map((r) => Math.round(r.reqPerSec)).join('/')}, bare ${results.bare!.map((r) => Math.round(r.reqPerSec)).join('/')} req/s`,
            details: {
              azcd: results[level]!.map(brief),
              bare: results.bare!.map(brief),
              logLevel: level,
              connections: c.connections ?? CONNECTIONS,
              pipelining: PIPELINING,
              durationS,
              rounds,
            },
          }),
        );
        if (c.name.startsWith('POST /api/auth/login')) {
          rows.push(
            makeRow({
              section: 'http',
              name: `login latency p99 [${levelText}]`,
              value: result.latencyMs.p99,
              unit: 'ms',
              baseline: bare.latencyMs.p99,
              note: `p50 ${round(result.latencyMs.p50)} ms vs bare ${round(bare.latencyMs.p50)} ms; ${c.connections} concurrent logins on libuv's 4 threadpool threads (2 cores)`,
            }),
          );
        }
      }
    }
    return rows;
  } finally {
    await baseline?.stop();
    for (const d of Object.values(daemons)) await d?.stop();
  }
}
