// Runs the Xantech emulator on one end of a pty pair, for demos and for trying the driver without an amplifier.
import { isMain, runEmulatorCli } from '../emulator-cli.js';
import { XantechEmulator } from './emulator.js';
import { SOURCE_COUNT } from './protocol.js';

/** `node --import tsx drivers/xantech/emulator-cli.ts --path /tmp/ttyEMU [--zones 8|16] [--byte-delay-ms 1.04]`. */
if (isMain(import.meta.url)) {
  void runEmulatorCli(process.argv.slice(2), {
    usage:
      'emulator-cli.ts --path <pty> [--zones 8|16] [--byte-delay-ms 1.04] [--refuse-activity error|silent] [--boot-ms N]',
    build: (arg) => {
      const refuse = arg('--refuse-activity');
      return new XantechEmulator({
        zones: Number(arg('--zones') ?? 8) === 16 ? 16 : 8,
        byteDelayMs: Number(arg('--byte-delay-ms') ?? 1.04),
        refuseActivityUpdates: refuse === 'error' || refuse === 'silent' ? refuse : false,
        bootMs: Number(arg('--boot-ms') ?? 0),
      });
    },
    banner: (emulator, path) => `${emulator.zones} zones, ${SOURCE_COUNT} sources on ${path}`,
    show: (command) => JSON.stringify(command),
  });
}
