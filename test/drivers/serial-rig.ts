// A serial driver wired to its family's emulator over a real socat pty: what every family's rig shares.
import type { Test } from 'tap';
import type { AmplifierDriver, DriverEvent, DriverOptions, ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { createPtyPair, type PtyPair } from '../helpers/pty.js';
import { isStatus, nextEvent, settledWithin } from './conformance.js';

export interface SerialRig<D extends AmplifierDriver, E extends EmulatorPort> {
  pty: PtyPair;
  emulator: E;
  driver: D;
  events: DriverEvent[];
  /** Every log line the driver wrote, as `level: message`. */
  logs: string[];
  /** Resolves once the driver has looked at the hardware again (the family says how that shows on the wire). */
  observed(): Promise<void>;
  /** The adapter is pulled: socat exits, the driver's port vanishes. */
  unplug(): Promise<void>;
  /** Plugged back in: the same paths again, the emulator on the device end. */
  replug(): Promise<void>;
}

export interface SerialRigSetup<D extends AmplifierDriver, E extends EmulatorPort> {
  emulator: E;
  /** Builds the driver on the host end of the pty, logging through `log`. */
  driver(serialPort: string, log: NonNullable<DriverOptions['log']>): D;
  observed(emulator: E): Promise<void>;
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
    observed: () => setup.observed(emulator),
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

/** Starts the driver and waits until it is online and has pushed its desired state. */
export async function startOnline(r: { driver: AmplifierDriver }, desired: Map<number, ZoneState> = new Map()): Promise<void> {
  const online = nextEvent(r.driver, isStatus(true), 'status online');
  await r.driver.start(desired);
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

/**
 * Checks the sets that reached the amplifier, in order. A set sent again right after itself counts once, when the
 * driver logged a reply timeout for each repeat: on a loaded machine a reply can miss the rigs' 150 ms timeout, and
 * the driver then sends the set again (the amplifier takes the same value twice). Any other repeat fails.
 */
export function sameSets(t: Pick<Test, 'same' | 'ok'>, r: { logs: string[] }, sent: string[], expected: string[], message?: string): void {
  const once = sent.filter((command, i) => i === 0 || command !== sent[i - 1]);
  const repeats = sent.length - once.length;
  t.same(once, expected, message ?? 'the sets, in order');
  const timeouts = r.logs.filter((line) => line.includes('timeout on')).length;
  t.ok(repeats <= timeouts, `${repeats} set(s) sent again, after ${timeouts} reply timeout(s)`);
}
