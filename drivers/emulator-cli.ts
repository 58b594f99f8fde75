// Runs an emulator on one end of a pty pair from the command line, for demos and for trying a driver without hardware.
import { pathToFileURL } from 'node:url';
import type { EmulatorPort } from './emulator-port.js';

const PTY_HINT =
  'make a pty pair first: socat -d -d pty,raw,echo=0,link=/tmp/ttyAMP pty,raw,echo=0,link=/tmp/ttyEMU\n' +
  'then point the driver at /tmp/ttyAMP and this emulator at /tmp/ttyEMU\n';

export interface EmulatorCli<E extends EmulatorPort> {
  /** The usage line, options included: `emulator.ts --path <pty> [--zones 8|16]`. */
  usage: string;
  /** Builds the emulator from the parsed arguments (`arg('--zones')` is the value after the flag, if given). */
  build(arg: (name: string) => string | undefined): E;
  /** The line printed once attached: what is emulated where. */
  banner(emulator: E, path: string): string;
  /** How a received command is printed. Default: as recorded. */
  show?(command: string): string;
}

/** Whether the module at `url` is the script node was started with. */
export const isMain = (url: string): boolean => !!process.argv[1] && url === pathToFileURL(process.argv[1]).href;

/** Parses `--path`, attaches to it and runs until SIGINT/SIGTERM or until the pty goes away. */
export async function runEmulatorCli<E extends EmulatorPort>(argv: string[], cli: EmulatorCli<E>): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const path = arg('--path');
  if (!path) {
    process.stderr.write(`usage: ${cli.usage}\n${PTY_HINT}`);
    process.exitCode = 2;
    return;
  }
  const emulator = cli.build(arg);
  const show = cli.show ?? ((command: string) => command);
  emulator.on('command', (command: string) => process.stderr.write(`emulator: ${show(command)}\n`));
  emulator.on('close', () => {
    process.stderr.write('emulator: port closed\n');
    process.exit(0);
  });
  try {
    await emulator.attachPath(path);
  } catch (err) {
    process.stderr.write(`emulator: cannot open ${path}: ${(err as Error).message} (is socat running?)\n`);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`emulator: ${cli.banner(emulator, path)}\n`);
  const shutdown = (): void => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
