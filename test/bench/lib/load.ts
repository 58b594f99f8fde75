// Parent side of the load generator: one autocannon run in its own process, plus the server's CPU use meanwhile.
import path from 'node:path';
import { readCpuMs } from './proc.js';
import { assertLoopback, BENCH_DIR, forkTs, nextMessage, stopChild } from './processes.js';
import type { Summary } from './stats.js';

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface SoakMixedArgs {
  apiKey: string;
  playerIds: string[];
  zoneIds: string[];
  editPlaylistId: string;
  reorderPlaylistId: string;
  reorderLength: number;
}

export interface LoadSpec {
  title: string;
  url: string;
  connections: number;
  pipelining: number;
  durationS: number;
  overallRate?: number;
  /** Cycled by every connection (alternating bodies go here). */
  requests: RequestSpec[];
  /** A request mix that needs functions, built inside the child. */
  scenario?: 'soak-mixed';
  scenarioArgs?: SoakMixedArgs;
  progressEveryS?: number;
}

export interface LoadResult {
  title: string;
  durationS: number;
  connections: number;
  pipelining: number;
  overallRate: number | undefined;
  completed: number;
  ok: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  /** 2xx responses per second. */
  reqPerSec: number;
  /** Exact per-response latency of 2xx responses (autocannon's own histogram rounds to whole ms). */
  latencyMs: Summary;
  /** The generator's CPU use in cores: near 1.0 means the generator, not the server, set the pace. */
  generatorCpuShare: number;
  /** Filled by runLoad when a server pid is given. */
  serverCpuShare?: number;
  serverCpuUsPerRequest?: number;
}

/** Newline-delimited JSON-RPC over TCP; each body is a JSON object without "id" (one is added per request). */
export interface JsonRpcSpec {
  title: string;
  host: string;
  port: number;
  connections: number;
  durationS: number;
  bodies: string[];
}

export interface LoadOptions {
  /** The server's pid, to measure its CPU time during the run. */
  serverPid?: number;
  onProgress?: (progress: { completed: number; ok: number; reqErrors: number }) => void;
}

export function runLoad(spec: LoadSpec, options: LoadOptions = {}): Promise<LoadResult> {
  assertLoopback(spec.url);
  return runChild(path.join(BENCH_DIR, 'lib/load-child.ts'), spec, options);
}

export function runJsonRpcLoad(spec: JsonRpcSpec, options: LoadOptions = {}): Promise<LoadResult> {
  assertLoopback(`tcp://${spec.host}:${spec.port}`);
  return runChild(path.join(BENCH_DIR, 'lib/jsonrpc-load-child.ts'), spec, options);
}

async function runChild(
  file: string,
  spec: { title: string; durationS: number },
  options: LoadOptions,
): Promise<LoadResult> {
  if (!(spec.durationS > 0 && spec.durationS <= 3600))
    throw new Error(`a load run must last 0-3600 s, got ${spec.durationS}`);
  const child = forkTs(file);
  try {
    await nextMessage(child, (m) => m?.type === 'ready', 30_000, 'load generator start');
    if (options.onProgress) {
      child.on('message', (m: any) => {
        if (m?.type === 'progress') options.onProgress!(m);
      });
    }
    const cpuBefore = options.serverPid ? readCpuMs(options.serverPid) : 0;
    child.send({ type: 'run', spec });
    const { result } = await nextMessage<{ result: LoadResult }>(
      child,
      (m) => m?.type === 'result',
      (spec.durationS + 40) * 1000,
      `load run "${spec.title}"`,
    );
    if (options.serverPid) {
      const cpuMs = readCpuMs(options.serverPid) - cpuBefore;
      // The server is idle outside the run, so the run's own duration is the fair denominator.
      result.serverCpuShare = cpuMs / (result.durationS * 1000);
      result.serverCpuUsPerRequest = result.completed > 0 ? (cpuMs * 1000) / result.completed : Number.NaN;
    }
    if (result.completed === 0)
      throw new Error(`load run "${spec.title}" completed no request (errors: ${result.errors})`);
    return result;
  } finally {
    await stopChild(child, 2000);
  }
}
