// A serial driver wired to its family's emulator over an in-memory line, both on one hand-driven clock: what every
// family's rig shares. Deterministic: nothing waits for a wall clock, so a loaded machine changes nothing.
import type { Test } from 'tap';
import type { Clock } from '../../drivers/core/clock.js';
import type { AmplifierDriver, DriverEvent, DriverOptions, ZoneState } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import type { OpenPort } from '../../drivers/port.js';
import { MemorySerial } from '../helpers/memory-serial.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import type { DriverRig } from './conformance-rig.js';
import { isStatus, nextEvent } from './events.js';

/** What a rig hands the family's driver constructor. */
export interface DriverWiring {
  serialPort: string;
  openPort: OpenPort;
  clock: Clock;
  log: NonNullable<DriverOptions['log']>;
}

export interface MemoryRigSetup<D extends AmplifierDriver, E extends EmulatorPort> {
  emulator(clock: Clock): E;
  driver(wiring: DriverWiring): D;
  /** Sets a zone on the emulated hardware, as a keypad would. */
  hold(emulator: E, channel: number, state: Partial<ZoneState>): void;
  /** Whether the adapter is there at start (default true). */
  plugged?: boolean;
}

export interface MemoryRig<D extends AmplifierDriver, E extends EmulatorPort> {
  time: VirtualTime;
  serial: MemorySerial;
  emulator: E;
  driver: D;
  /** Every event the driver emitted, in order. */
  events: DriverEvent[];
  /** Every log line the driver wrote, as `level: message`. */
  logs: string[];
  /** The driver's own timers still pending. */
  timers(): number;
  /** Runs I/O and timers until `goal` holds (or settles); see test/helpers/virtual-time.ts. */
  until<T>(goal: Promise<T> | (() => unknown), what?: string): Promise<T>;
  /** Runs until every intent recorded so far reached the hardware. */
  settled(): Promise<void>;
  /** Starts the driver with what the daemon remembers, and runs until it is online and settled. */
  startOnline(remembered?: ReadonlyMap<number, ZoneState>): Promise<void>;
  /** Sets zones on the hardware as given, then starts the driver remembering the same (nothing differs at start). */
  startWith(zones?: Array<[number, ZoneState]>): Promise<void>;
  /** Runs until the emulator has received `count` more commands matching `test`. */
  commands(test: (command: string) => boolean, count?: number, what?: string): Promise<void>;
  /** Commands the emulator received since `mark` (an index into its record). */
  since(mark: number): string[];
  mark(): number;
}

export async function memoryRig<D extends AmplifierDriver, E extends EmulatorPort>(
  t: Test,
  setup: MemoryRigSetup<D, E>,
): Promise<MemoryRig<D, E>> {
  const time = new VirtualTime();
  const emulator = setup.emulator(time.clock);
  const serial = new MemorySerial(emulator, time.io, { plugged: setup.plugged ?? true });
  const driverClock = time.clock.view();
  const logs: string[] = [];
  const driver = setup.driver({
    serialPort: '/dev/ttyMEMORY',
    openPort: serial.open,
    clock: driverClock,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
  });
  const until = <T>(goal: Promise<T> | (() => unknown), what?: string): Promise<T> => time.until(goal, what);
  const rig: MemoryRig<D, E> = {
    time,
    serial,
    emulator,
    driver,
    events,
    logs,
    timers: () => driverClock.pending,
    until,
    settled: () => until(driver.settled(), 'the driver to settle'),
    async startOnline(remembered = new Map()) {
      const online = nextEvent(driver, isStatus(true));
      await driver.start(remembered);
      await until(online, 'the driver online');
      await rig.settled();
    },
    async startWith(zones = []) {
      for (const [channel, state] of zones) setup.hold(emulator, channel, state);
      await rig.startOnline(new Map(zones));
    },
    async commands(test, count = 1, what = 'the command') {
      const before = emulator.commands.filter(test).length;
      await until(() => emulator.commands.filter(test).length >= before + count, `${count} more of ${what}`);
    },
    since: (mark) => emulator.commands.slice(mark),
    mark: () => emulator.commands.length,
  };
  return rig;
}

/** Calls `fn` once, when the emulator next records a command matching `test` (its answer is then on its way). */
export function onNextCommand(emulator: EmulatorPort, test: (command: string) => boolean, fn: () => void): void {
  const listener = (command: string): void => {
    if (!test(command)) return;
    emulator.off('command', listener);
    fn();
  };
  emulator.on('command', listener);
}

/** What a conformance rig (test/drivers/conformance.ts) of any family on a memory line takes from its rig as it is. */
export function conformanceBase<D extends AmplifierDriver, E extends EmulatorPort>(
  r: MemoryRig<D, E>,
): Pick<DriverRig, 'driver' | 'until' | 'advance' | 'timers' | 'unplug' | 'replug'> {
  return {
    driver: r.driver,
    until: r.until,
    advance: (ms) => r.time.advance(ms),
    timers: r.timers,
    // The adapter is pulled and plugged back in: the port vanishes and returns at the same path.
    unplug: () => r.serial.unplug(),
    replug: () => r.serial.replug(),
  };
}
