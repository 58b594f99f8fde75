// What every demo shares: an emulated amplifier on a socat pty and the daemon driving it, until Ctrl-C stops both.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EmulatorPort } from '../drivers/emulator-port.js';
import { createPtyPair } from '../test/helpers/pty.js';

export interface Demo {
  /** The driver family the daemon is started with (`--driver`). */
  driver: string;
  /** The emulated amplifier; it opens the pty at its family's line speed. */
  emulator: EmulatorPort;
  /** Whether a command the amplifier received is printed: polls arrive every few seconds, changes are what matter. */
  shows(command: string): boolean;
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs the demo; extra arguments go to the daemon (a --state-dir among them replaces the demo's own). */
export async function runDemo(demo: Demo, args = process.argv.slice(2)): Promise<void> {
  const pty = await createPtyPair();
  const { emulator } = demo;
  await emulator.attachPath(pty.b);
  emulator.on('command', (command: string) => {
    if (demo.shows(command)) process.stderr.write(`[amp] ${command}\n`);
  });
  // The demo keeps its own state (kept between demo runs), never the owner's ./data.
  const stateDir = path.join(tmpdir(), `azcd-demo-${demo.driver}`);
  const stateDirGiven = args.some((arg) => arg === '--state-dir' || arg.startsWith('--state-dir='));
  process.stderr.write(`[demo] emulated ${demo.driver} amplifier on ${pty.b}; daemon uses ${pty.a}\n`);
  if (!stateDirGiven) {
    process.stderr.write(
      `[demo] demo state in ${stateDir} (first administrator: ${path.join(stateDir, 'initial-admin.txt')})\n`,
    );
  }
  const daemon = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'daemon/main.ts',
      '--driver',
      demo.driver,
      '--serial-port',
      pty.a,
      '--state-dir',
      stateDir,
      ...args,
    ],
    { cwd: root, stdio: 'inherit' },
  );

  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      await emulator.close();
      await pty.close();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // The daemon gets the signal too (same process group on a terminal); forward it for `kill <pid>` as well.
    process.on(signal, () => {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill(signal);
    });
  }
  daemon.on('error', async (err) => {
    process.stderr.write(`[demo] cannot start the daemon: ${err.message}\n`);
    await cleanup();
    process.exit(1);
  });
  daemon.on('exit', async (code, signal) => {
    await cleanup();
    process.exit(code ?? (signal ? 1 : 0));
  });
}
