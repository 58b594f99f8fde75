// Benchmark: what one access-log line costs the daemon, through its stdout destination (batchWrites in front of
// sonic-boom) against pino's own buffering (pino.destination with minLength) and no buffering, in the same run.
// `npm run bench:log` (`-- --quick` for fewer lines). Lines go to a file in memory (tmpfs: a flush fsyncs, which
// /dev/null refuses); the figure is the process's CPU per line (the main thread and libuv's pool together, where the
// writes run), a median over alternating rounds.
import { type EventEmitter, once } from 'node:events';
import { existsSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createAccessLog } from '../../daemon/http/access-log.js';
import { createLogger, type LogDestination, stdoutDestination } from '../../daemon/log.js';
import { median, round } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const LINES = quick ? 50_000 : 200_000;
const ROUNDS = quick ? 3 : 7;

interface Variant {
  name: string;
  make(fd: number): LogDestination;
}

const VARIANTS: Variant[] = [
  { name: 'batchWrites + sonic-boom (the daemon)', make: (fd) => stdoutDestination(fd) },
  // The largest minLength sonic-boom takes is below its maxWrite; both as large as the daemon's 64 KiB batches.
  {
    name: 'pino.destination minLength 60 KiB',
    make: (fd) => pino.destination({ dest: fd, sync: false, minLength: 60 * 1024, maxWrite: 64 * 1024 }),
  },
  {
    name: 'pino.destination minLength 4 KiB',
    make: (fd) => pino.destination({ dest: fd, sync: false, minLength: 4096 }),
  },
  { name: 'pino.destination unbuffered', make: (fd) => pino.destination({ dest: fd, sync: false }) },
];

/** In memory where there is a tmpfs, so the disk never sets the pace. */
const FILE = path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `azc-bench-log-${process.pid}`);

/** CPU µs per line for LINES access-log lines, flushed through to the file. */
async function measure(variant: Variant): Promise<number> {
  const fd = openSync(FILE, 'w', 0o600);
  const destination = variant.make(fd);
  const log = createAccessLog(createLogger('info', destination));
  const entry = {
    requestId: 'a1b2c3-1',
    method: 'PUT',
    url: '/api/players/0b7e3a52-9d4f-4c1e-8a6b-3f2d1c0e9a87/volume',
    status: 204,
    ms: 0.42,
  };
  const before = process.cpuUsage();
  for (let i = 0; i < LINES; i++) log(entry);
  // Every line written: what is batched is handed on (flush), then sonic-boom ends once its last write is done and
  // closes the file.
  const stream = destination as unknown as EventEmitter & { flush(cb: () => void): void; end(): void };
  const closed = once(stream, 'close');
  stream.flush(() => {
    // The close below is what the run waits for.
  });
  stream.end();
  await closed;
  const used = process.cpuUsage(before);
  rmSync(FILE, { force: true });
  return (used.user + used.system) / LINES;
}

async function main(): Promise<void> {
  const perVariant = VARIANTS.map(() => [] as number[]);
  // Warm up each once (JIT), then alternate, so a busy moment on the machine falls on every variant alike.
  for (const variant of VARIANTS) await measure(variant);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, variant] of VARIANTS.entries()) perVariant[i]!.push(await measure(variant));
  }
  const baseline = median(perVariant[0]!);
  console.log(
    `access-log lines: ${LINES} per round, ${ROUNDS} rounds; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log('variant | CPU µs per line (median, min–max) | ratio to the daemon');
  for (const [i, variant] of VARIANTS.entries()) {
    const values = perVariant[i]!;
    console.log(
      `${variant.name} | ${round(median(values), 3)} (${round(Math.min(...values), 3)}–${round(Math.max(...values), 3)}) | ${round(median(values) / baseline, 2)}`,
    );
  }
}

await main();
