// Runs the real daemon entry point as a child process and finds its port from the start-up line.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface DaemonProcess {
  child: ChildProcess;
  base: string;
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnDaemon(args: string[], env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'daemon/main.ts', '--host', '127.0.0.1', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, NOTIFY_SOCKET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, base: `http://127.0.0.1:${m[1]}`, stdout: () => out, exited });
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    void exited.then(({ code, signal }) => reject(new Error(`daemon exited (${code ?? signal}) before listening: ${err.slice(-500)}`)));
  });
}
