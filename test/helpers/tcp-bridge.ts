// A loopback IP-serial adapter for tests: a TCP server that hands each connection to an emulator, and can drop it or refuse.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { freePort } from './sockets.js';
import { within } from './wait-for.js';

/** What sits behind the adapter: anything that takes over a byte stream (any emulator's attach(), drivers/emulator-port.ts). */
export interface BridgedDevice {
  attach(stream: Duplex): void;
}

export interface TcpBridge {
  /** The loopback port, fixed for the bridge's life so refuse() and accept() keep the driver's address valid. */
  readonly port: number;
  /** `tcp://127.0.0.1:<port>`: give this to the driver. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now. */
  readonly open: number;
  /** Resolves once no connection is open (the host closed its end, or drop() ran). */
  idle(): Promise<void>;
  /** Whether new connections are being accepted. */
  readonly listening: boolean;
  /** Resolves when the next connection has been accepted (and handed to the device). */
  nextConnection(): Promise<void>;
  /** The adapter drops the connection (network glitch, adapter rebooting): every open connection is reset. */
  drop(): Promise<void>;
  /** Stops listening: connects are refused, as by an adapter that is off. Open connections stay up. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  /** Closes the server and every connection (also done in the test's teardown). Safe to call twice. */
  close(): Promise<void>;
}

export interface TcpBridgeOptions {
  /** Who gets each connection. Without one the bridge is a peer that accepts and never answers. */
  device?: BridgedDevice;
  /** Start refusing (a port nobody listens on yet); accept() opens it. Default false. */
  refusing?: boolean;
}

export async function createTcpBridge(
  t: { teardown(fn: () => unknown): void },
  options: TcpBridgeOptions = {},
): Promise<TcpBridge> {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let accepted = 0;
  let waiters: Array<() => void> = [];
  let idleWaiters: Array<() => void> = [];

  const onConnection = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size > 0) return;
      const idle = idleWaiters;
      idleWaiters = [];
      for (const resolve of idle) resolve();
    });
    // The driver resets the connection when it gives up on the device; that is not a test failure.
    socket.on('error', () => undefined);
    if (options.device) options.device.attach(socket);
    else socket.resume(); // a peer that reads everything and answers nothing
    accepted++;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  const destroyAll = async (how: 'reset' | 'destroy'): Promise<void> => {
    const closing = [...sockets].map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.closed) return resolve();
          socket.once('close', () => resolve());
          // drop(): a reset, not a polite FIN, what the host sees when an adapter reboots or the network drops the session.
          // Not on a socket already shutting down (the host closed its end and ours is ending): libuv refuses to reset it,
          // Node then reports an error and never emits 'close'. close() at the end of a test only needs the connections
          // gone, so it destroys them plainly.
          if (how === 'reset' && !socket.destroyed && !socket.writableEnded) socket.resetAndDestroy();
          else socket.destroy();
        }),
    );
    await within(Promise.all(closing), undefined, 'the bridge connections to close');
  };

  const bridge: TcpBridge = {
    port,
    url: `tcp://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return sockets.size;
    },
    idle() {
      return sockets.size === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    get listening() {
      return server !== undefined;
    },
    nextConnection() {
      return new Promise((resolve) => waiters.push(resolve));
    },
    drop: () => destroyAll('reset'),
    async refuse() {
      // close() stops listening at once; its callback would wait for the open connections, which stay up.
      server?.close();
      server = undefined;
    },
    async accept() {
      if (server) return;
      const next = net.createServer(onConnection);
      await new Promise<void>((resolve, reject) => {
        next.once('error', reject);
        next.listen(port, '127.0.0.1', () => resolve());
      });
      server = next;
    },
    async close() {
      await bridge.refuse();
      await destroyAll('destroy');
    },
  };
  t.teardown(() => bridge.close());
  if (!options.refusing) await bridge.accept();
  return bridge;
}
