// `npm run bench:stall`: how long the largest requests the limits allow hold the daemon's event loop. The database
// is filled to the limits (500 playlists × 5000 tracks by default), then playlist lists, a backup download and its
// restore run while a prober asks GET /api/health one request after another. Each phase reports the health latency
// (median, p99, max) against the same prober's idle figures from the same run, and, from a meter preloaded into the
// daemon (lib/loop-meter.mjs), what is the daemon's own: the most CPU time its main thread ran without the event loop
// turning, and its longest garbage-collection pause; with the machine's load, since wall-clock maxima on a busy
// machine include the time the daemon waited for a core.
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fillPlaylists } from '../helpers/big-state.js';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { METER_NODE_ARGS, type PhaseMeter, phaseMeter } from './lib/phase-meter.js';
import { readLoadAverage, readMemory } from './lib/proc.js';
import { ensureBuild, ROOT } from './lib/processes.js';
import { attribute } from './lib/profile-sections.js';
import { longestGc, longestSection, type Phase, sectionDetails, stallTable } from './lib/stall-report.js';

const USAGE = `usage: npm run bench:stall [-- --scale F | --quick | --playlists N --tracks N]
  --scale F      F × the limits: round(500 F) playlists of 5000 tracks (default 1)
  --quick        --scale 0.2: 100 playlists × 5000 tracks
  --playlists N  playlists to fill (default 500, limits.playlists)
  --tracks N     tracks per playlist (default 5000, limits.tracksPerPlaylist)
  --profile      run the daemon under --cpu-prof and show what its longest sections ran`;

/** The budget of the issue: no request holds the loop for more than about this long at a time. */
const BUDGET_MS = 50;

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function request(
  port: number,
  method: string,
  urlPath: string,
  key?: string,
  body?: NodeJS.ReadableStream,
  sink?: NodeJS.WritableStream,
): Promise<{ status: number; bytes: number; text: string }> {
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
      res.on('end', () =>
        sink
          ? sink.end(() => resolve({ status: res.statusCode ?? 0, bytes, text }))
          : resolve({ status: res.statusCode ?? 0, bytes, text }),
      );
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

async function measure(
  daemon: BenchDaemon,
  meter: PhaseMeter,
  idleMax: number,
  phase: string,
  work: () => Promise<string>,
): Promise<Phase> {
  meter.reset();
  const prober = probe(daemon.port);
  const started = performance.now();
  const note = await work();
  const seconds = (performance.now() - started) / 1000;
  const health = stats(await prober.stop());
  const figures = await meter.take();
  const memory = readMemory(daemon.pid);
  return {
    phase,
    seconds,
    health,
    maxVsIdle: health.max / idleMax,
    meter: figures,
    rssMb: memory.rss / 1024,
    peakRssMb: memory.hwm / 1024,
    load: readLoadAverage(),
    note,
  };
}

function parseArgs(argv: string[]): { playlists: number; tracks: number; profile: boolean } {
  let playlists = 500;
  let tracks = 5000;
  let profile = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') playlists = 100;
    else if (arg === '--scale') playlists = Math.round(500 * Number(argv[++i]));
    else if (arg === '--playlists') playlists = Number(argv[++i]);
    else if (arg === '--tracks') tracks = Number(argv[++i]);
    else if (arg === '--profile') profile = true;
    else {
      console.log(USAGE);
      process.exit(arg === '--help' ? 0 : 2);
    }
  }
  if (!(playlists >= 1 && playlists <= 500 && tracks >= 0 && tracks <= 5000))
    throw new Error(`${USAGE}\n(within the default limits: at most 500 playlists of 5000 tracks)`);
  return { playlists, tracks, profile };
}

/** What ran in each phase's three longest sections by CPU time (--profile: the daemon ran under --cpu-prof). */
function printProfile(dir: string, phases: Phase[], log: (line: string) => void): void {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) return log(`\nno CPU profile in ${dir}`);
  const windows = phases.flatMap((p) =>
    p.meter.byCpu.slice(0, 3).map((s) => ({
      label: `${p.phase}: ${s.cpuMs.toFixed(1)} ms CPU (${s.wallMs.toFixed(0)} ms wall)`,
      startMs: s.startedAt + p.meter.monotonicOffsetMs,
      endMs: s.endedAt + p.meter.monotonicOffsetMs,
    })),
  );
  log('\nwhat the longest sections ran (CPU profile samples, inclusive and self):');
  for (const line of attribute(path.join(dir, file), windows)) log(`  ${line}`);
}

async function main(): Promise<void> {
  const { playlists, tracks, profile } = parseArgs(process.argv.slice(2));
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
  log(
    `filled in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s; load average ${readLoadAverage().toFixed(2)}`,
  );

  const profileDir = path.join(work, 'profile');
  const nodeArgs = [...METER_NODE_ARGS, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const daemon = await startBenchDaemon({ stateDir, keepStateDir: true, logLevel: 'warn', nodeArgs, ipc: true });
  const meter = phaseMeter(daemon.child);
  const phases: Phase[] = [];
  try {
    const idle = await measure(daemon, meter, 1, 'idle (baseline)', async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return 'nothing else running';
    });
    phases.push(idle);
    const idleMax = idle.health.max;
    phases.push(
      await measure(daemon, meter, idleMax, 'GET /api/playlists?limit=200, 5 at once', async () => {
        const until = performance.now() + 5000;
        let lists = 0;
        await Promise.all(
          Array.from({ length: 5 }, async (_, c) => {
            while (performance.now() < until) {
              const res = await request(
                daemon.port,
                'GET',
                `/api/playlists?limit=200&offset=${(c * 100) % playlists}`,
                daemon.adminKey,
              );
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
      await measure(daemon, meter, idleMax, 'GET /api/backup (streamed to a file)', async () => {
        const res = await request(
          daemon.port,
          'GET',
          '/api/backup',
          daemon.adminKey,
          undefined,
          createWriteStream(backupFile),
        );
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
    // Twice: the second finds what the first left (its copy of the database, its journal).
    for (const phase of ['POST /api/restore of that backup', 'POST /api/restore of it again']) {
      phases.push(
        await measure(daemon, meter, idleMax, phase, async () => {
          const res = await request(daemon.port, 'POST', '/api/restore', daemon.adminKey, createReadStream(bodyFile));
          if (res.status !== 200) throw new Error(`restore answered ${res.status}: ${res.text.slice(0, 300)}`);
          return `${(statSync(bodyFile).size / 1e6).toFixed(0)} MB body`;
        }),
      );
    }
  } finally {
    await daemon.stop();
    agent.destroy();
    if (profile && phases.length > 0) printProfile(profileDir, phases, log);
    rmSync(work, { recursive: true, force: true });
  }

  const load = readLoadAverage();
  log(
    `\nazcd event-loop stalls, ${playlists} playlists × ${tracks} tracks; load average ${load.toFixed(2)} on ${cpus().length} cores`,
  );
  for (const line of stallTable(phases)) log(line);
  log('');
  log(
    'health: GET /api/health latency from outside, one request after another (wall clock: includes waiting for a core).',
  );
  log("section: the most CPU time the daemon's main thread ran without its event loop turning (its own work), with");
  log(
    `  that stretch's wall time; >50: how many such stretches ran over ${BUDGET_MS} ms of CPU. GC pause: the garbage`,
  );
  log(
    "  collection pause with the longest own part (at most the CPU time all the daemon's threads ran around it; wall",
  );
  log(
    '  time in brackets), and all pauses summed (wall). CPU s: the main thread + the other threads (collector helpers,',
  );
  log("  libuv's pool). load: the 1-minute load average at the phase's end.");
  log('\nlongest stretches by wall time (CPU + waiting for a core + blocked in a system call or idle):');
  for (const line of sectionDetails(phases)) log(`  ${line}`);
  const busy = phases.slice(1);
  const worstSection = busy.reduce((a, b) =>
    (longestSection(b)?.cpuMs ?? 0) > (longestSection(a)?.cpuMs ?? 0) ? b : a,
  );
  const worstGc = busy.reduce((a, b) => ((longestGc(b)?.ms ?? 0) > (longestGc(a)?.ms ?? 0) ? b : a));
  const sectionMs = longestSection(worstSection)?.cpuMs ?? 0;
  const gcMs = longestGc(worstGc)?.ownMs ?? 0;
  log(
    `\nlongest section of the daemon's own: ${sectionMs.toFixed(1)} ms CPU (${worstSection.phase}); longest GC pause, own part: ${gcMs.toFixed(1)} ms ` +
      `(${worstGc.phase}); budget ${BUDGET_MS} ms: ${sectionMs <= BUDGET_MS && gcMs <= BUDGET_MS ? 'within' : 'OVER'}`,
  );
  const file = path.join(ROOT, 'bench-results', `stall-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ playlists, tracks, loadAverage: load, phases }, null, 1));
  log(`\nJSON: ${path.relative(ROOT, file)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
