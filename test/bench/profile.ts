// `npm run bench:profile -- put|players|me`: the daemon under wrk load with --cpu-prof, then where its time went
// (self and inclusive time per function), so a change to a hot path starts from a measurement.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBenchDaemon } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { ensureBuild } from './lib/processes.js';
import { pinProcess, runWrk, type WrkSpec } from './lib/wrk.js';

const CASES = ['put', 'players', 'me'] as const;
type CaseName = (typeof CASES)[number];
const DURATION_S = 6;
const TOP = 30;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Self and inclusive shares of each function (by name, file and line) in a .cpuprofile. */
function summarize(file: string): {
  totalMs: number;
  self: Array<[string, number]>;
  inclusive: Array<[string, number]>;
} {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\//, '')}:${n.callFrame.lineNumber + 1}`;
  const timeById = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    timeById.set(id, (timeById.get(id) ?? 0) + dt);
    total += dt;
  });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of timeById) {
    self.set(label(byId.get(id)!), (self.get(label(byId.get(id)!)) ?? 0) + time);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    }
  }
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([k, v]) => [k, v / total] as [string, number]);
  return { totalMs: total / 1000, self: top(self), inclusive: top(inclusive) };
}

async function main(): Promise<void> {
  const which = (process.argv[2] ?? 'put') as CaseName;
  if (!CASES.includes(which)) throw new Error(`usage: profile.ts ${CASES.join('|')}`);
  await ensureBuild((line) => console.log(line));
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-profile-'));
  const previous = process.env.BENCH_DAEMON_NODE_ARGS;
  process.env.BENCH_DAEMON_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${dir}`;
  try {
    const daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard' });
    try {
      const fixture = await setupPlayers(daemon.base, daemon.adminKey);
      pinProcess(daemon.pid, 0);
      const request: Pick<WrkSpec, 'method' | 'path' | 'headers' | 'bodies'> =
        which === 'put'
          ? {
              method: 'PUT',
              path: `/api/players/${fixture.playerId}/volume`,
              headers: { 'Content-Type': 'application/json', 'X-API-Key': daemon.adminKey },
              bodies: ['{"volume":0.25}', '{"volume":0.75}'],
            }
          : {
              method: 'GET',
              path: which === 'me' ? '/api/users/me' : '/api/players',
              headers: { 'X-API-Key': daemon.adminKey },
            };
      const result = await runWrk({
        title: which,
        base: daemon.base,
        serverPid: daemon.pid,
        connections: 10,
        durationS: DURATION_S,
        core: 1,
        ...request,
      });
      console.log(
        `${which}: ${Math.round(result.reqPerSec)} req/s, ${result.serverCpuUsPerRequest.toFixed(1)} µs CPU per request at ${Math.round(result.serverCpuShare * 100)}% of a core (profiling adds some)`,
      );
    } finally {
      await daemon.stop();
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`the daemon wrote no profile into ${dir}`);
    const summary = summarize(path.join(dir, file));
    const show = (rows: Array<[string, number]>) =>
      rows.map(([name, share]) => `${(share * 100).toFixed(1).padStart(5)}%  ${name}`).join('\n');
    console.log(
      `\nprofile: ${Math.round(summary.totalMs)} ms sampled (start-up and shutdown included)\n\nself time:\n${show(summary.self)}\n\ninclusive time:\n${show(summary.inclusive)}`,
    );
  } finally {
    if (previous === undefined) delete process.env.BENCH_DAEMON_NODE_ARGS;
    else process.env.BENCH_DAEMON_NODE_ARGS = previous;
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`profile: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
