// Demo: the daemon driving an emulated Monoprice amplifier over a socat pty; extra arguments go to the daemon.
import { MonopriceEmulator } from '../drivers/monoprice/emulator.js';
import { runDemo } from './demo.js';

// Sets start with `<`; the `?x0` polls are left out.
await runDemo({
  driver: 'monoprice',
  emulator: new MonopriceEmulator({ units: 1, byteDelayMs: 1.04 }),
  shows: (command) => command.startsWith('<'),
});
