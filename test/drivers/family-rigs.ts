// A family's two test rigs from one description: the driver and its emulator on an in-memory line with production
// timings on a hand-driven clock (most tests), or over a real socat pty with short polls (the end-to-end ones).
import type { Test } from 'tap';
import type { Clock } from '../../drivers/core/clock.js';
import type { AmplifierDriver, DriverOptions, ZoneState } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { type DriverWiring, type MemoryRig, memoryRig } from './memory-rig.js';
import { type SerialRig, serialRig } from './serial-rig.js';

/**
 * Driver timings on a real line (the end-to-end tests, and other suites' daemons on a pty): short polls and gaps so
 * tests move quickly, and a one-second command timeout, so a loaded machine never makes a reply miss it.
 */
export const FAST_TIMINGS = {
  pollIntervalMs: 40,
  commandTimeoutMs: 1000,
  interCommandGapMs: 2,
  reconnectMinMs: 20,
  reconnectMaxMs: 200,
};

export interface RigOptions<DO, EO> {
  emulator?: EO;
  driver?: Partial<DO>;
}

export interface Family<
  D extends AmplifierDriver,
  E extends EmulatorPort,
  DO extends DriverOptions,
  EO extends { clock?: Clock },
> {
  emulator(options: EO & { clock?: Clock }): E;
  driver(options: Partial<DO> & { serialPort: string }): D;
  /** Sets a zone on the emulator as a keypad would. */
  hold(emulator: E, channel: number, state: Partial<ZoneState>): void;
  /** Driver timings on a real line: short polls and gaps, and a command timeout a loaded machine cannot miss. */
  fast: Partial<DO>;
  /** Emulator options on a real line. */
  fastEmulator?: EO;
}

export function familyRigs<
  D extends AmplifierDriver,
  E extends EmulatorPort,
  DO extends DriverOptions,
  EO extends { clock?: Clock },
>(family: Family<D, E, DO, EO>) {
  return {
    /** The driver with its production timings against the emulator, on an in-memory line and a hand-driven clock. */
    rig(t: Test, options: RigOptions<DO, EO> & { plugged?: boolean } = {}): Promise<MemoryRig<D, E>> {
      return memoryRig(t, {
        emulator: (clock) => family.emulator({ ...(options.emulator as EO), clock }),
        driver: (wiring: DriverWiring) =>
          family.driver({ ...wiring, ...options.driver } as Partial<DO> & { serialPort: string }),
        hold: family.hold,
        ...(options.plugged === undefined ? {} : { plugged: options.plugged }),
      });
    },
    /** The driver through the real serialport on a socat pty, with the fast timings (end-to-end tests only). */
    ptyRig(t: Test, options: RigOptions<DO, EO> & { deferredPort?: boolean } = {}): Promise<SerialRig<D, E>> {
      return serialRig(t, {
        emulator: family.emulator({ ...(family.fastEmulator as EO), ...(options.emulator as EO) }),
        driver: (serialPort, log) =>
          family.driver({ serialPort, ...family.fast, log, ...options.driver } as Partial<DO> & { serialPort: string }),
        deferredPort: options.deferredPort ?? false,
      });
    },
  };
}
