// The daemon's lifecycle: services start in one order and stop in the reverse one, SSDP included, and a start
// that fails part-way leaves nothing running.

import { rmSync } from 'node:fs';
import net from 'node:net';
import t from 'tap';
import { Daemon } from '../../daemon/app.js';
import { defaultConfig } from '../../daemon/config.js';
import { Lifecycle } from '../../daemon/lifecycle.js';
import { createLogger } from '../../daemon/log.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import type { Notifier } from '../../native/index.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { bindUdp, closeUdp, freeUdpPort } from '../helpers/sockets.js';
import { mSearch, parseSsdp } from '../helpers/ssdp.js';
import { within } from '../helpers/wait-for.js';

const quiet = createLogger('silent');

/** Sends a unicast M-SEARCH to 127.0.0.1:port and resolves with the headers of the first answer. */
async function search(port: number, st: string): Promise<Record<string, string>> {
  const client = await bindUdp('127.0.0.1', 0);
  try {
    const answered = new Promise<Record<string, string>>((resolve) =>
      client.once('message', (msg) => resolve(parseSsdp(msg).headers)),
    );
    client.send(mSearch(st, port), port, '127.0.0.1');
    return await within(answered, undefined, `an M-SEARCH answer for ${st}`);
  } finally {
    await closeUdp(client);
  }
}

t.test('a lifecycle stops its services in the reverse order of starting', async (t) => {
  const order: string[] = [];
  const lifecycle = new Lifecycle(quiet);
  for (const name of ['store', 'amplifier', 'http', 'ssdp']) {
    await lifecycle.start(
      name,
      () => order.push(`start ${name}`),
      () => order.push(`stop ${name}`),
    );
  }
  await lifecycle.stop();
  t.same(order, [
    'start store',
    'start amplifier',
    'start http',
    'start ssdp',
    'stop ssdp',
    'stop http',
    'stop amplifier',
    'stop store',
  ]);
  await lifecycle.stop();
  t.equal(order.length, 8, 'a second stop stops nothing twice');
});

t.test('a lifecycle stops everything even when one stop fails, then reports that failure', async (t) => {
  const stopped: string[] = [];
  const lifecycle = new Lifecycle(quiet);
  await lifecycle.start(
    'store',
    () => undefined,
    () => stopped.push('store'),
  );
  await lifecycle.start(
    'driver',
    () => undefined,
    () => {
      throw new Error('the port is gone');
    },
  );
  await lifecycle.start(
    'http',
    () => undefined,
    () => stopped.push('http'),
  );
  await t.rejects(lifecycle.stop(), { message: 'the port is gone' });
  t.same(stopped, ['http', 'store']);
});

t.test('a service whose start fails is not stopped; the ones before it are', async (t) => {
  const stopped: string[] = [];
  const lifecycle = new Lifecycle(quiet);
  await lifecycle.start(
    'store',
    () => undefined,
    () => stopped.push('store'),
  );
  await t.rejects(
    lifecycle.start(
      'listener',
      () => Promise.reject(new Error('address in use')),
      () => stopped.push('listener'),
    ),
  );
  await lifecycle.stop();
  t.same(stopped, ['store']);
});

t.test(
  'a daemon whose port is taken fails to start and leaves its store closed and its amplifier stopped',
  async (t) => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const stateDir = tempDir();
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const config = {
      ...defaultConfig(),
      host: '127.0.0.1',
      port: (blocker.address() as net.AddressInfo).port,
      stateDir,
    };
    const driver = new SimulatedDriver({ applyDelayMs: 1 });
    const daemon = new Daemon({ config, logger: quiet, driver });
    await t.rejects(daemon.start('admin-password-1'), /cannot listen on 127\.0\.0\.1/);
    t.equal(daemon.services.store.db.open, false, 'the store was closed');
    t.equal(driver.online, false, 'the amplifier driver was stopped');
    await daemon.stop();
  },
);

t.test('the daemon sends READY only once it listens, and STOPPING before it stops listening', async (t) => {
  const calls: string[] = [];
  const notifier: Notifier = {
    available: true,
    ready: (status) => {
      calls.push(`READY ${status}`);
      return true;
    },
    status: (text) => {
      calls.push(`STATUS ${text}`);
      return true;
    },
    watchdogPing: () => true,
    stopping: () => {
      // Still listening: the systemd service is stopped first.
      calls.push('STOPPING');
      return true;
    },
  };
  const d = await startTestDaemon(t, { notifier });
  const port = Number(new URL(d.base).port);
  t.equal(calls.length, 1);
  t.match(
    calls[0],
    new RegExp(`^READY listening on 127\\.0\\.0\\.1:${port}; amplifier simulated online; 0 event streams$`),
  );
  await d.stop();
  t.same(calls.slice(1), ['STOPPING']);
  t.equal(await fetch(`${d.base}/api/health`).catch(() => 'refused'), 'refused', 'stopped listening');
});

t.test('stopping the daemon stops its SSDP announcer', async (t) => {
  const ssdpPort = await freeUdpPort();
  const d = await startTestDaemon(t, {
    config: { ssdp: true, ssdpInterfaces: ['lo'] },
    // Bound to 127.0.0.1 on a free port: nothing reaches a real network, and the test owns the address.
    ssdp: { port: ssdpPort, bindToInterfaceAddress: true },
  });
  const answer = await search(ssdpPort, 'upnp:rootdevice');
  t.equal(answer['LOCATION'], `${d.base}/description.xml`, 'the daemon announces itself');
  t.equal(answer['USN'], `${d.daemon.services.udn}::upnp:rootdevice`);

  await d.stop();
  // The announcer bound the port with SO_REUSEADDR; an exclusive bind succeeds only once its socket is closed.
  const probe = await bindUdp('127.0.0.1', ssdpPort);
  t.teardown(() => closeUdp(probe));
  t.equal(probe.address().port, ssdpPort, 'the SSDP socket was closed by the stop');
});
