// `npm run bench:stall`: how long the largest requests the limits allow hold the daemon's event loop. The database
// is filled to the limits (500 playlists × 5000 tracks by default), then playlist lists, a backup download and its
// restore run while a prober asks GET /api/health one request after another; each phase reports the health latency
// (median, p99, max) against the same prober's idle figures from the same run, and the daemon's memory.
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startBenchDaemon, type BenchDaemon } from './lib/daemon-process.js';
import { ensureBuild, ROOT } from './lib/processes.js';
import { readLoadAverage, readMemory } from './lib/proc.js';
import { fillPlaylists } from '../helpers/big-state.js';

const USAGE = `usage: npm run bench:stall [-- --playlists N] [-- --tracks N] [-- --quick]
  --playlists N  playlists to fill (default 500, limits.playlists)
  --tracks N     tracks per playlist (default 5000, limits.tracksPerPlaylist)
  --quick        100 playlists × 5000 tracks`;

interface Phase {
  phase: string;
  seconds: number;
  health: { count: number; p50: number; p99: number; max: number };
  maxVsIdle: number;
  rssMb: number;
  peakRssMb: number;
  note: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function request(port: number, method: string, urlPath: string, key?: string, body?: NodeJS.ReadableStream, sink?: NodeJS.WritableStream): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (key) headers['x-api-key'] = key;
    if (body) headers['content-type'] = 'application/json';
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent }, (res) => {
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (sink) sink.write(chunk);
        else if (text.length < 4096) text += chunk.toString('utf8');
      });
      res.on('end', () => (sink ? sink.end(() => resolve({ status: res.statusCode ?? 0, bytes, text })) : resolve({ status: res.statusCode ?? 0, bytes, text })));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

/** Asks GET /api/health one request after another until stopped; returns each latency in ms. */
function probe(port: number): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await request(port, 'GET', '/api/health');
      if (res.status !== 200) throw new Error(`health answered ${res.status}`);
      latencies.push(performance.now() - started);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

function stats(values: number[]): Phase['health'] {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN };
}

async function measure(daemon: BenchDaemon, idleMax: number, phase: string, work: () => Promise<string>): Promise<Phase> {
  const prober = probe(daemon.port);
  const started = performance.now();
  const note = await work();
  const seconds = (performance.now() - started) / 1000;
  const health = stats(await prober.stop());
  const memory = readMemory(daemon.pid);
  return { phase, seconds, health, maxVsIdle: health.max / idleMax, rssMb: memory.rss / 1024, peakRssMb: memory.hwm / 1024, note };
}

function parseArgs(argv: string[]): { playlists: number; tracks: number } {
  let playlists = 500;
  let tracks = 5000;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') playlists = 100;
    else if (arg === '--playlists') playlists = Number(argv[++i]);
    else if (arg === '--tracks') tracks = Number(argv[++i]);
    else {
      console.log(USAGE);
      process.exit(arg === '--help' ? 0 : 2);
    }
  }
  if (!(playlists >= 1 && playlists <= 500 && tracks >= 0 && tracks <= 5000)) throw new Error(`${USAGE}\n(within the default limits: at most 500 playlists of 5000 tracks)`);
  return { playlists, tracks };
}

async function main(): Promise<void> {
  const { playlists, tracks } = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stdout.write(`${line}\n`);
  await ensureBuild(log);
  const work = mkdtempSync(path.join(tmpdir(), 'azc-stall-'));
  const stateDir = path.join(work, 'state');
  const first = await startBenchDaemon({ stateDir, keepStateDir: true, logLevel: 'warn' });
  await first.stop();
  log(`filling ${playlists} playlists × ${tracks} tracks...`);
  const fillStarted = performance.now();
  const db = new Database(path.join(stateDir, 'azc.db'));
  fillPlaylists(db, playlists, tracks);
  db.close();
  log(`filled in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s; load average ${readLoadAverage().toFixed(2)}`);

  const daemon = await startBenchDaemon({ stateDir, keepStateDir: true, logLevel: 'warn' });
  const phases: Phase[] = [];
  try {
    const idle = await measure(daemon, 1, 'idle (baseline)', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return 'nothing else running';
    });
    phases.push(idle);
    const idleMax = idle.health.max;
    phases.push(
      await measure(daemon, idleMax, 'GET /api/playlists?limit=200, 5 at once', async () => {
        const until = performance.now() + 5000;
        let lists = 0;
        await Promise.all(
          Array.from({ length: 5 }, async (_, c) => {
            while (performance.now() < until) {
              const res = await request(daemon.port, 'GET', `/api/playlists?limit=200&offset=${(c * 100) % playlists}`, daemon.adminKey);
              if (res.status !== 200) throw new Error(`list answered ${res.status}`);
              lists++;
            }
          }),
        );
        return `${lists} lists in 5 s`;
      }),
    );
    const backupFile = path.join(work, 'backup.json');
    phases.push(
      await measure(daemon, idleMax, 'GET /api/backup (streamed to a file)', async () => {
        const res = await request(daemon.port, 'GET', '/api/backup', daemon.adminKey, undefined, createWriteStream(backupFile));
        if (res.status !== 200) throw new Error(`backup answered ${res.status}`);
        return `${(res.bytes / 1e6).toFixed(0)} MB`;
      }),
    );
    // The restore body: the backup inside {"backup": ...}, streamed from disk.
    const bodyFile = path.join(work, 'restore.json');
    writeFileSync(bodyFile, '{"backup":');
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(bodyFile, { flags: 'a' });
      const input = createReadStream(backupFile);
      input.on('error', reject);
      input.on('end', () => out.end('}', () => resolve()));
      input.pipe(out, { end: false });
    });
    phases.push(
      await measure(daemon, idleMax, 'POST /api/restore of that backup', async () => {
        const res = await request(daemon.port, 'POST', '/api/restore', daemon.adminKey, createReadStream(bodyFile));
        if (res.status !== 200) throw new Error(`restore answered ${res.status}: ${res.text.slice(0, 300)}`);
        return `${(statSync(bodyFile).size / 1e6).toFixed(0)} MB body`;
      }),
    );
  } finally {
    await daemon.stop();
    agent.destroy();
    rmSync(work, { recursive: true, force: true });
  }

  const load = readLoadAverage();
  log(`\nazcd event-loop stalls, ${playlists} playlists × ${tracks} tracks; load average ${load.toFixed(2)} on this machine`);
  log('phase'.padEnd(44) + 'time'.padStart(8) + '  health n'.padStart(10) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'max ms'.padStart(9) + ' max/idle'.padStart(10) + '  RSS/peak MB'.padStart(15) + '  note');
  for (const p of phases) {
    log(
      p.phase.padEnd(44) +
        `${p.seconds.toFixed(1)} s`.padStart(8) +
        String(p.health.count).padStart(10) +
        p.health.p50.toFixed(1).padStart(9) +
        p.health.p99.toFixed(1).padStart(9) +
        p.health.max.toFixed(1).padStart(9) +
        p.maxVsIdle.toFixed(1).padStart(10) +
        `${p.rssMb.toFixed(0)}/${p.peakRssMb.toFixed(0)}`.padStart(15) +
        `  ${p.note}`,
    );
  }
  const file = path.join(ROOT, 'bench-results', `stall-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ playlists, tracks, loadAverage: load, phases }, null, 1));
  log(`\nJSON: ${path.relative(ROOT, file)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
