// The shared byte port: tcp:// addresses parsed or refused clearly, and both kinds of port opened, used and closed.
import net from 'node:net';
import t, { type Test } from 'tap';
import { type BytePort, openPort, parseTcpPort } from '../../drivers/port.js';
import { createPtyPair } from '../helpers/pty.js';
import { freePort } from '../helpers/sockets.js';
import { within } from '../helpers/wait-for.js';

t.test('parseTcpPort reads host and port from the forms an installer writes', async (t) => {
  t.same(parseTcpPort('tcp://127.0.0.1:4999'), { host: '127.0.0.1', port: 4999 });
  t.same(parseTcpPort('tcp://amp-bridge.local:4001'), { host: 'amp-bridge.local', port: 4001 });
  t.same(parseTcpPort('tcp://[::1]:4999'), { host: '::1', port: 4999 }, 'IPv6 in brackets, brackets dropped');
  t.same(parseTcpPort('tcp://[fd00::50]:65535'), { host: 'fd00::50', port: 65535 });
  t.same(parseTcpPort('tcp://10.0.0.7:1/'), { host: '10.0.0.7', port: 1 }, 'a trailing slash is tolerated');
  t.same(parseTcpPort('TCP://10.0.0.7:23'), { host: '10.0.0.7', port: 23 }, 'the scheme in any case');
});

t.test('parseTcpPort leaves serial device paths alone', async (t) => {
  t.equal(parseTcpPort('/dev/ttyUSB0'), undefined);
  t.equal(parseTcpPort('/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0'), undefined);
  t.equal(parseTcpPort('COM3'), undefined);
});

t.test('parseTcpPort refuses a malformed tcp address with a message that shows the right form', async (t) => {
  const bad = [
    'tcp://amp', // no port
    'tcp://amp:', // empty port
    'tcp://amp:0',
    'tcp://amp:65536',
    'tcp://amp:99999',
    'tcp://amp:-1',
    'tcp://amp:49a9',
    'tcp://:4999', // no host
    'tcp://::1:4999', // IPv6 without brackets
    'tcp://[::1]', // IPv6 without port
    'tcp://user@amp:4999',
    'tcp://amp:4999/path',
    'tcp://amp:4999?baud=9600',
    'tcp:amp:4999', // missing slashes
    'tcp://a mp:4999',
  ];
  for (const path of bad) {
    t.throws(
      () => parseTcpPort(path),
      { message: /is not a valid network serial port: write tcp:\/\/host:port with a port from 1 to 65535/ },
      path,
    );
  }
  t.throws(() => parseTcpPort('tcp://amp'), { message: /^"tcp:\/\/amp"/ }, 'the message quotes what was given');
});

t.test('openPort rejects a malformed tcp address instead of throwing', async (t) => {
  const opening = openPort({ path: 'tcp://amp', baudRate: 9600 });
  t.type(opening, Promise);
  await t.rejects(opening, /not a valid network serial port/);
});

t.test('openPort rejects a serial device that does not exist', async (t) => {
  await t.rejects(openPort({ path: '/dev/azcd-no-such-tty', baudRate: 9600 }), /azcd-no-such-tty|No such file/);
});

/** A loopback server whose connections the test can talk to; closed in teardown. */
async function server(t: Test): Promise<{ url: string; connection: Promise<net.Socket> }> {
  let accept: (socket: net.Socket) => void = () => undefined;
  const connection = new Promise<net.Socket>((resolve) => (accept = resolve));
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    accept(socket);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { url: `tcp://127.0.0.1:${(srv.address() as net.AddressInfo).port}`, connection };
}

const closeEvent = (port: BytePort): Promise<void> => new Promise((resolve) => port.on('close', () => resolve()));

t.test('a tcp port carries bytes both ways unchanged, and close() resolves after its close event', async (t) => {
  const { url, connection } = await server(t);
  const port = await openPort({ path: url, baudRate: 9600 });
  t.teardown(() => port.close());
  const peer = await connection;
  const heard = new Promise<Buffer>((resolve) => peer.once('data', resolve));
  port.write(Buffer.from([0x3f, 0x31, 0x30, 0x0d, 0x00, 0xff]));
  t.same([...(await heard)], [0x3f, 0x31, 0x30, 0x0d, 0x00, 0xff], 'binary bytes arrive as sent');
  const received = new Promise<Buffer>((resolve) => port.on('data', resolve));
  peer.write(Buffer.from('\r\n#', 'latin1'));
  t.equal((await received).toString('latin1'), '\r\n#');

  let closed = false;
  port.on('close', () => (closed = true));
  const peerClosed = new Promise<void>((resolve) => peer.once('close', () => resolve()));
  await port.close();
  t.equal(closed, true, "the 'close' event came before close() resolved");
  await within(peerClosed, undefined, 'the peer to see the close');
  let closes = 0;
  port.on('close', () => (closes += 1));
  await within(port.close(), undefined, 'a second close() to resolve');
  t.equal(closes, 0, "closing twice is harmless: no second 'close' event");
});

t.test(
  'a tcp port reports close when the adapter drops the connection, and close() then resolves at once',
  async (t) => {
    const { url, connection } = await server(t);
    const port = await openPort({ path: url, baudRate: 9600 });
    port.on('error', () => undefined);
    let closes = 0;
    port.on('close', () => (closes += 1));
    const closed = closeEvent(port);
    (await connection).resetAndDestroy();
    await within(closed, undefined, "the 'close' event");
    await within(port.close(), undefined, 'close() to resolve');
    t.equal(closes, 1, "one 'close' event: close() after the drop adds none");
  },
);

t.test('a refused tcp connection rejects with the reason', async (t) => {
  const { url } = await server(t);
  const unused = await freePort();
  t.not(url, `tcp://127.0.0.1:${unused}`);
  await t.rejects(openPort({ path: `tcp://127.0.0.1:${unused}`, baudRate: 9600 }), { code: 'ECONNREFUSED' });
});

t.test('an open given up through its signal rejects with the reason and leaves no connect timer behind', async (t) => {
  const { url } = await server(t);
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const controller = new AbortController();
  const opening = openPort({ path: url, baudRate: 9600, signal: controller.signal });
  controller.abort(new Error('the driver stopped'));
  await t.rejects(opening, { message: 'the driver stopped' });
  t.ok(timers() <= before, 'the connect timeout was cleared');
  const stopped = AbortSignal.abort(new Error('stopped before opening'));
  await t.rejects(openPort({ path: url, baudRate: 9600, signal: stopped }), { message: 'stopped before opening' });
});

t.test('a tcp port over IPv6 loopback works', async (t) => {
  const srv = net.createServer((socket) => socket.end('#'));
  const listening = await new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(0, '::1', () => resolve(true));
  });
  if (!listening) return t.plan(0, 'no IPv6 loopback on this machine');
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())));
  const port = await openPort({ path: `tcp://[::1]:${(srv.address() as net.AddressInfo).port}`, baudRate: 9600 });
  t.teardown(() => port.close());
  const data = await new Promise<Buffer>((resolve) => port.on('data', resolve));
  t.equal(data.toString(), '#');
});

t.test('a serial port that vanishes reports close once it is used, and close() afterwards resolves', async (t) => {
  const pty = await createPtyPair();
  t.teardown(() => pty.close());
  const port = await openPort({ path: pty.a, baudRate: 9600 });
  port.on('error', () => undefined);
  port.on('data', () => undefined);
  const closed = closeEvent(port);
  await pty.kill();
  // An idle pty does not always notice its other end is gone; the next write does, and a driver writes every poll.
  port.write('?10\r');
  await t.resolves(within(closed, undefined, "the 'close' event"), "the vanished port reports 'close' once it is used");
  await t.resolves(within(port.close(), undefined, 'close() to resolve'), 'close() afterwards resolves');
  await t.resolves(within(port.close(), undefined, 'a second close() to resolve'), 'and so does a second close()');
});

t.test('a serial port closed by its owner emits close once and resolves', async (t) => {
  const pty = await createPtyPair();
  t.teardown(() => pty.close());
  const port = await openPort({ path: pty.a, baudRate: 9600 });
  let closes = 0;
  port.on('close', () => closes++);
  await Promise.all([port.close(), port.close()]);
  t.equal(closes, 1);
});
