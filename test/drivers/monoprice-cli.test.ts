// The Monoprice commands as docs/drivers.md writes them: the emulator makes its own pty link, answers on it and removes
// it on SIGTERM; the demo keeps its state out of ./data.

import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SerialPort } from 'serialport';
import type { Test } from 'tap';
import t from 'tap';
import { decodeStatus, encodeQuery } from '../../drivers/monoprice/protocol.js';
import { ROOT } from '../helpers/paths.js';

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `npm run <script> -- args` in its own process group, like a command in a terminal: a signal to the group
 * reaches npm, its shell and the script. `waitFor` resolves with the first match in the output.
 */
function npmRun(t: Test, script: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, NOTIFY_SOCKET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const group = -child.pid!;
  let output = '';
  let gone = false;
  // The pipes close once every process of the command has exited (the script's children included).
  const allExited = Promise.all([
    new Promise((resolve) => child.stdout!.once('close', resolve)),
    new Promise((resolve) => child.stderr!.once('close', resolve)),
  ]).then(() => {
    gone = true;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  t.teardown(async () => {
    if (gone) return;
    try {
      process.kill(group, 'SIGKILL');
    } catch {
      // already gone
    }
    await allExited;
  });
  return {
    output: () => output,
    waitFor: (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = (): boolean => {
          const m = pattern.exec(output);
          if (m) resolve(m);
          return m !== null;
        };
        if (check()) return;
        const onData = (): void => {
          if (check()) {
            child.stdout!.off('data', onData);
            child.stderr!.off('data', onData);
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        void exited.then(() => reject(new Error(`npm run ${script} exited before printing ${pattern}: ${output}`)));
      }),
    /** SIGTERM to the whole command; resolves once all of it has exited. */
    terminate: async () => {
      process.kill(group, 'SIGTERM');
      await allExited;
    },
  };
}

t.test('npm run emulator:monoprice -- --path LINK serves the amplifier on LINK until SIGTERM', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'azcd-emulator-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const link = path.join(dir, 'ttyAMP');

  const emulator = npmRun(t, 'emulator:monoprice', ['--path', link]);
  const printed = (await emulator.waitFor(/ready.*daemon port (\S+)/))[1]!;
  t.equal(printed, link, 'prints the path the daemon should use');

  const port = new SerialPort({ path: printed, baudRate: 9600, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  t.teardown(() => (port.isOpen ? new Promise<void>((resolve) => port.close(() => resolve())) : undefined));
  const status = await new Promise<ReturnType<typeof decodeStatus>>((resolve) => {
    let text = '';
    port.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const line = /(>11\d{20})/.exec(text);
      if (line) resolve(decodeStatus(line[1]!));
    });
    port.write(encodeQuery(11));
  });
  t.match(status, { zone: 11 }, 'the amplifier answers a zone query');
  await new Promise<void>((resolve) => port.close(() => resolve()));

  await emulator.terminate();
  t.match(emulator.output(), /emulator: stopped/, 'says it stopped');
  t.notOk(exists(link), 'the link is removed');
});

t.test(
  'npm run demo:monoprice keeps its state in its own directory, not in the state directory configured',
  async (t) => {
    // os.tmpdir() follows TMPDIR, so the demo's directory lands in this test's scratch directory.
    const scratch = mkdtempSync(path.join(tmpdir(), 'azcd-demo-cli-'));
    t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
    const configured = path.join(scratch, 'owner-state');
    const demo = npmRun(t, 'demo:monoprice', ['--host', '127.0.0.1', '--port', '0'], {
      TMPDIR: scratch,
      AZC_STATE_DIR: configured,
    });
    const base = `http://127.0.0.1:${(await demo.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    const health = (await (await fetch(`${base}/api/health`)).json()) as { drivers: Array<{ name: string }> };
    t.match(health.drivers, [{ name: 'monoprice' }]);
    t.ok(existsSync(path.join(scratch, 'azcd-demo-monoprice', 'azc.db')), 'state in the demo directory');
    t.notOk(existsSync(configured), 'the configured state directory is untouched');
    await demo.terminate();
  },
);
