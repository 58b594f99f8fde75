// Benchmark: a one-second slider drag through the Monoprice driver at 9600 baud, against a send-every-change baseline.
import { pathToFileURL } from 'node:url';
import { SerialPort } from 'serialport';
import { MonopriceDriver, MONOPRICE_DEFAULTS } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { LineFramer, encodeSet } from '../../drivers/monoprice/protocol.js';
import { volumeToStep } from '../../drivers/driver.js';
import { createPtyPair } from '../helpers/pty.js';

const CHANGES = 100;
const DRAG_MS = 1000;
const BYTE_DELAY_MS = 1.04; // 9600 baud, 10 bits per byte
const ZONE = 11;
const LIMIT_MS = 30_000;

export interface DragResult {
  /** How many volume changes the slider produced. */
  changes: number;
  /** How many different device steps those changes map to (38 steps: a sweep repeats some). */
  distinctSteps: number;
  dragMs: number;
  byteDelayMs: number;
  /** Volume commands the amplifier received while driven through MonopriceDriver. */
  commandsOnWire: number;
  /** From the last setZone call to the amplifier holding the last value. */
  lastValueLatencyMs: number;
  /** The same drag sent as one command per change, each waiting for its prompt (how naive integrations behave). */
  baseline: { commandsOnWire: number; lastValueLatencyMs: number };
  /** baseline latency / driver latency: how many times sooner the last value lands (driver latency floored at 1 ms). */
  latencyRatio: number;
}

const stepOf = (i: number): number => volumeToStep(i / CHANGES, 38);

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

/** Resolves with the time the emulator received the command that set the last value. */
function lastValueArrival(emulator: MonopriceEmulator): Promise<number> {
  const last = encodeSet(ZONE, 'VO', stepOf(CHANGES)).slice(0, -1);
  return emulator.waitForCommand((c) => c === last, LIMIT_MS).then(() => performance.now());
}

async function throughDriver(path: string, emulator: MonopriceEmulator): Promise<{ commands: number; latency: number }> {
  const driver = new MonopriceDriver({ serialPort: path }); // production defaults: 30 ms gap, 1 s timeout
  try {
    await driver.start(new Map([[ZONE, { power: true, muted: false, volume: 0, source: 1 }]]));
    await driver.settled();
    if (!driver.online) throw new Error('driver did not come online against the emulator');
    const mark = emulator.commands.length;
    const arrived = lastValueArrival(emulator);
    const lastCall = await drag((i) => driver.setZone(ZONE, { volume: i / CHANGES }));
    // Several changes share the last step, so it may already be on the wire when the last call is made: 0 then.
    const latency = Math.max(0, (await arrived) - lastCall);
    await driver.settled();
    return { commands: emulator.commands.slice(mark).filter((c) => c.startsWith(`<${ZONE}VO`)).length, latency };
  } finally {
    await driver.stop();
  }
}

/** The naive client: a FIFO of every change, one command at a time, prompt then the same 30 ms gap. */
async function baseline(path: string, emulator: MonopriceEmulator): Promise<{ commands: number; latency: number }> {
  const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const framer = new LineFramer();
  let prompt: (() => void) | undefined;
  port.on('data', (chunk: Buffer) => {
    if (framer.push(chunk).length > 0) prompt?.();
  });
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const worker = (async () => {
    while (!done || queue.length > 0) {
      const command = queue.shift();
      if (!command) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      await new Promise<void>((resolve) => {
        prompt = resolve;
        port.write(command);
      });
      await new Promise((resolve) => setTimeout(resolve, MONOPRICE_DEFAULTS.interCommandGapMs));
    }
  })();
  try {
    const mark = emulator.commands.length;
    const arrived = lastValueArrival(emulator);
    const lastCall = await drag((i) => {
      queue.push(encodeSet(ZONE, 'VO', stepOf(i)));
      wake?.();
    });
    done = true;
    wake?.();
    const latency = Math.max(0, (await arrived) - lastCall);
    await worker;
    return { commands: emulator.commands.slice(mark).filter((c) => c.startsWith(`<${ZONE}VO`)).length, latency };
  } finally {
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}

export async function benchMonopriceDrag(): Promise<DragResult> {
  const pty = await createPtyPair();
  const emulator = new MonopriceEmulator({ units: 1, byteDelayMs: BYTE_DELAY_MS });
  const limit = setTimeout(() => {
    process.stderr.write(`monoprice-drag: gave up after ${LIMIT_MS} ms\n`);
    process.exit(1);
  }, LIMIT_MS);
  try {
    await emulator.attachPath(pty.b);
    const driven = await throughDriver(pty.a, emulator);
    emulator.keypad(ZONE, { volume: 0 }); // same starting point for the baseline
    const naive = await baseline(pty.a, emulator);
    return {
      changes: CHANGES,
      distinctSteps: new Set(Array.from({ length: CHANGES }, (_, i) => stepOf(i + 1))).size,
      dragMs: DRAG_MS,
      byteDelayMs: BYTE_DELAY_MS,
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
  const result = await benchMonopriceDrag();
  console.log(
    `monoprice slider drag: ${result.changes} changes (${result.distinctSteps} distinct steps) in ${result.dragMs} ms ` +
      `at ${result.byteDelayMs} ms/byte; latency ratio ${result.latencyRatio}x`,
  );
  console.table({
    'MonopriceDriver (coalescing)': { 'VO commands on wire': result.commandsOnWire, 'last value latency ms': result.lastValueLatencyMs },
    'baseline (every change)': {
      'VO commands on wire': result.baseline.commandsOnWire,
      'last value latency ms': result.baseline.lastValueLatencyMs,
    },
  });
  console.log(JSON.stringify(result));
}
