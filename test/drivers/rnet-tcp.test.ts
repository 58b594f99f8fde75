// The RNET driver over tcp:// (a serial-to-IP adapter), in real time: a loopback server hands each connection to the
// emulator. A one-second request timeout, so a loaded machine does not make a reply miss it.
import net from 'node:net';
import t, { type Test } from 'tap';
import { RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { isStatus, nextEventWithin as nextEvent } from './events.js';
import { FAST, ON } from './rnet-rig.js';
import { settledWithin } from './serial-rig.js';

/** A loopback "adapter": while `accepting`, each connection is the emulator's line; otherwise it is hung up at once. */
async function adapter(t: Test, emulator: RnetEmulator) {
  const sockets = new Set<net.Socket>();
  const state = { accepting: true, connections: 0 };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (!state.accepting) {
      socket.destroy();
      return;
    }
    state.connections++;
    emulator.attach(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as net.AddressInfo;
  return { url: `tcp://127.0.0.1:${port}`, state };
}

t.test('over tcp:// the driver drives zones, and survives the connection dropping and coming back', async (t) => {
  const emulator = new RnetEmulator({ controllers: 6 }); // every controller answers: no probe waits for a timeout
  const { url, state } = await adapter(t, emulator);
  const driver = new RnetDriver({ serialPort: url, ...FAST });
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
  });

  const online = nextEvent(driver, isStatus(true), 'status online');
  await driver.start(new Map());
  await online;
  driver.setZone(11, ON);
  driver.setZone(12, { power: true, source: 3, volume: 0.5 });
  await settledWithin(driver);
  t.match(emulator.state(12), { power: true, source: 3, volume: 25 }, 'commands reach the controller over TCP');

  // The adapter drops the connection and refuses new ones for a while (rebooting, Wi-Fi gone).
  state.accepting = false;
  const offline = nextEvent(driver, isStatus(false), 'status offline');
  await emulator.vanish();
  t.match((await offline).detail, /^tcp:\/\/127\.0\.0\.1:\d+/, 'the detail names the adapter');
  driver.setZone(12, { volume: 0.8, source: 6 });
  await settledWithin(driver); // offline: settled without waiting for the line

  const back = nextEvent(driver, isStatus(true), 'status online again');
  state.accepting = true;
  await back;
  await settledWithin(driver);
  t.ok(state.connections >= 2, 'the driver reconnected by itself');
  t.match(emulator.state(12), { power: true, source: 6, volume: 40 }, 'the change made while offline arrived');
  t.match(emulator.state(11), { power: true, volume: 20 });
});

t.test('a tcp:// address nobody listens on is reported offline, never thrown', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve())); // the port is now free: connections are refused
  const driver = new RnetDriver({ serialPort: `tcp://127.0.0.1:${port}`, ...FAST });
  t.teardown(() => driver.stop());
  const offline = nextEvent(driver, isStatus(false), 'status offline');
  await driver.start(new Map());
  t.match((await offline).detail, /cannot open .*ECONNREFUSED/);
  t.equal(driver.online, false);
});
