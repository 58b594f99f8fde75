// Raw pseudo-terminal pairs made by socat, with unplug (links vanish) and replug (same paths again) for driver tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { within } from './wait-for.js';

export interface PtyPair {
  /** The host end: give this path to the driver. */
  readonly a: string;
  /** The device end: attach the emulator here. */
  readonly b: string;
  /** Whether socat is running (the links exist). */
  readonly plugged: boolean;
  /** Unplugs: socat exits, both links vanish and open ports on them close. */
  kill(): Promise<void>;
  /** Plugs back in: a new pair at the same two paths. */
  replug(): Promise<void>;
  /** Unplugs for good and removes the temporary directory. Safe to call twice. */
  close(): Promise<void>;
}

export interface PtyOptions {
  /** Explicit link paths (default: a fresh temporary directory with `host` and `device`). */
  a?: string;
  b?: string;
  /** Don't create the pair yet (a port that appears later); call replug() to create it. */
  deferred?: boolean;
  /** How long to wait for socat to report it is ready. Default 5000 ms. */
  readyTimeoutMs?: number;
}

const MISSING = 'socat is not installed: run .ci/run or `apt-get install socat` to get it';

/** socat processes still running; killed if the process exits without its teardown (a crashed or timed-out test). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts socat and resolves once it says both ptys exist ("starting data transfer loop"). */
function startSocat(a: string, b: string, timeoutMs: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`socat did not become ready within ${timeoutMs} ms: ${stderr.trim()}`));
    }, timeoutMs);
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(err.code === 'ENOENT' ? new Error(MISSING) : err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`socat exited with ${code} before it was ready: ${stderr.trim()}`));
    });
    child.stderr!.setEncoding('utf8');
    const onData = (text: string): void => {
      stderr += text;
      if (!stderr.includes('starting data transfer loop')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr!.off('data', onData);
      child.stderr!.resume(); // keep draining so socat never blocks on a full pipe
      live.add(child);
      child.once('exit', () => live.delete(child));
      resolve(child);
    };
    child.stderr!.on('data', onData);
  });
}

async function stopSocat(child: ChildProcess, links: string[]): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // SIGTERM lets socat remove its links, which is what an unplugged USB adapter looks like.
    child.kill('SIGTERM');
    try {
      await within(exited, undefined, 'socat to exit after SIGTERM');
    } catch (err) {
      child.kill('SIGKILL');
      await exited;
      throw err;
    }
  }
  // Under load socat has once exited on SIGTERM and left a link behind (1 of ~40 runs of the suite under a CPU hog):
  // a link whose pty is gone is removed here, so an unplug looks the same every time.
  for (const link of links) removeDanglingLink(link);
}

/** Removes `link` if it is a symlink to nothing (its pty closed with socat); anything else is left alone. */
function removeDanglingLink(link: string): void {
  try {
    if (lstatSync(link).isSymbolicLink() && !existsSync(link)) rmSync(link, { force: true });
  } catch {
    // Nothing there: nothing to remove.
  }
}

export async function createPtyPair(options: PtyOptions = {}): Promise<PtyPair> {
  const dir = options.a && options.b ? undefined : mkdtempSync(join(tmpdir(), 'azcd-pty-'));
  const a = options.a ?? join(dir!, 'host');
  const b = options.b ?? join(dir!, 'device');
  const readyTimeoutMs = options.readyTimeoutMs ?? 5000;
  let child: ChildProcess | undefined;
  let closed = false;

  const pair: PtyPair = {
    a,
    b,
    get plugged() {
      return child !== undefined;
    },
    async kill() {
      const running = child;
      child = undefined;
      if (running) await stopSocat(running, [a, b]);
    },
    async replug() {
      if (closed) throw new Error('pty pair is closed');
      await pair.kill();
      child = await startSocat(a, b, readyTimeoutMs);
    },
    async close() {
      closed = true;
      await pair.kill();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (!options.deferred) {
    try {
      await pair.replug();
    } catch (err) {
      await pair.close();
      throw err;
    }
  }
  return pair;
}
