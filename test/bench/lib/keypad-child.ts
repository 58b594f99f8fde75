// One run of the keypad benchmark (test/bench/monoprice-keypad.ts) in its own process: a family's driver, loaded from
// `--root` (this tree, or another revision's drivers/ for the baseline), against the family's emulator on a pty at the
// real byte pacing. Idle (nobody watching, nothing done) the line's use is measured; then watched, keypad changes at
// random moments on every zone but one and API writes to that one, each timed; the result goes back over IPC.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AmplifierDriver, DriverEvent } from '../../../drivers/driver.js';
import type { EmulatorPort } from '../../../drivers/emulator-port.js';
import { MonopriceEmulator } from '../../../drivers/monoprice/emulator.js';
import { RnetEmulator } from '../../../drivers/rnet/emulator.js';
import { XantechEmulator } from '../../../drivers/xantech/emulator.js';
import { createPtyPair } from '../../helpers/pty.js';

export type FamilyName = 'monoprice' | 'rnet' | 'xantech';

export interface KeypadRun {
  family: FamilyName;
  root: string;
  idleMs: number;
  watchedMs: number;
  /** From a keypad change on the emulator to the driver's zone event showing it, ms (sorted). */
  keypadMs: number[];
  /** Keypad changes made and never reported by the end of the run. */
  keypadUnseen: number;
  /** From setZone to the emulator receiving the volume command, ms (sorted). */
  writeMs: number[];
  /** Fraction of the time the line carried bytes, both directions added (10 bits a byte), idle and watched. */
  utilisation: { idle: number; watched: number };
  /** Commands the amplifier received per minute, idle and watched. */
  commandsPerMinute: { idle: number; watched: number };
}

interface Family {
  byteDelayMs: number;
  zones: number[];
  steps: number;
  /** The driver class's module and export under drivers/. */
  module: string;
  exportName: string;
  emulator(
    byteDelayMs: number,
  ): EmulatorPort & { keypad(zone: number, change: { power?: boolean; volume?: number }): void };
  /** Whether an emulator command is a volume set of `zone`. */
  isVolumeSet(command: string, zone: number): boolean;
}

const FAMILIES: Record<FamilyName, Family> = {
  monoprice: {
    byteDelayMs: 1.04, // 9600 baud, 10 bits a byte
    zones: [11, 12, 13, 14, 15, 16, 21, 22, 23, 24, 25, 26, 31, 32, 33, 34, 35, 36],
    steps: 38,
    module: 'monoprice/driver.ts',
    exportName: 'MonopriceDriver',
    emulator: (byteDelayMs) => new MonopriceEmulator({ units: 3, byteDelayMs }),
    isVolumeSet: (command, zone) => command.startsWith(`<${zone}VO`),
  },
  rnet: {
    byteDelayMs: 10_000 / 19_200,
    zones: [11, 12, 13, 14, 15, 16],
    steps: 50,
    module: 'rnet/driver.ts',
    exportName: 'RnetDriver',
    emulator: (byteDelayMs) => new RnetEmulator({ controllers: 1, byteDelayMs }),
    isVolumeSet: (command, zone) => command.startsWith(`volume ${zone} `),
  },
  xantech: {
    byteDelayMs: 1.04,
    zones: [1, 2, 3, 4, 5, 6, 7, 8],
    steps: 38,
    module: 'xantech/driver.ts',
    exportName: 'XantechDriver',
    emulator: (byteDelayMs) => new XantechEmulator({ byteDelayMs }),
    isVolumeSet: (command, zone) => command.startsWith(`!${zone}VO`),
  },
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const between = (min: number, max: number): number => min + Math.random() * (max - min);

export async function runKeypad(
  familyName: FamilyName,
  root: string,
  idleMs: number,
  watchedMs: number,
): Promise<KeypadRun> {
  const family = FAMILIES[familyName];
  const mod = (await import(pathToFileURL(path.join(root, 'drivers', family.module)).href)) as Record<
    string,
    new (o: {
      serialPort: string;
    }) => AmplifierDriver
  >;
  const pty = await createPtyPair();
  const emulator = family.emulator(family.byteDelayMs);
  // Bytes the amplifier sends (its echo, replies, prompts, reports), counted as they are paced out.
  let fromAmp = 0;
  const output = (emulator as unknown as { output: { write: (text: string, ...rest: unknown[]) => unknown } }).output;
  const write = output.write.bind(output);
  output.write = (text: string, ...rest: unknown[]) => {
    fromAmp += text.length;
    return write(text, ...rest);
  };
  const toAmp = (): number => emulator.commands.reduce((sum, c) => sum + c.length + 1, 0);
  // Every zone on at a middle volume before the driver starts: it learns them, and nothing is written.
  const volume = new Map<number, number>();
  for (const zone of family.zones) {
    emulator.keypad(zone, { power: true, volume: Math.round(family.steps / 2) });
    volume.set(zone, Math.round(family.steps / 2));
  }
  await emulator.attachPath(pty.b);
  const driver = new mod[family.exportName]!({ serialPort: pty.a });
  try {
    const online = new Promise<void>((resolve) => {
      const off = driver.onEvent((e) => {
        if (e.type === 'status' && e.online) {
          off();
          resolve();
        }
      });
    });
    await driver.start(new Map());
    await online;
    await driver.settled();
    await sleep(2000); // the first reads of every unit are over

    const line = (): { bytes: number; commands: number; at: number } => ({
      bytes: fromAmp + toAmp(),
      commands: emulator.commands.length,
      at: performance.now(),
    });
    const use = (
      from: ReturnType<typeof line>,
      to: ReturnType<typeof line>,
    ): { utilisation: number; perMinute: number } => ({
      utilisation: ((to.bytes - from.bytes) * family.byteDelayMs) / (to.at - from.at),
      perMinute: ((to.commands - from.commands) * 60_000) / (to.at - from.at),
    });

    // Idle: nobody watching, nothing asked.
    driver.watching?.(false);
    const idleFrom = line();
    await sleep(idleMs);
    const idle = use(idleFrom, line());

    // Watched: a client on the event stream; keypads turned at random moments, and the app writing one zone.
    driver.watching?.(true);
    const [writeZone, ...keypadZones] = family.zones;
    const keypadMs: number[] = [];
    const writeMs: number[] = [];
    const pending = new Map<number, { step: number; at: number }>();
    const offEvents = driver.onEvent((e: DriverEvent) => {
      if (e.type !== 'zone') return;
      const wait = pending.get(e.channel);
      if (!wait || Math.abs(e.state.volume - wait.step / family.steps) > 1e-9) return;
      keypadMs.push(performance.now() - wait.at);
      pending.delete(e.channel);
    });
    const watchedFrom = line();
    const end = performance.now() + watchedMs;
    const keypads = (async () => {
      while (performance.now() < end) {
        await sleep(between(100, 500));
        const free = keypadZones.filter((z) => !pending.has(z));
        if (free.length === 0) continue;
        const zone = free[Math.floor(Math.random() * free.length)]!;
        const step =
          ((volume.get(zone)! + 1 + Math.floor(Math.random() * (family.steps - 3))) % (family.steps - 1)) + 1;
        volume.set(zone, step);
        pending.set(zone, { step, at: performance.now() });
        emulator.keypad(zone, { volume: step });
      }
    })();
    const writes = (async () => {
      let step = volume.get(writeZone!)!;
      while (performance.now() < end) {
        await sleep(between(150, 450));
        step = step >= family.steps - 2 ? 2 : step + 1;
        const at = performance.now();
        const arrived = new Promise<void>((resolve) => {
          const listener = (command: string): void => {
            if (!family.isVolumeSet(command, writeZone!)) return;
            emulator.off('command', listener);
            resolve();
          };
          emulator.on('command', listener);
        });
        driver.setZone(writeZone!, { volume: step / family.steps });
        await arrived;
        writeMs.push(performance.now() - at);
      }
    })();
    await Promise.all([keypads, writes]);
    const watched = use(watchedFrom, line());
    // Changes made near the end get the time of a whole poll to be seen before they count as unseen.
    await sleep(6000);
    offEvents();
    const sorted = (values: number[]): number[] => values.map((v) => Math.round(v * 10) / 10).sort((a, b) => a - b);
    return {
      family: familyName,
      root,
      idleMs,
      watchedMs,
      keypadMs: sorted(keypadMs),
      keypadUnseen: pending.size,
      writeMs: sorted(writeMs),
      utilisation: { idle: idle.utilisation, watched: watched.utilisation },
      commandsPerMinute: { idle: idle.perMinute, watched: watched.perMinute },
    };
  } finally {
    await driver.stop();
    await emulator.close();
    await pty.close();
  }
}

process.once('message', async (message: { family: FamilyName; root: string; idleMs: number; watchedMs: number }) => {
  try {
    const result = await runKeypad(message.family, message.root, message.idleMs, message.watchedMs);
    process.send?.({ type: 'result', result });
  } catch (err) {
    process.send?.({ type: 'result', error: (err as Error).stack ?? String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
