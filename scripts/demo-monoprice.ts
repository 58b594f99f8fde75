// Demo: the daemon driving an emulated Monoprice amplifier over a socat pty; extra arguments go to the daemon.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MonopriceEmulator } from '../drivers/monoprice/emulator.js';
import { createPtyPair } from '../test/helpers/pty.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pty = await createPtyPair();
const emulator = new MonopriceEmulator({ units: 1, byteDelayMs: 1.04 });
await emulator.attachPath(pty.b);
// Polls arrive every few seconds; show only what changes the amplifier.
emulator.on('command', (command: string) => {
  if (command.startsWith('<')) process.stderr.write(`[amp] ${command}\n`);
});
// The demo keeps its own state (kept between demo runs), never the owner's ./data; a --state-dir argument wins.
const stateDir = path.join(tmpdir(), 'azcd-demo-monoprice');
const stateDirGiven = process.argv.slice(2).some((arg) => arg === '--state-dir' || arg.startsWith('--state-dir='));
process.stderr.write(`[demo] emulated amplifier on ${pty.b}; daemon uses ${pty.a}\n`);
if (!stateDirGiven) {
  process.stderr.write(`[demo] demo state in ${stateDir} (first administrator: ${path.join(stateDir, 'initial-admin.txt')})\n`);
}

const daemon = spawn(
  process.execPath,
  ['--import', 'tsx', 'daemon/main.ts', '--driver', 'monoprice', '--serial-port', pty.a, '--state-dir', stateDir, ...process.argv.slice(2)],
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
