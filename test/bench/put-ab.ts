// `node --import tsx test/bench/put-ab.ts <work tree A> <work tree B> [--rounds N] [--seconds S]`: the CPU time per
// volume PUT of two builds (each work tree built with `npm run build`), in alternating rounds, as the http section
// runs the PUT: wrk on core 1, each daemon on core 0, six event streams open on each. A step of the write path is
// measured by building a work tree with the step taken out (ARCHITECTURE.md, "Measured: what each step pays").
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { median } from './lib/stats.js';
import { assertWrk, pinProcess, runWrk, type WrkSpec } from './lib/wrk.js';

const STREAMS = 6;
const SERVER_CORE = 0;
const GENERATOR_CORE = 1;

interface Side {
  daemon: BenchDaemon;
  streams: net.Socket[];
  spec: WrkSpec;
}

function parseArgs(argv: string[]): { trees: [string, string]; rounds: number; seconds: number } {
  const trees: string[] = [];
  let rounds = 10;
  let seconds = 4;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--rounds') rounds = Number(argv[++i]);
    else if (arg === '--seconds') seconds = Number(argv[++i]);
    else trees.push(path.resolve(arg));
  }
  if (trees.length !== 2 || !(rounds >= 1) || !(seconds >= 1))
    throw new Error('usage: put-ab.ts <work tree A> <work tree B> [--rounds N] [--seconds S]');
  for (const tree of trees)
    if (!existsSync(path.join(tree, 'dist/daemon/main.js')))
      throw new Error(`${tree}/dist/daemon/main.js is missing: run npm run build in ${tree}`);
  return { trees: [trees[0]!, trees[1]!], rounds, seconds };
}

/** A daemon of `tree` with the fixture, pinned, and six event streams open on it (read and dropped). */
async function start(tree: string, seconds: number): Promise<Side> {
  const daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard', checkout: tree });
  const fixture = await setupPlayers(daemon.base, daemon.adminKey);
  pinProcess(daemon.pid, SERVER_CORE);
  const streams = Array.from({ length: STREAMS }, () => {
    const socket = net.connect({ host: '127.0.0.1', port: daemon.port });
    socket.on('data', () => undefined);
    socket.write(
      `GET /api/stream/events HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nX-API-Key: ${daemon.adminKey}\r\n\r\n`,
    );
    return socket;
  });
  const spec: WrkSpec = {
    title: `PUT volume on ${tree}`,
    base: daemon.base,
    serverPid: daemon.pid,
    connections: 10,
    durationS: seconds,
    core: GENERATOR_CORE,
    method: 'PUT',
    path: `/api/players/${fixture.playerId}/volume`,
    headers: { 'Content-Type': 'application/json', 'X-API-Key': daemon.adminKey },
    bodies: ['{"volume":0.25}', '{"volume":0.75}'],
  };
  return { daemon, streams, spec };
}

async function main(): Promise<void> {
  assertWrk();
  const { trees, rounds, seconds } = parseArgs(process.argv.slice(2));
  const sides: Side[] = [];
  try {
    for (const tree of trees) sides.push(await start(tree, seconds));
    const [a, b] = sides as [Side, Side];
    // Warm-up: V8 tiers the hot path up before anything is counted.
    for (const side of sides) await runWrk({ ...side.spec, durationS: 2 });
    const perRound: number[] = [];
    const cpu: [number[], number[]] = [[], []];
    for (let round = 0; round < rounds; round++) {
      // The order alternates, so drift on a shared machine hits both alike.
      const order = round % 2 === 0 ? [a, b] : [b, a];
      const results = new Map<Side, number>();
      for (const side of order) results.set(side, (await runWrk(side.spec)).serverCpuUsPerRequest);
      const [usA, usB] = [results.get(a)!, results.get(b)!];
      cpu[0].push(usA);
      cpu[1].push(usB);
      perRound.push(usB / usA);
      console.log(`round ${round + 1}: A ${usA.toFixed(1)} µs CPU/PUT, B ${usB.toFixed(1)} µs`);
    }
    const ratio = median(perRound);
    console.log(
      `A ${median(cpu[0]).toFixed(1)} µs CPU per PUT, B ${median(cpu[1]).toFixed(1)} µs; B ÷ A ${ratio.toFixed(3)} ` +
        `(per round ${Math.min(...perRound).toFixed(3)}-${Math.max(...perRound).toFixed(3)}): B costs ` +
        `${Math.abs((ratio - 1) * 100).toFixed(1)}% ${ratio >= 1 ? 'more' : 'less'}`,
    );
  } finally {
    for (const side of sides) {
      for (const socket of side.streams) socket.destroy();
      await side.daemon.stop();
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`put-ab: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
