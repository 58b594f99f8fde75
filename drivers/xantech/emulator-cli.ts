// Runs the Xantech emulator on one end of a pty pair, for demos and for trying the driver without an amplifier.
import { pathToFileURL } from 'node:url';
import { XantechEmulator } from './emulator.js';
import { SOURCE_COUNT } from './protocol.js';

/** `node --import tsx drivers/xantech/emulator-cli.ts --path /tmp/ttyEMU [--zones 8|16] [--byte-delay-ms 1.04]`. */
async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const path = arg('--path');
  if (!path) {
    process.stderr.write(
      'usage: emulator-cli.ts --path <pty> [--zones 8|16] [--byte-delay-ms 1.04] [--refuse-activity error|silent] [--boot-ms N]\n' +
        'make a pty pair first: socat -d -d pty,raw,echo=0,link=/tmp/ttyAMP pty,raw,echo=0,link=/tmp/ttyEMU\n' +
        'then point the driver at /tmp/ttyAMP and this emulator at /tmp/ttyEMU\n',
    );
    process.exitCode = 2;
    return;
  }
  const refuse = arg('--refuse-activity');
  const emulator = new XantechEmulator({
    zones: Number(arg('--zones') ?? 8) === 16 ? 16 : 8,
    byteDelayMs: Number(arg('--byte-delay-ms') ?? 1.04),
    refuseActivityUpdates: refuse === 'error' || refuse === 'silent' ? refuse : false,
    bootMs: Number(arg('--boot-ms') ?? 0),
  });
  emulator.on('command', (command: string) => process.stderr.write(`emulator: ${JSON.stringify(command)}\n`));
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
  process.stderr.write(`emulator: ${emulator.zones} zones, ${SOURCE_COUNT} sources on ${path}\n`);
  const shutdown = (): void => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main(process.argv.slice(2));
