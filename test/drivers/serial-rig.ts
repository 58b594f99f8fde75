// A serial driver wired to its family's emulator over a real socat pty (the end-to-end tests), and what the family
// rigs share to turn a driver-side change into an emulator's status fields and back.
import type { Test } from 'tap';
import type { AmplifierDriver, DriverEvent, DriverOptions, ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { within } from '../helpers/wait-for.js';
import { isStatus, nextEventWithin } from './events.js';

export interface SerialRig<D extends AmplifierDriver, E extends EmulatorPort> {
  pty: PtyPair;
  emulator: E;
  driver: D;
  events: DriverEvent[];
  /** Every log line the driver wrote, as `level: message`. */
  logs: string[];
  /** The adapter is pulled: socat exits, the driver's port vanishes. */
  unplug(): Promise<void>;
  /** Plugged back in: the same paths again, the emulator on the device end. */
  replug(): Promise<void>;
}

export interface SerialRigSetup<D extends AmplifierDriver, E extends EmulatorPort> {
  emulator: E;
  /** Builds the driver on the host end of the pty, logging through `log`. */
  driver(serialPort: string, log: NonNullable<DriverOptions['log']>): D;
  /** Create the pty only at replug() (a port that appears later). */
  deferredPort?: boolean;
}

export async function serialRig<D extends AmplifierDriver, E extends EmulatorPort>(
  t: Test,
  setup: SerialRigSetup<D, E>,
): Promise<SerialRig<D, E>> {
  const pty = await createPtyPair({ deferred: setup.deferredPort ?? false });
  const { emulator } = setup;
  if (pty.plugged) await emulator.attachPath(pty.b);
  const logs: string[] = [];
  const driver = setup.driver(pty.a, (level, msg) => logs.push(`${level}: ${msg}`));
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
    await pty.close();
  });
  return {
    pty,
    emulator,
    driver,
    events,
    logs,
    unplug: () => pty.kill(),
    replug: async () => {
      await pty.replug();
      await emulator.attachPath(pty.b);
    },
  };
}

/** An emulator on the device end of a fresh pty; both are closed with the test. Returns the pty (the host end is `a`). */
export async function emulatorOnPty(t: Pick<Test, 'teardown'>, emulator: EmulatorPort): Promise<PtyPair> {
  const pty = await createPtyPair();
  await emulator.attachPath(pty.b);
  t.teardown(async () => {
    await emulator.close();
    await pty.close();
  });
  return pty;
}

/** For a driver on a real line: settled() within the suite's wait limit. */
export const settledWithin = (driver: AmplifierDriver): Promise<void> =>
  within(driver.settled(), undefined, 'the driver to settle');

/** Starts a driver on a real line and waits (in real time, bounded) until it is online and has settled. */
export async function startOnline(
  r: { driver: AmplifierDriver },
  remembered: Map<number, ZoneState> = new Map(),
): Promise<void> {
  const online = nextEventWithin(r.driver, isStatus(true), 'status online');
  await r.driver.start(remembered);
  await online;
  await settledWithin(r.driver);
}

/** The fields of a zone status line (Monoprice, Xantech): `mute` and a volume in device steps. */
export interface StatusFields {
  power: boolean;
  mute: boolean;
  volume: number;
  source: number;
}

/** A driver-side change as a keypad change to a status-line emulator. */
export function toStatusChange(change: Partial<ZoneState>, steps: number): Partial<StatusFields> {
  const out: Partial<StatusFields> = {};
  if (change.power !== undefined) out.power = change.power;
  if (change.muted !== undefined) out.mute = change.muted;
  if (change.volume !== undefined) out.volume = volumeToStep(change.volume, steps);
  if (change.source !== undefined) out.source = change.source;
  return out;
}

export const fromStatusLine = (s: StatusFields, steps: number): ZoneState => ({
  power: s.power,
  muted: s.mute,
  volume: stepToVolume(s.volume, steps),
  source: s.source,
});
