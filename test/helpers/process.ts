// The suite's one way to run azcd as a child process, for tests (the source entry, bundled or under tsx) and
// benchmarks (the built dist/ entry): a clean environment, output kept and searchable, and stops that never wait forever.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import path from 'node:path';
import { nodeEntry, ROOT } from './paths.js';
import { WAIT_MS, within } from './wait-for.js';

export { ROOT };

const ENTRIES = {
  /** daemon/main.ts as the suite runs (bundled in .test-build/, or under tsx): what the tests run. */
  source: nodeEntry('daemon/main.ts'),
  /** dist/daemon/main.js from `npm run build`: what the installed service and the benchmarks run. */
  built: [path.join(ROOT, 'dist/daemon/main.js')],
} as const;

/** Variables of the outer environment that would change what the daemon does (its settings, systemd's sockets). */
const INHERITED_SETTINGS = /^(AZC_|NOTIFY_SOCKET$|INVOCATION_ID$|WATCHDOG_)/;
/** Start-up takes seconds on a busy machine (more under tsx); a daemon that prints nothing in this long is stuck. */
const START_WAIT_MS = 30_000;
/** Output kept per stream: enough for every start-up message, bounded for a benchmark that logs every request. */
const KEPT_CHARS = 1 << 20;

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface RunOptions {
  /** Command-line arguments after the entry point. */
  args?: string[];
  /** Added to the environment, which has no AZC_* or systemd variables of the outer one. */
  env?: NodeJS.ProcessEnv;
  entry?: keyof typeof ENTRIES;
  /** A script to run instead of either entry (a bundle built by a test). */
  entryPath?: string;
  /** Node options before the entry (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** 'discard' sends stdout to /dev/null: a benchmark pays for writing its logs, not for a reader. */
  stdout?: 'keep' | 'discard';
  /** An IPC channel to the child (a benchmark's preloaded meter answers on it). */
  ipc?: boolean;
  /** Spawns with this instead of child_process.spawn (the benchmarks track their children and raise fd limits). */
  spawner?: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
}

export interface AzcdProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout match of `re`; rejects if the process exits first or after `timeoutMs`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<Exit>;
  /** Sends `signal`, waits up to `timeoutMs` for the exit, then SIGKILL; resolves with how it exited. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface DaemonProcess extends AzcdProcess {
  port: number;
  base: string;
}

function cleanEnvironment(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!INHERITED_SETTINGS.test(key)) env[key] = value;
  return { ...env, ...extra };
}

/**
 * A spawner (RunOptions.spawner) that starts the command without the test runner's preload: tap adds its process-info
 * hook, which starts a worker thread and wraps child_process, to every child's NODE_OPTIONS, whatever env is given.
 * For a child whose loaded modules a test counts.
 */
export function spawnWithoutTestPreload(command: string, args: string[], options: SpawnOptions): ChildProcess {
  return spawn('env', ['-u', 'NODE_OPTIONS', command, ...args], options);
}

/** Starts azcd and returns at once (for --help, a bad flag, or a start that is expected to fail). */
export function runAzcd(options: RunOptions = {}): AzcdProcess {
  const spawner = options.spawner ?? spawn;
  const child = spawner(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...(options.entryPath ? [options.entryPath] : ENTRIES[options.entry ?? 'source']),
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      env: cleanEnvironment(options.env ?? {}),
      stdio: [
        'ignore',
        options.stdout === 'discard' ? 'ignore' : 'pipe',
        'pipe',
        ...(options.ipc ? (['ipc'] as const) : []),
      ],
    },
  );
  const kept = { out: '', err: '' };
  const listeners = new Set<() => void>();
  const keep = (which: 'out' | 'err') => (chunk: string) => {
    kept[which] += chunk;
    if (kept[which].length > KEPT_CHARS) kept[which] = kept[which].slice(-KEPT_CHARS / 2);
    for (const listener of [...listeners]) listener();
  };
  child.stdout?.setEncoding('utf8').on('data', keep('out'));
  child.stderr?.setEncoding('utf8').on('data', keep('err'));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    stdout: () => kept.out,
    stderr: () => kept.err,
    exited,
    waitFor(re, timeoutMs = START_WAIT_MS) {
      let check = (): void => undefined;
      const found = new Promise<RegExpExecArray>((resolve, reject) => {
        check = () => {
          const match = re.exec(kept.out);
          if (match) {
            listeners.delete(check);
            resolve(match);
          }
        };
        listeners.add(check);
        check();
        void exited.then(({ code, signal }) => {
          if (listeners.delete(check)) {
            reject(
              new Error(
                `azcd exited (${code ?? signal}) before printing ${re}: ${kept.out.slice(-2000)}\n${kept.err.slice(-2000)}`,
              ),
            );
          }
        });
      });
      return within(found, timeoutMs, `azcd to print ${re}`).finally(() => listeners.delete(check));
    },
    async stop(signal = 'SIGTERM', timeoutMs = WAIT_MS) {
      if (running()) child.kill(signal);
      try {
        return await within(exited, timeoutMs, `azcd to exit after ${signal}`);
      } catch (err) {
        if (running()) child.kill('SIGKILL');
        await exited;
        throw err;
      }
    },
  };
}

/**
 * Starts azcd on 127.0.0.1 (port 0 unless `port` is given) and resolves once it printed its "listening on" line.
 * `--host` and `--port` come first, so `args` can still override them.
 */
export async function spawnDaemon(
  options: RunOptions & { port?: number; timeoutMs?: number } = {},
): Promise<DaemonProcess> {
  if (options.stdout === 'discard')
    throw new Error('spawnDaemon reads the "listening on" line: use runAzcd to discard stdout');
  const azcd = runAzcd({
    ...options,
    args: ['--host', '127.0.0.1', '--port', String(options.port ?? 0), ...(options.args ?? [])],
  });
  try {
    const port = Number((await azcd.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/, options.timeoutMs))[1]);
    return { ...azcd, port, base: `http://127.0.0.1:${port}` };
  } catch (err) {
    await azcd.stop('SIGKILL').catch(() => {
      // Already gone: the start's error is the one to report.
    });
    throw err;
  }
}

/** spawnDaemon, with a teardown that kills the process if the test left it running. */
export async function startedDaemon(
  t: { teardown(fn: () => unknown): void },
  options: Parameters<typeof spawnDaemon>[0] = {},
): Promise<DaemonProcess> {
  const daemon = await spawnDaemon(options);
  t.teardown(() => daemon.stop('SIGKILL'));
  return daemon;
}
