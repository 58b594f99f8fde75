// Benchmark: a one-second slider drag through the Xantech driver at 9600 baud, against a send-every-change baseline.
import { isMain } from '../../drivers/emulator-cli.js';
import { XANTECH_DEFAULTS, XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { encodeSet, Framer, VOLUME_STEPS } from '../../drivers/xantech/protocol.js';
import { benchDrag, type DragFamily, type DragResult, printDrag } from './lib/drag.js';

export type { DragResult } from './lib/drag.js';

const ZONE = 1;

const XANTECH: DragFamily<XantechEmulator> = {
  name: 'xantech',
  driverLabel: 'XantechDriver',
  steps: VOLUME_STEPS,
  byteDelayMs: 1.04, // 9600 baud (the MRC88 default), 10 bits per byte
  baudRate: 9600,
  limitMs: 30_000,
  channel: ZONE,
  // Activity reports as a real amp sends them (a second after activity stops): the driver must not trip over them.
  emulator: () => new XantechEmulator({ byteDelayMs: 1.04 }),
  driver: (serialPort) => new XantechDriver({ serialPort }), // production defaults: 30 ms gap, 1 s timeout
  isVolume: (command) => command.startsWith(`!${ZONE}VO`),
  volumeCommand: (step) => encodeSet(ZONE, 'VO', step).slice(0, -1),
  reset: (emulator) => {
    emulator.keypad(ZONE, { volume: 0 });
    emulator.activityUpdates = false; // the baseline does not ask for reports
  },
  encode: (step) => encodeSet(ZONE, 'VO', step),
  // Each command waits for its OK (or ERROR).
  answer: () => {
    const framer = new Framer();
    return (chunk) => framer.push(chunk).some((f) => f.kind === 'ok' || f.kind === 'error');
  },
  gapMs: XANTECH_DEFAULTS.interCommandGapMs,
};

export const benchXantechDrag = (): Promise<DragResult> => benchDrag(XANTECH);

if (isMain(import.meta.url)) printDrag(XANTECH, await benchXantechDrag());
