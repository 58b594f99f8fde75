// Benchmark: a one-second slider drag through the RNET driver at 19200 baud, against a send-every-change baseline.
import { isMain } from '../../drivers/emulator-cli.js';
import { RNET_DEFAULTS, RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { encodeVolume, VOLUME_STEPS } from '../../drivers/rnet/protocol.js';
import { benchDrag, type DragFamily, type DragResult, printDrag } from './lib/drag.js';

export type { DragResult } from './lib/drag.js';

const CHANNEL = 11;
const BYTE_DELAY_MS = 10_000 / 19_200; // 19200 baud, 10 bits per byte: ~0.52 ms

const RNET: DragFamily<RnetEmulator> = {
  name: 'rnet',
  driverLabel: 'RnetDriver (100 ms pacing)',
  steps: VOLUME_STEPS,
  byteDelayMs: BYTE_DELAY_MS,
  baudRate: 19200,
  limitMs: 60_000,
  channel: CHANNEL,
  emulator: () => new RnetEmulator({ controllers: 1, byteDelayMs: BYTE_DELAY_MS }),
  driver: (serialPort) => new RnetDriver({ serialPort }), // production defaults
  isVolume: (command) => command.startsWith(`volume ${CHANNEL} `),
  volumeCommand: (step) => `volume ${CHANNEL} ${step}`,
  reset: (emulator) => emulator.keypad(CHANNEL, { volume: 0 }, false),
  encode: (step) => encodeVolume(1, CHANNEL % 10, step),
  // RNET answers no set: the naive client writes each one and keeps the documented 100 ms gap.
  gapMs: RNET_DEFAULTS.interCommandGapMs,
};

export const benchRnetDrag = (): Promise<DragResult> => benchDrag(RNET);

if (isMain(import.meta.url)) printDrag(RNET, await benchRnetDrag());
