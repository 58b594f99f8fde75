// Child processes for benchmarks: spawn with a deadline, track them, and stop each one by its own pid.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import path from 'node:path';
import { buildAll, ensureBuild as ensureProjectBuild } from '../../../scripts/ensure-build.mjs';
import { ROOT } from '../../helpers/paths.js';
import { openFileLimit } from './proc.js';

export { ROOT };
export const BENCH_DIR = path.join(ROOT, 'test/bench');

const children = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills whatever a benchmark left running when this process exits (each child by its pid, never by name). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping ${children.size} child process(es)\n`);
      process.exit(130);
    });
  }
}

export function track(child: ChildProcess): ChildProcess {
  installExitHook();
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Spawns a child and tracks it; `needFds` wraps it in `ulimit -n` when this process's soft limit is lower. */
export function spawnTracked(
  command: string,
  args: string[],
  options: SpawnOptions & { needFds?: number } = {},
): ChildProcess {
  const { needFds, ...rest } = options;
  let cmd = command;
  let argv = args;
  if (needFds !== undefined) {
    const limit = openFileLimit();
    if (limit.soft < needFds) {
      if (limit.hard < needFds) {
        throw new Error(
          `this benchmark needs ${needFds} open files per process; the hard limit is ${limit.hard} (raise it, e.g. ulimit -Hn)`,
        );
      }
      // exec keeps the pid, so /proc readings and kill() still address the real process.
      cmd = 'sh';
      argv = ['-c', `ulimit -n ${needFds} && exec "$0" "$@"`, command, ...args];
    }
  }
  return track(spawn(cmd, argv, { cwd: ROOT, ...rest }));
}

/**
 * Starts a TypeScript child under tsx with an IPC channel (the load generator, SSE clients, the baseline); `wrap` is a
 * command it runs under (valgrind and its options).
 */
export function forkTs(
  file: string,
  args: string[] = [],
  options: { needFds?: number; env?: NodeJS.ProcessEnv; wrap?: string[] } = {},
): ChildProcess {
  const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
  return spawnTracked(command!, [...prefix, '--import', 'tsx', file, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: options.env ?? process.env,
    needFds: options.needFds,
  });
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Waits for the first IPC message that matches, failing on exit or after `timeoutMs`. */
export function nextMessage<T>(
  child: ChildProcess,
  match: (m: any) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: any) => {
      if (message && message.type === 'error') {
        cleanup();
        reject(new Error(`${what}: child reported: ${message.message}`));
      } else if (match(message)) {
        cleanup();
        resolve(message as T);
      }
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`${what}: child exited (code ${code}, signal ${signal}) before answering`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Every benchmark target must be on this machine: refuse anything but loopback. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== '::1' && host !== 'localhost') {
    throw new Error(`benchmarks only talk to loopback; refusing ${url}`);
  }
}

/** Builds dist/ (tsc, then the daemon's bundle) when a source is newer than the last good build, as `npm start` does. */
export async function ensureBuild(log: (line: string) => void): Promise<void> {
  const result = await ensureProjectBuild({ root: ROOT, build: () => buildAll(ROOT), log });
  if (result.failed) throw new Error('the build failed (see above)');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
