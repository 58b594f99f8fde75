// Start-up time (spawn → "listening" line → first 200 from /api/health) and idle RSS, against a bare uWS process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnDaemon, waitHealthy } from './lib/daemon-process.js';
import { ROOT, sleep, spawnTracked, stopChild } from './lib/processes.js';
import { readMemory, readSmapsRollup } from './lib/proc.js';
import { makeRow, type Row, type SectionOptions } from './lib/report.js';
import { median, round } from './lib/stats.js';

const IDLE_SETTLE_MS = 1500;
const kbToMB = (kb: number) => (kb * 1024) / 1e6;

/** A plain-node process (no tsx) that loads the same uWS binary through dist/daemon/http/uws.js and answers /api/health. */
const BARE_SCRIPT = `
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
  readyMs: number;
  idleRssKb: number;
  idleAnonKb: number;
  privateDirtyKb: number;
}

async function bareStart(): Promise<StartSample> {
  const started = performance.now();
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', BARE_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    return { listeningMs, readyMs, idleRssKb: mem.rss, idleAnonKb: mem.anon, privateDirtyKb: smaps?.privateDirty ?? Number.NaN };
  } finally {
    await stopChild(child, 2000);
  }
}

async function daemonStart(stateDir: string): Promise<StartSample> {
  const daemon = await spawnDaemon({ logLevel: 'info', stdout: 'read', stateDir, keepStateDir: true });
  try {
    await sleep(IDLE_SETTLE_MS);
    const mem = readMemory(daemon.pid);
    const smaps = readSmapsRollup(daemon.pid);
    return { listeningMs: daemon.listeningMs!, readyMs: daemon.readyMs, idleRssKb: mem.rss, idleAnonKb: mem.anon, privateDirtyKb: smaps?.privateDirty ?? Number.NaN };
  } finally {
    await daemon.stop();
  }
}

export async function benchColdStart(options: SectionOptions): Promise<Row[]> {
  const runs = options.quick ? 3 : 5;
  const first: StartSample[] = [];
  const restart: StartSample[] = [];
  const bare: StartSample[] = [];
  for (let i = 0; i < runs; i++) {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'azc-bench-start-'));
    try {
      bare.push(await bareStart());
      first.push(await daemonStart(stateDir));
      restart.push(await daemonStart(stateDir));
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
    const f = first[i]!;
    options.log(
      `start: run ${i + 1}: first start listening ${Math.round(f.listeningMs)} ms, healthy ${Math.round(f.readyMs)} ms, idle RSS ${round(kbToMB(f.idleRssKb))} MB; ` +
        `restart healthy ${Math.round(restart[i]!.readyMs)} ms; bare uWS healthy ${Math.round(bare[i]!.readyMs)} ms, RSS ${round(kbToMB(bare[i]!.idleRssKb))} MB`,
    );
  }
  const med = (list: StartSample[], key: keyof StartSample) => median(list.map((s) => s[key]));
  const samples = (list: StartSample[], key: keyof StartSample) => list.map((s) => Math.round(s[key])).join('/');
  return [
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
      note: `no admin to create; runs ${samples(restart, 'readyMs')} ms`,
      details: { restart },
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
  ];
}
