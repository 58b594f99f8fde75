// Benchmark: a one-second slider drag through the RNET driver at 19200 baud, against a send-every-change baseline.
import { pathToFileURL } from 'node:url';
import { SerialPort } from 'serialport';
import { volumeToStep } from '../../drivers/driver.js';
import { RNET_DEFAULTS, RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { VOLUME_STEPS, encodeVolume } from '../../drivers/rnet/protocol.js';
import { createPtyPair } from '../helpers/pty.js';

const CHANGES = 100;
const DRAG_MS = 1000;
const BYTE_DELAY_MS = 10_000 / 19_200; // 19200 baud, 10 bits per byte: ~0.52 ms
const CHANNEL = 11;
const LIMIT_MS = 60_000;

export interface DragResult {
  changes: number;
  /** How many different device steps those changes map to (50 steps). */
  distinctSteps: number;
  dragMs: number;
  byteDelayMs: number;
  /** Volume commands the controller received while driven through RnetDriver (production defaults: 100 ms pacing). */
  commandsOnWire: number;
  /** From the last setZone call to the controller holding the last value. */
  lastValueLatencyMs: number;
  /** The same drag sent as one command per change, each followed by the same 100 ms gap (a naive client). */
  baseline: { commandsOnWire: number; lastValueLatencyMs: number };
  /** baseline latency / driver latency (driver latency floored at 1 ms). */
  latencyRatio: number;
}

const stepOf = (i: number): number => volumeToStep(i / CHANGES, VOLUME_STEPS);
const lastCommand = `volume ${CHANNEL} ${stepOf(CHANGES)}`;
const volumeCommands = (emulator: RnetEmulator, mark: number): number =>
  emulator.commands.slice(mark).filter((c) => c.startsWith(`volume ${CHANNEL} `)).length;

/** Calls `change(i)` for i = 1..CHANGES spread evenly over DRAG_MS, on schedule even if a callback is slow. */
async function drag(change: (i: number) => void): Promise<number> {
  const start = performance.now();
  for (let i = 1; i <= CHANGES; i++) {
    const due = start + (i * DRAG_MS) / CHANGES - performance.now();
    if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
    change(i);
  }
  return performance.now();
}

async function throughDriver(path: string, emulator: RnetEmulator): Promise<{ commands: number; latency: number }> {
  const driver = new RnetDriver({ serialPort: path }); // production defaults
  try {
    await driver.start(new Map([[CHANNEL, { power: true, muted: false, volume: 0, source: 1 }]]));
    await driver.settled();
    if (!driver.online) throw new Error('driver did not come online against the emulator');
    const mark = emulator.commands.length;
    const arrived = emulator.waitForCommand((c) => c === lastCommand, LIMIT_MS).then(() => performance.now());
    const lastCall = await drag((i) => driver.setZone(CHANNEL, { volume: i / CHANGES }));
    // Several changes share the last step, so it may be on the wire before the last call: 0 then.
    const latency = Math.max(0, (await arrived) - lastCall);
    await driver.settled();
    return { commands: volumeCommands(emulator, mark), latency };
  } finally {
    await driver.stop();
  }
}

/** The naive client: a FIFO of every change, each written then followed by the documented 100 ms gap. */
async function baseline(path: string, emulator: RnetEmulator): Promise<{ commands: number; latency: number }> {
  const port = new SerialPort({ path, baudRate: 19200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const queue: Buffer[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const worker = (async () => {
    while (!done || queue.length > 0) {
      const message = queue.shift();
      if (!message) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      port.write(message);
      await new Promise((resolve) => setTimeout(resolve, RNET_DEFAULTS.interCommandGapMs));
    }
  })();
  try {
    const mark = emulator.commands.length;
    const arrived = emulator.waitForCommand((c) => c === lastCommand, LIMIT_MS).then(() => performance.now());
    const lastCall = await drag((i) => {
      queue.push(encodeVolume(1, CHANNEL % 10, stepOf(i)));
      wake?.();
    });
    done = true;
    wake?.();
    const latency = Math.max(0, (await arrived) - lastCall);
    await worker;
    return { commands: volumeCommands(emulator, mark), latency };
  } finally {
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}

export async function benchRnetDrag(): Promise<DragResult> {
  const pty = await createPtyPair();
  const emulator = new RnetEmulator({ controllers: 1, byteDelayMs: BYTE_DELAY_MS });
  const limit = setTimeout(() => {
    process.stderr.write(`rnet-drag: gave up after ${LIMIT_MS} ms\n`);
    process.exit(1);
  }, LIMIT_MS);
  try {
    await emulator.attachPath(pty.b);
    const driven = await throughDriver(pty.a, emulator);
    emulator.keypad(CHANNEL, { volume: 0 }, false); // same starting point for the baseline
    const naive = await baseline(pty.a, emulator);
    return {
      changes: CHANGES,
      distinctSteps: new Set(Array.from({ length: CHANGES }, (_, i) => stepOf(i + 1))).size,
      dragMs: DRAG_MS,
      byteDelayMs: Math.round(BYTE_DELAY_MS * 1000) / 1000,
      commandsOnWire: driven.commands,
      lastValueLatencyMs: Math.round(driven.latency * 10) / 10,
      baseline: { commandsOnWire: naive.commands, lastValueLatencyMs: Math.round(naive.latency * 10) / 10 },
      latencyRatio: Math.round((naive.latency / Math.max(1, driven.latency)) * 10) / 10,
    };
  } finally {
    clearTimeout(limit);
    await emulator.close();
    await pty.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchRnetDrag();
  console.log(
    `rnet slider drag: ${result.changes} changes (${result.distinctSteps} distinct steps) in ${result.dragMs} ms ` +
      `at ${result.byteDelayMs} ms/byte; latency ratio ${result.latencyRatio}x`,
  );
  console.table({
    'RnetDriver (coalescing, 100 ms pacing)': {
      'volume commands on wire': result.commandsOnWire,
      'last value latency ms': result.lastValueLatencyMs,
    },
    'baseline (every change)': {
      'volume commands on wire': result.baseline.commandsOnWire,
      'last value latency ms': result.baseline.lastValueLatencyMs,
    },
  });
  console.log(JSON.stringify(result));
}
