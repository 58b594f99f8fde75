// Demo: the daemon driving an emulated Russound RNET controller over a socat pty; extra arguments go to the daemon.
import { RnetEmulator } from '../drivers/rnet/emulator.js';
import { runDemo } from './demo.js';

// 19200 baud: about 0.52 ms a byte. Zone reads (`info 11`) follow every change and poll: only the changes are shown.
await runDemo({
  driver: 'rnet',
  emulator: new RnetEmulator({ controllers: 1, byteDelayMs: 0.52 }),
  shows: (command) => !command.startsWith('info'),
});
