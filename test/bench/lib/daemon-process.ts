// Runs the built daemon (dist/daemon/main.js) on 127.0.0.1 with a fresh state directory, through the suite's one
// process helper (test/helpers/process.ts), adding what benchmarks measure: time to listen and to answer /api/health.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runAzcd } from '../../helpers/process.js';
import { freePort } from '../../helpers/sockets.js';
import { sleep, spawnTracked } from './processes.js';

export type LogLevel = 'info' | 'warn' | 'silent';

export interface BenchDaemon {
  child: ChildProcess;
  pid: number;
  port: number;
  base: string;
  stateDir: string;
  logLevel: LogLevel;
  adminKey: string;
  adminPassword: string;
  /** Milliseconds from spawn to the "listening on" line (only when stdout is read). */
  listeningMs: number | undefined;
  /** Milliseconds from spawn to the first 200 from /api/health. */
  readyMs: number;
  /** What the daemon printed so far (with stdout 'read'; the first MiB). */
  stdout(): string;
  stop(): Promise<void>;
}

export interface DaemonSpawnOptions {
  logLevel?: LogLevel;
  /**
   * 'discard': stdout goes to /dev/null (what a benchmark of request handling should pay for logs: the formatting and
   * the write, not a reader); the port is chosen up front. 'read': stdout is parsed for the "listening on" line
   * (start-up timing) and drained afterwards.
   */
  stdout?: 'discard' | 'read';
  stateDir?: string;
  keepStateDir?: boolean;
  needFds?: number;
  /** Limits written to a config file for the daemon (fan-out and soak runs open more streams than one user may). */
  limits?: Record<string, number>;
  /** More command-line arguments (the MQTT bridge's). */
  args?: string[];
  /** More environment. */
  env?: Record<string, string>;
  /** Another work tree whose build runs instead of this one's (a revision to compare against, with its own build). */
  checkout?: string;
  /** Node options before the entry (a preloaded meter), besides BENCH_DAEMON_NODE_ARGS. */
  nodeArgs?: string[];
  /** An IPC channel to the daemon (what a preloaded meter answers on). */
  ipc?: boolean;
}

export const ADMIN_PASSWORD = 'bench-admin-password';

/** One GET over a fresh connection with node:http (no fetch: its first use costs tens of ms of loading). */
export function httpGetStatus(port: number, urlPath: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
  });
}

export async function waitHealthy(port: number, deadline: number, child?: ChildProcess): Promise<void> {
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`the process exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    if ((await httpGetStatus(port, '/api/health', 500)) === 200) return;
    if (performance.now() > deadline) throw new Error(`no 200 from http://127.0.0.1:${port}/api/health in time`);
    await sleep(2);
  }
}

export async function spawnBenchDaemon(options: DaemonSpawnOptions = {}): Promise<BenchDaemon> {
  const logLevel = options.logLevel ?? 'info';
  const stdoutMode = options.stdout ?? 'discard';
  const stateDir = options.stateDir ?? mkdtempSync(path.join(tmpdir(), 'azc-bench-'));
  const port = stdoutMode === 'discard' ? await freePort() : 0;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--state-dir',
    stateDir,
    '--log-level',
    logLevel,
    '--no-ssdp',
    ...(options.args ?? []),
  ];
  if (options.limits) {
    const file = path.join(stateDir, 'bench-config.json');
    writeFileSync(file, JSON.stringify({ limits: options.limits }), { mode: 0o600 });
    args.push('--config', file);
  }
  const started = performance.now();
  const azcd = runAzcd({
    entry: 'built',
    entryPath: options.checkout && path.join(options.checkout, 'dist/daemon/main.js'),
    args,
    env: { ...options.env, AZC_ADMIN_PASSWORD: ADMIN_PASSWORD },
    // BENCH_DAEMON_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the daemon under benchmark load.
    nodeArgs: [...(options.nodeArgs ?? []), ...(process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    ipc: options.ipc,
    stdout: stdoutMode === 'discard' ? 'discard' : 'keep',
    spawner: (command, argv, spawnOptions) =>
      spawnTracked(command, argv, { ...spawnOptions, needFds: options.needFds }),
  });
  const { child } = azcd;
  const deadline = started + 20_000;
  let listeningMs: number | undefined;
  let boundPort = port;
  try {
    if (stdoutMode === 'read') {
      boundPort = Number((await azcd.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 20_000))[1]);
      listeningMs = performance.now() - started;
    }
    await waitHealthy(boundPort, deadline, child);
  } catch (err) {
    await azcd.stop('SIGTERM', 1000).catch(() => {
      // Already gone: the start's own error is the one to report.
    });
    if (!options.stateDir && !options.keepStateDir) rmSync(stateDir, { recursive: true, force: true });
    const stderr = azcd.stderr().slice(0, 8192).trim();
    throw new Error(`${(err as Error).message}${stderr ? `\nazcd stderr: ${stderr}` : ''}`);
  }
  const readyMs = performance.now() - started;
  const adminKey = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))?.[1] ?? '';
  if (!adminKey) throw new Error(`no apiKey in ${stateDir}/initial-admin.txt`);
  return {
    child,
    pid: child.pid!,
    port: boundPort,
    base: `http://127.0.0.1:${boundPort}`,
    stateDir,
    logLevel,
    adminKey,
    adminPassword: ADMIN_PASSWORD,
    listeningMs,
    readyMs,
    stdout: () => azcd.stdout(),
    stop: async () => {
      await azcd.stop('SIGTERM', 12_000).catch(() => {
        // Already gone: nothing left to stop.
      });
      if (!options.keepStateDir) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Retries spawnBenchDaemon once: the free port chosen up front can be taken by someone else in between. */
export async function startBenchDaemon(options: DaemonSpawnOptions = {}): Promise<BenchDaemon> {
  try {
    return await spawnBenchDaemon(options);
  } catch (err) {
    if (options.stdout === 'read' || options.stateDir) throw err;
    return spawnBenchDaemon(options);
  }
}
