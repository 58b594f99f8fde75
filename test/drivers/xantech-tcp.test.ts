// The Xantech driver over tcp:// (an IP-serial adapter), in real time: a loopback server bridges each connection to the
// emulator. The production command timeout, so a loaded machine does not make a reply miss it.
import net from 'node:net';
import type { Test } from 'tap';
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { isStatus, isZoneEvent, nextEventWithin as nextEvent } from './events.js';
import { settledWithin } from './serial-rig.js';
import { FAST, FAST_EMULATOR, ON, toKeypad } from './xantech-rig.js';

interface Bridge {
  emulator: XantechEmulator;
  server: net.Server;
  port: number;
  /** Every connection the adapter accepted. */
  connections: net.Socket[];
  listen(): Promise<void>;
  /** Stops accepting connections (the adapter rebooting); open ones are left to the caller. */
  unlisten(): Promise<void>;
}

/** A loopback "IP-serial adapter": each accepted connection is handed to the one emulator. */
async function bridge(t: Test): Promise<Bridge> {
  const emulator = new XantechEmulator(FAST_EMULATOR);
  const connections: net.Socket[] = [];
  let server = net.createServer();
  let port = 0;
  const b: Bridge = {
    emulator,
    get server() {
      return server;
    },
    get port() {
      return port;
    },
    connections,
    async listen() {
      server = net.createServer((socket) => {
        connections.push(socket);
        emulator.attach(socket);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
      port = (server.address() as net.AddressInfo).port;
    },
    unlisten: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  await b.listen();
  t.teardown(async () => {
    await emulator.close();
    for (const socket of connections) socket.destroy();
    if (server.listening) await b.unlisten();
  });
  return b;
}

function driverFor(t: Test, b: Bridge): XantechDriver {
  const driver = new XantechDriver({
    serialPort: `tcp://127.0.0.1:${b.port}`,
    ...FAST,
    activityPollIntervalMs: 60_000,
  });
  t.teardown(() => driver.stop());
  return driver;
}

t.test('over tcp:// the driver drives a zone and hears keypad changes as activity reports', async (t) => {
  const b = await bridge(t);
  const driver = driverFor(t, b);
  const online = nextEvent(driver, isStatus(true), 'status online');
  await driver.start(new Map());
  await online;
  driver.setZone(1, ON);
  await settledWithin(driver);
  t.match(b.emulator.zone(1), { power: true, volume: 13, source: 1 });
  const event = nextEvent(driver, isZoneEvent(1), 'zone event for 1');
  b.emulator.keypad(1, { source: 7 });
  t.equal((await event).state.source, 7);
});

t.test('a dropped tcp connection goes offline, and the driver reconnects once the adapter is back', async (t) => {
  const b = await bridge(t);
  const driver = driverFor(t, b);
  b.emulator.keypad(2, toKeypad(ON));
  const online = nextEvent(driver, isStatus(true), 'status online');
  await driver.start(new Map([[2, ON]]));
  await online;
  await settledWithin(driver);

  // The adapter reboots: the connection drops and new ones are refused for a while.
  const offline = nextEvent(driver, isStatus(false), 'status offline');
  const unlistened = b.unlisten(); // resolves once the open connection has ended too
  await b.emulator.vanish();
  await unlistened;
  t.match((await offline).detail, /closed|dropped/);
  const back = nextEvent(driver, isStatus(true), 'status online again');
  driver.setZone(2, { volume: 0.5, source: 3 });
  await settledWithin(driver); // offline: settled without waiting for the line
  t.equal(driver.online, false, 'offline while the adapter is away');

  await b.listen();
  await back;
  await settledWithin(driver);
  t.equal(b.connections.length, 2, 'a second connection was made');
  t.match(b.emulator.zone(2), { power: true, volume: 19, source: 3 });
  t.ok(b.emulator.activityUpdates, 'zone-activity reports switched on again');
});
