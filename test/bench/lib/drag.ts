// The slider-drag benchmark every serial family runs: 100 volume changes in 1 s through the driver and through a
// send-every-change baseline, both against the family's emulator on a pty at the real byte pacing.
import type { AmplifierDriver } from '../../../drivers/driver.js';
import { volumeToStep } from '../../../drivers/driver.js';
import type { EmulatorPort } from '../../../drivers/emulator-port.js';
import { type BytePort, openPort } from '../../../drivers/port.js';
import { createPtyPair } from '../../helpers/pty.js';

export const CHANGES = 100;
export const DRAG_MS = 1000;

export interface DragResult {
  /** How many volume changes the slider produced. */
  changes: number;
  /** How many different device steps those changes map to (a sweep repeats some). */
  distinctSteps: number;
  dragMs: number;
  byteDelayMs: number;
  /** Volume commands the amplifier received while driven through the driver. */
  commandsOnWire: number;
  /** From the last setZone call to the amplifier holding the last value (0 when it was there already). */
  lastValueLatencyMs: number;
  /** From the first setZone call asking for the last step to the amplifier holding it. */
  lastStepLatencyMs: number;
  /** The same drag sent as one command per change, each answered (where the protocol answers) and then the gap. */
  baseline: { commandsOnWire: number; lastValueLatencyMs: number };
  /** baseline latency / driver latency: how many times sooner the last value lands (driver latency floored at 1 ms). */
  latencyRatio: number;
}

/** What a family plugs into the benchmark. */
export interface DragFamily<E extends EmulatorPort> {
  /** `monoprice`: names the log lines. */
  name: string;
  /** The driver's class name, for the table. */
  driverLabel: string;
  steps: number;
  byteDelayMs: number;
  baudRate: number;
  limitMs: number;
  channel: number;
  /** The emulator, pacing its output at byteDelayMs. */
  emulator(): E;
  /** The driver with production defaults on `path`. */
  driver(path: string): AmplifierDriver;
  /** Whether an emulator command is a volume set of the channel, and whether it sets `step`. */
  isVolume(command: string): boolean;
  volumeCommand(step: number): string;
  /** Puts the channel back at volume 0 without telling anyone: the baseline starts where the driver did. */
  reset(emulator: E): void;
  /** The naive client's encoding of one volume set. */
  encode(step: number): Buffer | string;
  /** A fresh detector of the device's answer to a set, or undefined when it answers none (then only the gap). */
  answer?(): (chunk: Buffer) => boolean;
  /** The quiet gap the naive client keeps after each command (the driver's default). */
  gapMs: number;
}

const stepOf = (i: number, steps: number): number => volumeToStep(i / CHANGES, steps);

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

interface Run {
  commands: number;
  latency: number;
  stepLatency: number;
}

async function throughDriver<E extends EmulatorPort>(family: DragFamily<E>, path: string, emulator: E): Promise<Run> {
  const driver = family.driver(path);
  const { channel, steps } = family;
  try {
    await driver.start(new Map());
    await new Promise<void>((resolve) => {
      const off = driver.onEvent((event) => {
        if (event.type !== 'status' || !event.online) return;
        off();
        resolve();
      });
    });
    // start() writes nothing of what the daemon remembers: the zone is switched on as a caller would.
    driver.setZone(channel, { power: true, muted: false, volume: 0, source: 1 });
    await driver.settled();
    const mark = emulator.commands.length;
    const last = family.volumeCommand(stepOf(CHANGES, steps));
    const arrived = emulator.waitForCommand((c) => c === last, family.limitMs).then(() => performance.now());
    let firstAsked: number | undefined;
    const lastCall = await drag((i) => {
      if (firstAsked === undefined && stepOf(i, steps) === stepOf(CHANGES, steps)) firstAsked = performance.now();
      driver.setZone(channel, { volume: i / CHANGES });
    });
    const at = await arrived;
    await driver.settled();
    const commands = emulator.commands.slice(mark).filter((c) => family.isVolume(c)).length;
    // Several changes share the last step, so it may already be on the wire when the last call is made: 0 then.
    return { commands, latency: Math.max(0, at - lastCall), stepLatency: at - firstAsked! };
  } finally {
    await driver.stop();
  }
}

/** The naive client: a FIFO of every change, one command at a time, its answer (if any) then the same gap. */
async function baseline<E extends EmulatorPort>(family: DragFamily<E>, path: string, emulator: E): Promise<Run> {
  const port: BytePort = await openPort({ path, baudRate: family.baudRate });
  const answered = family.answer?.();
  let acknowledged: (() => void) | undefined;
  port.on('data', (chunk: Buffer) => {
    if (answered?.(chunk)) acknowledged?.();
  });
  const queue: Array<Buffer | string> = [];
  let wake: (() => void) | undefined;
  let done = false;
  const worker = (async () => {
    while (!done || queue.length > 0) {
      const command = queue.shift();
      if (command === undefined) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (answered) {
        await new Promise<void>((resolve) => {
          acknowledged = resolve;
          port.write(command);
        });
      } else {
        port.write(command);
      }
      await new Promise((resolve) => setTimeout(resolve, family.gapMs));
    }
  })();
  try {
    const mark = emulator.commands.length;
    const last = family.volumeCommand(stepOf(CHANGES, family.steps));
    const arrived = emulator.waitForCommand((c) => c === last, family.limitMs).then(() => performance.now());
    const lastCall = await drag((i) => {
      queue.push(family.encode(stepOf(i, family.steps)));
      wake?.();
    });
    done = true;
    wake?.();
    const latency = Math.max(0, (await arrived) - lastCall);
    await worker;
    return {
      commands: emulator.commands.slice(mark).filter((c) => family.isVolume(c)).length,
      latency,
      stepLatency: latency,
    };
  } finally {
    await port.close();
  }
}

const tenth = (ms: number): number => Math.round(ms * 10) / 10;

export async function benchDrag<E extends EmulatorPort>(family: DragFamily<E>): Promise<DragResult> {
  const pty = await createPtyPair();
  const emulator = family.emulator();
  const limit = setTimeout(() => {
    process.stderr.write(`${family.name}-drag: gave up after ${family.limitMs} ms\n`);
    process.exit(1);
  }, family.limitMs);
  try {
    await emulator.attachPath(pty.b);
    const driven = await throughDriver(family, pty.a, emulator);
    family.reset(emulator);
    const naive = await baseline(family, pty.a, emulator);
    return {
      changes: CHANGES,
      distinctSteps: new Set(Array.from({ length: CHANGES }, (_, i) => stepOf(i + 1, family.steps))).size,
      dragMs: DRAG_MS,
      byteDelayMs: Math.round(family.byteDelayMs * 1000) / 1000,
      commandsOnWire: driven.commands,
      lastValueLatencyMs: tenth(driven.latency),
      lastStepLatencyMs: tenth(driven.stepLatency),
      baseline: { commandsOnWire: naive.commands, lastValueLatencyMs: tenth(naive.latency) },
      latencyRatio: tenth(naive.latency / Math.max(1, driven.latency)),
    };
  } finally {
    clearTimeout(limit);
    await emulator.close();
    await pty.close();
  }
}

/** Prints a result as a sentence, a table and a JSON line (the bench runner reads the JSON). */
export function printDrag(family: Pick<DragFamily<EmulatorPort>, 'name' | 'driverLabel'>, result: DragResult): void {
  console.log(
    `${family.name} slider drag: ${result.changes} changes (${result.distinctSteps} distinct steps) in ${result.dragMs} ms ` +
      `at ${result.byteDelayMs} ms/byte; latency ratio ${result.latencyRatio}x; ` +
      `the last step reached the amp ${result.lastStepLatencyMs} ms after it was first asked for`,
  );
  console.table({
    [`${family.driverLabel} (coalescing)`]: {
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
