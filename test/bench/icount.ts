// `npm run bench:icount -- [--cases me,players,put] [--requests N] [--checkout DIR]`: instructions per request of
// the daemon and of the bare uWS baseline, counted by callgrind. Requests per second and CPU time move with whatever
// else the machine does; an instruction count does not (user space only: the kernel's share of a request, the same
// syscalls on both sides, is not in it). So a change to a hot path can be measured on a busy machine, and builds of
// two commits compared (--checkout: another work tree with its own `npm run build`). The ratio is bare ÷ azcd.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from '../helpers/sockets.js';
import { startBaseline } from './lib/baseline.js';
import { ADMIN_PASSWORD, waitHealthy } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { ensureBuild, ROOT, spawnTracked, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions } from './lib/report.js';
import { median } from './lib/stats.js';

export const CASES = ['me', 'players', 'put'] as const;
export type CaseName = (typeof CASES)[number];
const CONNECTIONS = 10;
const ROUNDS = 3;
const LOAD_LIMIT_MS = 10 * 60_000;

interface RequestSpec {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Server {
  name: string;
  child: ChildProcess;
  port: number;
  outDir: string;
}

function parseArgs(argv: string[]): { cases: CaseName[]; requests: number; checkout: string } {
  let cases: CaseName[] = [...CASES];
  let requests = 4000;
  let checkout = ROOT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--cases') {
      cases = value()
        .split(',')
        .map((s) => s.trim()) as CaseName[];
      const unknown = cases.filter((c) => !CASES.includes(c));
      if (unknown.length) throw new Error(`unknown case(s) ${unknown.join(', ')}; known: ${CASES.join(', ')}`);
    } else if (arg === '--requests') {
      requests = Number(value());
      if (!Number.isInteger(requests) || requests < 500 || requests > 100_000)
        throw new Error('--requests must be an integer from 500 to 100000');
    } else if (arg === '--checkout') checkout = path.resolve(value());
    else throw new Error(`unknown argument ${arg}`);
  }
  return { cases, requests, checkout };
}

/** callgrind with JIT code (V8 writes code into the heap, not into files), written into `outDir`. */
function callgrind(outDir: string): string[] {
  return ['-q', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${path.join(outDir, 'cg.%p')}`];
}

let agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

/**
 * One request over the keep-alive pool. A pooled connection may have been closed by the server meanwhile (uWS ends
 * a connection idle for 10 s, which a slow callgrind window of the other server outlasts on a busy machine): a
 * request that fails on a reused connection before any answer is sent once more on a new one.
 */
function request(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
  retry = true,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: target, agent, headers, timeout: 60_000 },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('timeout', () => req.destroy(new Error(`${method} ${target}: no answer in 60 s`)));
    req.once('error', (err: NodeJS.ErrnoException) => {
      if (retry && req.reusedSocket && err.code === 'ECONNRESET')
        resolve(request(port, method, target, headers, body, false));
      else reject(err);
    });
    req.end(body);
  });
}

/** `count` requests over CONNECTIONS keep-alive connections; every answer must be a success. */
async function load(port: number, count: number, one: (i: number) => RequestSpec): Promise<void> {
  let next = 0;
  const failures: number[] = [];
  // Bounded in time too: under callgrind a request takes ~1 ms, so this is minutes of headroom.
  const deadline = performance.now() + LOAD_LIMIT_MS;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) {
        if (performance.now() > deadline)
          throw new Error(`${count} requests did not finish within ${LOAD_LIMIT_MS / 60_000} minutes`);
        const r = one(next++);
        const status = await request(port, r.method, r.path, r.headers, r.body);
        if (status >= 300) failures.push(status);
      }
    }),
  );
  if (failures.length) throw new Error(`${failures.length} of ${count} requests failed (first status ${failures[0]})`);
}

/** The instructions the server ran while `count` requests were answered: counters zeroed, load, counters dumped. */
async function countInstructions(server: Server, count: number, one: (i: number) => RequestSpec): Promise<number> {
  const pid = String(server.child.pid);
  const before = new Set(readdirSync(server.outDir));
  execFileSync('callgrind_control', ['--zero', pid], { stdio: 'ignore' });
  await load(server.port, count, one);
  execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
  const dump = readdirSync(server.outDir).find((f) => !before.has(f) && f.startsWith(`cg.${pid}.`));
  if (!dump) throw new Error(`callgrind wrote no dump for ${server.name}`);
  const text = readFileSync(path.join(server.outDir, dump), 'utf8');
  const total = /^(?:totals|summary): (\d+)/m.exec(text);
  if (!total) throw new Error(`no totals in ${dump}`);
  return Number(total[1]) / count;
}

async function startDaemon(
  checkout: string,
  outDir: string,
): Promise<{ server: Server; adminKey: string; stateDir: string }> {
  const entry = path.join(checkout, 'dist/daemon/main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build in ${checkout}`);
  const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-icount-'));
  const port = await freePort();
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--state-dir',
    stateDir,
    '--log-level',
    'info',
    '--no-ssdp',
  ];
  const child = spawnTracked('valgrind', [...callgrind(outDir), process.execPath, entry, ...args], {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { ...process.env, AZC_ADMIN_PASSWORD: ADMIN_PASSWORD },
  });
  // Start-up under callgrind takes tens of seconds.
  await waitHealthy(port, performance.now() + 300_000, child);
  const adminKey = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))?.[1];
  if (!adminKey) throw new Error(`no apiKey in ${stateDir}/initial-admin.txt`);
  return { server: { name: 'azcd', child, port, outDir }, adminKey, stateDir };
}

/** One request kind's counts: instructions per request in each counted window, for azcd and for bare uWS. */
export interface CaseCount {
  kind: CaseName;
  azcd: number[];
  bare: number[];
}

/** The counts of `cases` (npm run bench's icount section uses this too); `log` gets the lines the CLI prints. */
export async function countCases(options: {
  cases: readonly CaseName[];
  requests: number;
  checkout: string;
  log: (line: string) => void;
}): Promise<CaseCount[]> {
  const { cases, requests, checkout, log } = options;
  execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
  if (checkout === ROOT) await ensureBuild(log);
  const outDir = mkdtempSync(path.join(tmpdir(), 'azc-callgrind-'));
  agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let daemon: Awaited<ReturnType<typeof startDaemon>> | undefined;
  let baseline: Server | undefined;
  const counts: CaseCount[] = [];
  try {
    log(
      `instructions per request under callgrind: ${requests} counted requests per case after a warm-up of every case, ${CONNECTIONS} connections; azcd from ${checkout}`,
    );
    daemon = await startDaemon(checkout, outDir);
    const fixture = await setupPlayers(`http://127.0.0.1:${daemon.server.port}`, daemon.adminKey);
    const me = await fixture.api.get('/api/users/me');
    const players = await fixture.api.get('/api/players');
    if (me.status !== 200 || players.status !== 200)
      throw new Error(`fixture requests failed: me ${me.status}, players ${players.status}`);
    const bare = await startBaseline(
      {
        canned: [
          { path: '/api/users/me', body: me.text, contentType: me.headers.get('content-type') ?? 'application/json' },
          {
            path: '/api/players',
            body: players.text,
            contentType: players.headers.get('content-type') ?? 'application/json',
          },
        ],
        jsonPut: ['/api/players/:id/volume'],
        requestIdLength: (me.headers.get('x-request-id') ?? '').length,
      },
      undefined,
      ['valgrind', ...callgrind(outDir)],
    );
    baseline = { name: 'bare uWS', child: bare.child, port: bare.port, outDir };
    const key = daemon.adminKey;
    const requestOf =
      (which: CaseName) =>
      (i: number): RequestSpec =>
        which === 'put'
          ? {
              method: 'PUT',
              path: `/api/players/${fixture.playerId}/volume`,
              headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
              // Every request changes both zones (3 events), as in the http section.
              body: i % 2 ? '{"volume":0.25}' : '{"volume":0.75}',
            }
          : { method: 'GET', path: which === 'me' ? '/api/users/me' : '/api/players', headers: { 'X-API-Key': key } };
    // Warm-up, every case on both servers before any is counted: V8 tiers functions up by how often they run, and
    // its compiler's own instructions would otherwise land in the count of whichever case ran first.
    for (let round = 0; round < 2; round++) {
      for (const which of cases) {
        await load(daemon.server.port, Math.max(2000, requests / 2), requestOf(which));
        await load(baseline.port, Math.max(2000, requests / 2), requestOf(which));
      }
    }
    // Rounds alternate the two servers; a window may or may not hold a full garbage collection, so the median is
    // reported, with the spread of the rounds.
    for (const which of cases) {
      const azcd: number[] = [];
      const bare: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        azcd.push(await countInstructions(daemon.server, requests, requestOf(which)));
        bare.push(await countInstructions(baseline, requests, requestOf(which)));
      }
      const k = (n: number) => (n / 1000).toFixed(1);
      const spread = (xs: number[]) => `${k(Math.min(...xs))}-${k(Math.max(...xs))}`;
      log(
        `${which.padEnd(8)} azcd ${k(median(azcd)).padStart(6)} k instructions/request (${spread(azcd)}), bare uWS ${k(median(bare)).padStart(5)} k (${spread(bare)})` +
          ` → ratio ${(median(bare) / median(azcd)).toFixed(2)}`,
      );
      counts.push({ kind: which, azcd, bare });
    }
    return counts;
  } finally {
    agent.destroy();
    if (baseline) await stopChild(baseline.child, 5000);
    if (daemon) {
      await stopChild(daemon.server.child, 20_000);
      rmSync(daemon.stateDir, { recursive: true, force: true });
    }
    rmSync(outDir, { recursive: true, force: true });
  }
}

const CASE_NAMES: Record<CaseName, string> = {
  me: 'GET /api/users/me',
  players: 'GET /api/players (4 players)',
  put: 'PUT /api/players/{id}/volume (2 zones, 3 events)',
};

/** `npm run bench`'s icount section: per request kind, azcd's median count against bare uWS's, as the CLI counts. */
export async function benchIcount(options: SectionOptions): Promise<Row[]> {
  const requests = options.quick ? 1000 : 4000;
  const counts = await countCases({
    cases: CASES,
    requests,
    checkout: ROOT,
    log: (line) => options.log(`icount: ${line}`),
  });
  const k = (n: number) => n / 1000;
  const spread = (xs: number[]) => `${k(Math.min(...xs)).toFixed(1)}-${k(Math.max(...xs)).toFixed(1)} k`;
  return counts.map(({ kind, azcd, bare }) =>
    makeRow({
      section: 'icount',
      name: CASE_NAMES[kind],
      value: k(median(azcd)),
      unit: 'k instructions/req',
      baseline: k(median(bare)),
      // As the throughput ratios: the baseline's cost over azcd's, so a higher ratio is a cheaper request.
      ratio: median(bare) / median(azcd),
      note:
        `median of ${azcd.length} windows of ${requests} requests, user space only; azcd ${spread(azcd)}, bare uWS ${spread(bare)}; ` +
        'ratio is bare ÷ azcd; a change that raises an azcd count by more than 5% says why',
      details: { azcd, bare, requests },
    }),
  );
}

async function main(): Promise<void> {
  const { cases, requests, checkout } = parseArgs(process.argv.slice(2));
  await countCases({ cases, requests, checkout, log: (line) => console.log(line) });
}

// Run as `npm run bench:icount`; imported by run.ts for its icount section.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
