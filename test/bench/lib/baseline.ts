// Starts the baselines in their own processes: bare uWS (test/bench/baseline-server.ts) and the volume PUT's
// same-work server (test/bench/same-work-server.ts).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { BaselineConfig } from '../baseline-server.js';
import type { SameWorkConfig } from '../same-work-server.js';
import { BENCH_DIR, forkTs, nextMessage, stopChild } from './processes.js';

export interface BaselineProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  base: string;
  uws: string;
  stop(): Promise<void>;
}

/** `wrap`: a command the server runs under (bench:icount's callgrind), which also lengthens its start 10 times. */
export function startBaseline(config: BaselineConfig, needFds?: number, wrap?: string[]): Promise<BaselineProcess> {
  return startServer('baseline-server.ts', config, needFds, wrap);
}

/** The same-work baseline on a copy of the daemon's database (config.dbFile, which it holds alone while it runs). */
export function startSameWork(config: SameWorkConfig, wrap?: string[]): Promise<BaselineProcess> {
  return startServer('same-work-server.ts', config, undefined, wrap);
}

async function startServer(
  file: string,
  config: BaselineConfig | SameWorkConfig,
  needFds?: number,
  wrap?: string[],
): Promise<BaselineProcess> {
  const child = forkTs(path.join(BENCH_DIR, file), [], { needFds, wrap });
  const slower = wrap ? 10 : 1;
  try {
    await nextMessage(child, (m) => m?.type === 'ready', 30_000 * slower, `${file} start`);
    child.send({ type: 'config', config });
    const { port, uws } = await nextMessage<{ port: number; uws: string }>(
      child,
      (m) => m?.type === 'listening',
      10_000 * slower,
      `${file} listen`,
    );
    return { child, pid: child.pid!, port, base: `http://127.0.0.1:${port}`, uws, stop: () => stopChild(child, 2000) };
  } catch (err) {
    await stopChild(child, 1000);
    throw err;
  }
}
