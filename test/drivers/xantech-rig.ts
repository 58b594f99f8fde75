// A Xantech driver wired to the emulator over a real pty, with fast timings; shared by the driver test files.
import type { Test } from 'tap';
import type { DriverEvent, ZoneState } from '../../drivers/driver.js';
import { XantechDriver, type XantechOptions } from '../../drivers/xantech/driver.js';
import { XantechEmulator, type EmulatorOptions } from '../../drivers/xantech/emulator.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { isStatus, nextEvent, settledWithin } from './conformance.js';

/** Short timings so faults resolve in milliseconds; the defaults are for a real 9600 baud line. */
export const FAST: Partial<XantechOptions> = {
  pollIntervalMs: 40,
  activityPollIntervalMs: 40,
  commandTimeoutMs: 150,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

/** Reports follow activity after 5 ms instead of a second. */
export const FAST_EMULATOR: EmulatorOptions = { activityDelayMs: 5 };

export const ON: ZoneState = { power: true, muted: false, volume: 13 / 38, source: 1 };

export interface Rig {
  pty: PtyPair;
  emulator: XantechEmulator;
  driver: XantechDriver;
  events: DriverEvent[];
  /** Every log line the driver wrote, as `level: message`. */
  logs: string[];
  /** Resolves after pending reports went out and a full poll of zone 1 followed them (needs a fast poll). */
  observed(): Promise<void>;
}

export interface RigOptions {
  emulator?: EmulatorOptions;
  driver?: Partial<XantechOptions>;
  deferredPort?: boolean;
}

export async function rig(t: Test, options: RigOptions = {}): Promise<Rig> {
  const pty = await createPtyPair({ deferred: options.deferredPort ?? false });
  const emulator = new XantechEmulator({ ...FAST_EMULATOR, ...options.emulator });
  if (pty.plugged) await emulator.attachPath(pty.b);
  const logs: string[] = [];
  const driver = new XantechDriver({
    serialPort: pty.a,
    ...FAST,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
    ...options.driver,
  });
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
    await pty.close();
  });
  const observed = async (): Promise<void> => {
    await emulator.reportsSent();
    await emulator.waitForCommand((c) => c === '?1ZD');
    await emulator.waitForCommand((c) => c === '?1ZD');
  };
  return { pty, emulator, driver, events, logs, observed };
}

/** Starts the driver and waits until it is online and has pushed its desired state. */
export async function startOnline(r: Rig, desired: Map<number, ZoneState> = new Map()): Promise<void> {
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  await r.driver.start(desired);
  await online;
  await settledWithin(r.driver);
}

/** Commands the amp received since `mark` (an index into emulator.commands), sets only. */
export const setsSince = (r: Rig, mark = 0): string[] => r.emulator.commands.slice(mark).filter((c) => c.startsWith('!'));

/** Zone events the driver emitted. */
export const zoneEvents = (r: Rig): DriverEvent[] => r.events.filter((e) => e.type === 'zone');
