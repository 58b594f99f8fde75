// Benchmark: a one-second slider drag through the Monoprice driver at 9600 baud, against a send-every-change baseline;
// run as a script, then the keypad benchmark (monoprice-keypad.ts).

import { isMain } from '../../drivers/emulator-cli.js';
import { MONOPRICE_DEFAULTS, MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { encodeSet, LineFramer, VOLUME_STEPS } from '../../drivers/monoprice/protocol.js';
import { benchDrag, type DragFamily, type DragResult, printDrag } from './lib/drag.js';
import { mainKeypad } from './monoprice-keypad.js';

export type { DragResult } from './lib/drag.js';

const ZONE = 11;

const MONOPRICE: DragFamily<MonopriceEmulator> = {
  name: 'monoprice',
  driverLabel: 'MonopriceDriver',
  steps: VOLUME_STEPS,
  byteDelayMs: 1.04, // 9600 baud, 10 bits per byte
  baudRate: 9600,
  limitMs: 30_000,
  channel: ZONE,
  emulator: () => new MonopriceEmulator({ units: 1, byteDelayMs: 1.04 }),
  driver: (serialPort) => new MonopriceDriver({ serialPort }), // production defaults: 30 ms gap, 1 s timeout
  isVolume: (command) => command.startsWith(`<${ZONE}VO`),
  volumeCommand: (step) => encodeSet(ZONE, 'VO', step).slice(0, -1),
  reset: (emulator) => emulator.keypad(ZONE, { volume: 0 }),
  encode: (step) => encodeSet(ZONE, 'VO', step),
  // How naive integrations behave: each command waits for the amp's prompt.
  answer: () => {
    const framer = new LineFramer();
    return (chunk) => framer.push(chunk).length > 0;
  },
  gapMs: MONOPRICE_DEFAULTS.interCommandGapMs,
};

export const benchMonopriceDrag = (): Promise<DragResult> => benchDrag(MONOPRICE);

if (isMain(import.meta.url)) {
  printDrag(MONOPRICE, await benchMonopriceDrag());
  // Then keypad latency, write latency and line use against a baseline revision (monoprice-keypad.ts; its arguments).
  await mainKeypad(process.argv.slice(2));
}
