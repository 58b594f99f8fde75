// Starts the bare uWS baseline server (test/bench/baseline-server.ts) in its own process.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { BaselineConfig } from '../baseline-server.js';
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
export async function startBaseline(
  config: BaselineConfig,
  needFds?: number,
  wrap?: string[],
): Promise<BaselineProcess> {
  const child = forkTs(path.join(BENCH_DIR, 'baseline-server.ts'), [], { needFds, wrap });
  const slower = wrap ? 10 : 1;
  try {
    await nextMessage(child, (m) => m?.type === 'ready', 30_000 * slower, 'baseline server start');
    child.send({ type: 'config', config });
    const { port, uws } = await nextMessage<{ port: number; uws: string }>(
      child,
      (m) => m?.type === 'listening',
      10_000 * slower,
      'baseline listen',
    );
    return { child, pid: child.pid!, port, base: `http://127.0.0.1:${port}`, uws, stop: () => stopChild(child, 2000) };
  } catch (err) {
    await stopChild(child, 1000);
    throw err;
  }
}
