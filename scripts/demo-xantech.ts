// Demo: the daemon driving an emulated Xantech MRC88 over a socat pty; extra arguments go to the daemon.
import { XantechEmulator } from '../drivers/xantech/emulator.js';
import { runDemo } from './demo.js';

// Sets start with `!`; the `?` zone queries are left out.
await runDemo({
  driver: 'xantech',
  emulator: new XantechEmulator({ zones: 8, byteDelayMs: 1.04 }),
  shows: (command) => command.startsWith('!'),
});
