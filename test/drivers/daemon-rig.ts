// The whole daemon on a serial driver wired to its emulator over a real pty, online, with an API client and a stream.
import type { Test } from 'tap';
import type { AmplifierDriver } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createPtyPair } from '../helpers/pty.js';
import { openStream } from '../helpers/sse.js';
import { within } from '../helpers/wait-for.js';
import { isStatus, nextEvent } from './conformance.js';

export interface ZoneRow {
  id: string;
  output: { channel: number };
}

/** Starts a daemon on `driver(path)` with `emulator` on the device end; resolves once the link is up. */
export async function daemonOnDriver<D extends AmplifierDriver, E extends EmulatorPort>(
  t: Test,
  emulator: E,
  makeDriver: (serialPort: string) => D,
) {
  const pty = await createPtyPair();
  await emulator.attachPath(pty.b);
  const driver = makeDriver(pty.a);
  const online = nextEvent(driver, isStatus(true), 'status online');
  online.catch(() => undefined); // only awaited when the link was not up yet
  const d = await startTestDaemon(t, { driver });
  t.teardown(async () => {
    await emulator.close();
    await pty.close();
  });
  const api = client(d.base, d.adminKey);
  // start() resolves once the driver runs; the link comes up on its own schedule.
  if (!driver.online) await within(online, undefined, 'the amplifier link to come up');
  const zones = (await api.get('/api/zones')).body as ZoneRow[];
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);
  return { pty, emulator, driver, api, zones, stream };
}
