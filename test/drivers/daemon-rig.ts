// The whole daemon on a serial driver wired to its emulator over an in-memory line, the driver and the emulator on a
// hand-driven clock: the API in process, the domain events recorded, the amplifier link up.
import type { Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/events.js';
import type { Clock } from '../../drivers/core/clock.js';
import type { AmplifierDriver } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';
import { MemorySerial } from '../helpers/memory-serial.js';
import { VirtualTime } from '../helpers/virtual-time.js';
import { isStatus, nextEvent } from './events.js';
import type { DriverWiring } from './memory-rig.js';

/** A zone as GET /api/zones answers it (the fields these cases read). */
export interface ApiZone {
  id: string;
  volume: number;
  power: boolean;
  muted: boolean;
  output: { channel: number };
}

export interface DaemonFamily<D extends AmplifierDriver, E extends EmulatorPort> {
  emulator(clock: Clock): E;
  driver(wiring: DriverWiring): D;
}

/** Starts a daemon on the family's driver with its emulator on the far end of a memory line; runs until the link is up. */
export async function daemonOnMemory<D extends AmplifierDriver, E extends EmulatorPort>(
  t: Test,
  family: DaemonFamily<D, E>,
  prepare?: (emulator: E) => void,
) {
  const time = new VirtualTime();
  const emulator = family.emulator(time.clock);
  prepare?.(emulator);
  const serial = new MemorySerial(emulator, time.io);
  const logs: string[] = [];
  const driver = family.driver({
    serialPort: '/dev/ttyMEMORY',
    openPort: serial.open,
    clock: time.clock.view(),
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  const online = nextEvent(driver, isStatus(true));
  const d = await startTestDaemon(t, { driver });
  // Runs before the daemon's own teardown: it stops without waiting for writes the clock would never let finish.
  t.teardown(async () => {
    await time.until(driver.settled(), 'the driver to settle before the daemon stops');
    await emulator.close();
  });
  const until = <T>(goal: Promise<T> | (() => unknown), what?: string): Promise<T> => time.until(goal, what);
  await until(online, 'the amplifier link up');
  await until(driver.settled(), 'the driver to settle');
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as ApiZone[];
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  return { d, time, until, serial, emulator, driver, api, zones, events, logs };
}
