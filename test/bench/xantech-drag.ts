// Benchmark: a one-second slider drag through the Xantech driver at 9600 baud, against a send-every-change baseline.
import { pathToFileURL } from 'node:url';
import { openPort } from '../../drivers/port.js';
import { volumeToStep } from '../../drivers/driver.js';
import { XantechDriver, XANTECH_DEFAULTS } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { Framer, encodeSet } from '../../drivers/xantech/protocol.js';
import { createPtyPair } from '../helpers/pty.js';

const CHANGES = 100;
const DRAG_MS = 1000;
const BYTE_DELAY_MS = 1.04; // 9600 baud (the MRC88 default), 10 bits per byte
const ZONE = 1;
const LIMIT_MS = 30_000;

export interface DragResult {
  changes: number;
  /** How many different device steps those changes map to (38 steps: a sweep repeats some). */
  distinctSteps: number;
  dragMs: number;
  byteDelayMs: number;
  /** Volume commands the amplifier received while driven through XantechDriver. */
  commandsOnWire: number;
  /** From the last setZone call to the amplifier holding the last value (0 when it was there already). */
  lastValueLatencyMs: number;
  /** From the first setZone call asking for the last step to the amplifier holding it. */
  lastStepLatencyMs: number;
  /** The same drag sent as one command per change, each waiting for its OK and the same gap. */
  baseline: { commandsOnWire: number; lastValueLatencyMs: number };
  /** baseline latency / driver latency (driver latency floored at 1 ms). */
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

/** Resolves with the time the emulator received the command that sets the last value. */
function lastValueArrival(emulator: XantechEmulator): Promise<number> {
  const last = encodeSet(ZONE, 'VO', stepOf(CHANGES)).slice(0, -1);
  return emulator.waitForCommand((c) => c === last, LIMIT_MS).then(() => performance.now());
}

const volumeCommands = (emulator: XantechEmulator, mark: number): number =>
  emulator.commands.slice(mark).filter((c) => c.startsWith(`!${ZONE}VO`)).length;

async function throughDriver(
  path: string,
  emulator: XantechEmulator,
): Promise<{ commands: number; latency: number; stepLatency: number }> {
  const driver = new XantechDriver({ serialPort: path }); // production defaults: 30 ms gap, 1 s timeout
  try {
    await driver.start(new Map([[ZONE, { power: true, muted: false, volume: 0, source: 1 }]]));
    await driver.settled();
    if (!driver.online) throw new Error('driver did not come online against the emulator');
    const mark = emulator.commands.length;
    const arrived = lastValueArrival(emulator);
    let firstAsked: number | undefined;
    const lastCall = await drag((i) => {
      if (firstAsked === undefined && stepOf(i) === stepOf(CHANGES)) firstAsked = performance.now();
      driver.setZone(ZONE, { volume: i / CHANGES });
    });
    // Several changes share the last step, so it may already be on the wire when the last call is made: 0 then.
    const at = await arrived;
    await driver.settled();
    return { commands: volumeCommands(emulator, mark), latency: Math.max(0, at - lastCall), stepLatency: at - firstAsked! };
  } finally {
    await driver.stop();
  }
}

/** The naive client: a FIFO of every change, one command at a time, OK then the same gap. */
async function baseline(path: string, emulator: XantechEmulator): Promise<{ commands: number; latency: number }> {
  const port = await openPort({ path, baudRate: 9600 });
  const framer = new Framer();
  let acknowledged: (() => void) | undefined;
  port.on('data', (chunk: Buffer) => {
    if (framer.push(chunk).some((f) => f.kind === 'ok' || f.kind === 'error')) acknowledged?.();
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
        acknowledged = resolve;
        port.write(command);
      });
      await new Promise((resolve) => setTimeout(resolve, XANTECH_DEFAULTS.interCommandGapMs));
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
    return { commands: volumeCommands(emulator, mark), latency };
  } finally {
    await new Promise<void>((resolve) => {
      port.on('close', () => resolve());
      port.close();
    });
  }
}

export async function benchXantechDrag(): Promise<DragResult> {
  const pty = await createPtyPair();
  // Activity reports as a real amp sends them (a second after activity stops): the driver must not trip over them.
  const emulator = new XantechEmulator({ byteDelayMs: BYTE_DELAY_MS });
  const limit = setTimeout(() => {
    process.stderr.write(`xantech-drag: gave up after ${LIMIT_MS} ms\n`);
    process.exit(1);
  }, LIMIT_MS);
  try {
    await emulator.attachPath(pty.b);
    const driven = await throughDriver(pty.a, emulator);
    emulator.activityUpdates = false; // the baseline does not ask for reports
    emulator.keypad(ZONE, { volume: 0 }); // same starting point for the baseline
    const naive = await baseline(pty.a, emulator);
    return {
      changes: CHANGES,
      distinctSteps: new Set(Array.from({ length: CHANGES }, (_, i) => stepOf(i + 1))).size,
      dragMs: DRAG_MS,
      byteDelayMs: BYTE_DELAY_MS,
      commandsOnWire: driven.commands,
      lastValueLatencyMs: Math.round(driven.latency * 10) / 10,
      lastStepLatencyMs: Math.round(driven.stepLatency * 10) / 10,
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
  const result = await benchXantechDrag();
  console.log(
    `xantech slider drag: ${result.changes} changes (${result.distinctSteps} distinct steps) in ${result.dragMs} ms ` +
      `at ${result.byteDelayMs} ms/byte; latency ratio ${result.latencyRatio}x; ` +
      `the last step reached the amp ${result.lastStepLatencyMs} ms after it was first asked for`,
  );
  console.table({
    'XantechDriver (coalescing)': { 'VO commands on wire': result.commandsOnWire, 'last value latency ms': result.lastValueLatencyMs },
    'baseline (every change)': {
      'VO commands on wire': result.baseline.commandsOnWire,
      'last value latency ms': result.baseline.lastValueLatencyMs,
    },
  });
  console.log(JSON.stringify(result));
}
