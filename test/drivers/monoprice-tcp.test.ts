// Monoprice driver over network serial (tcp://) to the emulator behind a loopback adapter, in real time: wire, keypads,
// drops, refusals. The production command timeout, so a loaded machine does not make a reply miss it.
import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import type { DriverEvent, ZoneState } from '../../drivers/driver.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { client } from '../helpers/client.js';
import { concurrently } from '../helpers/concurrency.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { spawnDaemon } from '../helpers/process.js';
import { isEvent, openStream } from '../helpers/sse.js';
import { createTcpBridge, type TcpBridge } from '../helpers/tcp-bridge.js';
import { WAIT_MS } from '../helpers/wait-for.js';
import { isStatus, isZoneEvent, nextEventWithin as nextEvent } from './events.js';
import { FAST, ON, toKeypad } from './monoprice-rig.js';
import { settledWithin, startOnline } from './serial-rig.js';

// Every test builds its own TCP adapter, emulator and driver (or daemon) and mostly waits on them: a few run at once.
concurrently(t);

interface TcpRig {
  bridge: TcpBridge;
  emulator: MonopriceEmulator;
  driver: MonopriceDriver;
  events: DriverEvent[];
  logs: string[];
}

interface TcpRigOptions {
  /** Start with the adapter refusing connections. */
  refusing?: boolean;
  /** An adapter that accepts but has nothing behind it that answers. */
  silentPeer?: boolean;
}

async function tcpRig(t: Test, options: TcpRigOptions = {}): Promise<TcpRig> {
  const emulator = new MonopriceEmulator({ units: 3 }); // every unit answers: no probe waits for a timeout
  const bridge = await createTcpBridge(t, {
    refusing: options.refusing,
    device: options.silentPeer ? undefined : emulator,
  });
  const logs: string[] = [];
  const driver = new MonopriceDriver({
    serialPort: bridge.url,
    ...FAST,
    log: (level, msg) => logs.push(`${level}: ${msg}`),
  });
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  // Registered after the bridge's own teardown, so it runs first: the driver lets go before the adapter closes.
  t.teardown(async () => {
    await driver.stop();
    await emulator.close();
  });
  return { bridge, emulator, driver, events, logs };
}

/** Zones on the amplifier as given, the driver started remembering the same, online and settled. */
async function startWith(r: TcpRig, zones: Array<[number, ZoneState]> = []): Promise<void> {
  for (const [channel, state] of zones) r.emulator.keypad(channel, toKeypad(state));
  await startOnline(r, new Map(zones));
}

const setsSince = (r: TcpRig, mark: number): string[] =>
  r.emulator.commands.slice(mark).filter((c) => c.startsWith('<'));

t.test('over tcp:// a zone is routed with the same wire commands as over a serial port', async (t) => {
  const r = await tcpRig(t);
  await startWith(r);
  t.equal(r.emulator.commands[0], '', 'the first thing on a new connection is the bare CR that flushes the amp');
  const mark = r.emulator.commands.length;
  r.driver.setZone(11, { power: true, source: 2, volume: 0.5 });
  await settledWithin(r.driver);
  t.same(setsSince(r, mark), ['<11PR01', '<11CH02', '<11VO19']);
  t.match(r.emulator.state(11), { power: true, source: 2, volume: 19 });
  t.equal(r.bridge.accepted, 1, 'one connection for the whole session');
});

t.test('over tcp:// a keypad change becomes one zone event', async (t) => {
  const r = await tcpRig(t);
  await startWith(r, [[11, ON]]);
  const event = nextEvent(r.driver, isZoneEvent(11), 'zone event for 11');
  r.emulator.keypad(11, { volume: 30, mute: true });
  t.same((await event).state, { power: true, muted: true, volume: 30 / 38, source: 1 });
});

t.test(
  'the adapter dropping the connection goes offline; the driver reconnects by itself and applies a change made meanwhile',
  async (t) => {
    const r = await tcpRig(t);
    await startWith(r, [[11, ON]]);
    const offline = nextEvent(r.driver, isStatus(false), 'status offline');
    await r.bridge.refuse(); // the adapter is rebooting: the drop, then refusals until it is back
    await r.bridge.drop();
    t.match((await offline).detail, r.bridge.url, 'the offline detail names the network port');
    r.driver.setZone(11, { volume: 0.5, source: 6 });
    await settledWithin(r.driver); // offline: settled without waiting for the line
    t.equal(r.driver.online, false);
    t.match(r.emulator.state(11), { volume: 13, source: 1 }, 'nothing reached the amp while offline');

    const online = nextEvent(r.driver, isStatus(true), 'status online after the adapter is back');
    await r.bridge.accept();
    await online;
    await settledWithin(r.driver);
    t.match(r.emulator.state(11), { power: true, volume: 19, source: 6 });
    t.equal(r.bridge.accepted, 2, 'a new connection, opened by the driver itself');
  },
);

t.test('a dropped connection to an adapter that still listens is reopened by the driver', async (t) => {
  const r = await tcpRig(t);
  await startWith(r);
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  const online = offline.then(() => nextEvent(r.driver, isStatus(true), 'status online again'));
  await r.bridge.drop();
  await offline;
  await online;
  r.driver.setZone(12, { power: true });
  await settledWithin(r.driver);
  t.equal(r.emulator.state(12).power, true);
});

t.test('an adapter that closes the connection cleanly is reported as such and reconnected', async (t) => {
  const r = await tcpRig(t);
  await startWith(r);
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  const online = offline.then(() => nextEvent(r.driver, isStatus(true), 'status online again'));
  await r.emulator.vanish(); // a FIN from the adapter side, as when its web page saves settings and restarts the port
  t.match((await offline).detail, /the adapter closed the connection/);
  await online;
  t.equal(r.bridge.accepted, 2);
});

t.test(
  'a refused connection at start is reported offline and used once the adapter listens, with a change made meanwhile',
  async (t) => {
    const r = await tcpRig(t, { refusing: true });
    const offline = nextEvent(r.driver, isStatus(false), 'status offline');
    await r.driver.start(new Map());
    t.match((await offline).detail, /cannot open tcp:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    r.driver.setZone(14, { power: true, volume: 0.25, source: 3 });
    const online = nextEvent(r.driver, isStatus(true), 'status online');
    await r.bridge.accept();
    await online;
    await settledWithin(r.driver);
    t.match(r.emulator.state(14), { power: true, volume: 10, source: 3 });
  },
);

t.test('a peer that accepts but never answers is a silent amplifier: timeouts, offline, and retries', async (t) => {
  const r = await tcpRig(t, { silentPeer: true });
  const offline = nextEvent(r.driver, isStatus(false), 'status offline');
  const firstConnection = r.bridge.nextConnection();
  await r.driver.start(new Map());
  await firstConnection;
  t.match((await offline).detail, /not answering/);
  t.equal(r.driver.online, false);
  // It gives the connection up and tries a fresh one, as it reopens a serial port.
  await r.bridge.nextConnection();
  t.ok(r.bridge.accepted >= 2, `${r.bridge.accepted} connections`);
});

t.test('stopping the driver closes its connection to the adapter', async (t) => {
  const r = await tcpRig(t);
  await startWith(r);
  t.equal(r.bridge.open, 1);
  await r.driver.stop();
  await r.bridge.idle();
  t.equal(r.bridge.open, 0);
});

t.test(
  'the daemon on a tcp:// serial port reports hardware.status offline and online as the adapter drops and returns',
  async (t) => {
    const emulator = new MonopriceEmulator({ units: 3 }); // every unit answers: no probe waits for a timeout
    const bridge = await createTcpBridge(t, { device: emulator });
    t.teardown(() => emulator.close()); // teardowns run last first: the daemon stops before the emulator goes
    const driver = new MonopriceDriver({ serialPort: bridge.url, ...FAST });
    const online = nextEvent(driver, isStatus(true), 'status online');
    const d = await startTestDaemon(t, { driver });
    await online;
    const api = client(d.base, d.adminKey);
    const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
    const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
    t.teardown(() => stream.close());
    await stream.next((m) => m.retry !== undefined);

    await bridge.refuse();
    await bridge.drop();
    await stream.next(
      isEvent('hardware.status', (p) => p.online === false),
      WAIT_MS,
      'hardware offline',
    );
    t.match((await api.get('/api/health')).body, {
      status: 'degraded',
      drivers: [{ name: 'monoprice', online: false }],
    });
    t.equal(
      (await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status,
      204,
      'answered without the network',
    );
    const back = stream.next(
      isEvent('hardware.status', (p) => p.online === true),
      WAIT_MS,
      'hardware online',
    );
    const applied = emulator.waitForCommand((c) => c === '<11PR01');
    await bridge.accept();
    await back;
    await applied;
    t.equal(emulator.state(11).power, true);
  },
);

t.test('azcd --driver monoprice --serial-port tcp://host:port drives the amplifier over the network', async (t) => {
  const emulator = new MonopriceEmulator({ units: 3 }); // every unit answers: no probe waits for a timeout
  const bridge = await createTcpBridge(t, { device: emulator });
  const stateDir = tempDir('azc-tcp-');
  const polled = emulator.waitForCommand((c) => c === '?10', 20_000);
  const daemon = await spawnDaemon({
    args: ['--state-dir', stateDir, '--log-level', 'warn', '--driver', 'monoprice', '--serial-port', bridge.url],
  });
  t.teardown(async () => {
    await daemon.stop();
    await emulator.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  await polled;
  t.equal(bridge.accepted, 1, 'the daemon connected to the adapter');
  // Health turns ok once the driver has read the amp; the emulator seeing ?10 means the reply is on its way.
  let health = (await client(daemon.base, '').get('/api/health')).body;
  while (health.drivers[0].online !== true) {
    await emulator.waitForCommand(() => true);
    health = (await client(daemon.base, '').get('/api/health')).body;
  }
  t.match(health, { status: 'ok', drivers: [{ name: 'monoprice', online: true }] });
});
