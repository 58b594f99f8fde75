// One byte port for every serial driver: a local serial device, or raw TCP to an IP-serial adapter (tcp://host:port).
import type net from 'node:net';
import type { SerialPort } from 'serialport';
import { type Clock, monotonicClock } from './core/clock.js';

/** A duplex byte stream to the amplifier. Events: 'data' (Buffer), 'close', 'error'. */
export interface BytePort {
  /** Queues bytes; a failed write shows up as 'error' and then 'close', never as a throw. */
  write(data: Buffer | string): void;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  /** Emitted once when the port goes away: closed by us, unplugged, or the connection dropped. */
  on(event: 'close', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  removeAllListeners(): this;
  /** Closes the port; 'close' follows. Resolves once it is closed. Safe to call twice, and after the port went away. */
  close(): Promise<void>;
}

export interface PortOptions {
  /** `/dev/ttyUSB0`, `/dev/serial/by-id/...`, or `tcp://host:port` (ser2net, USR-TCP232, Global Caché in raw mode). */
  path: string;
  /** The serial line's rate; unused for tcp://, where the adapter's own setting applies. */
  baudRate: number;
  /** How long a TCP connect may take before it counts as a failed open. Default TCP_CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
  /** Gives up an open still under way (a TCP connect can take connectTimeoutMs): the driver was stopped meanwhile. */
  signal?: AbortSignal;
  /** Times the TCP connect (the system clock by default). */
  clock?: Clock;
}

/** How a driver opens its port: openPort below, or an in-memory line in tests (drivers/memory-port.ts). */
export type OpenPort = (options: PortOptions) => Promise<BytePort>;

/** An adapter on the LAN answers a connect within milliseconds; beyond this it is off or unreachable. */
export const TCP_CONNECT_TIMEOUT_MS = 3000;

/** TCP keep-alive probes start after this much idle time (Node sets only the first delay; the OS sets the rest). */
const TCP_KEEPALIVE_MS = 5000;

/** Anything starting `tcp:` is meant as network serial, so a typo gets a clear error rather than "no such device". */
const TCP_SCHEME = /^tcp:/i;
const TCP_URL = /^tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s[\]@?#]+):(\d{1,5})\/?$/i;

/** Parses `tcp://host:port` (IPv6 as `tcp://[::1]:4999`); undefined for a device path. Throws on a malformed tcp: URL. */
export function parseTcpPort(path: string): { host: string; port: number } | undefined {
  if (!TCP_SCHEME.test(path)) return undefined;
  const match = TCP_URL.exec(path);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port >= 1 && port <= 65535)) {
    throw new Error(
      `"${path}" is not a valid network serial port: write tcp://host:port with a port from 1 to 65535 ` +
        '(tcp://192.168.1.50:4999, tcp://[fd00::50]:4999)',
    );
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/** Opens the port. Rejects when it cannot be opened (missing device, refused connection, malformed tcp: URL). */
export const openPort: OpenPort = async (options) => {
  const tcp = parseTcpPort(options.path);
  options.signal?.throwIfAborted();
  if (tcp) {
    const timeoutMs = options.connectTimeoutMs ?? TCP_CONNECT_TIMEOUT_MS;
    return openTcp(tcp.host, tcp.port, timeoutMs, options.signal, options.clock ?? monotonicClock);
  }
  const port = await openSerial(options.path, options.baudRate);
  if (options.signal?.aborted) {
    await port.close();
    options.signal.throwIfAborted();
  }
  return port;
};

class SerialBytePort implements BytePort {
  private closed: Promise<void> | undefined;
  constructor(private readonly port: SerialPort) {}
  write(data: Buffer | string): void {
    this.port.write(data);
  }
  // biome-ignore lint/suspicious/noExplicitAny: one body for the overloads of BytePort.on, which type each listener
  on(event: 'data' | 'close' | 'error', listener: (...args: any[]) => void): this {
    // serialport passes a DisconnectedError to 'close' on unplug; the BytePort contract has no argument.
    this.port.on(event, event === 'close' ? () => listener() : listener);
    return this;
  }
  removeAllListeners(): this {
    this.port.removeAllListeners();
    return this;
  }
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => {
      const port = this.port;
      // An unplugged port closes itself: it may already be closed or closing, and close() would then report an error.
      if (port.isOpen) port.close(() => resolve());
      else if (port.closing) port.once('close', () => resolve());
      else resolve();
    });
    return this.closed;
  }
}

async function openSerial(path: string, baudRate: number): Promise<BytePort> {
  // Loaded on first use: configuration checks import this module, and the native binding is not needed for them.
  const { SerialPort } = await import('serialport');
  return new Promise((resolve, reject) => {
    const port = new SerialPort({ path, baudRate, dataBits: 8, parity: 'none', stopBits: 1, autoOpen: false });
    port.open((err) => (err ? reject(err) : resolve(new SerialBytePort(port))));
  });
}

/** Raw TCP: bytes pass through unchanged; the adapter sets the line's baud rate itself. */
class TcpPort implements BytePort {
  private closed: Promise<void> | undefined;
  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    // Lets the OS notice a vanished adapter on an idle connection; while the driver polls, its timeouts notice first.
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
  }
  write(data: Buffer | string): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }
  // biome-ignore lint/suspicious/noExplicitAny: one body for the overloads of BytePort.on, which type each listener
  on(event: 'data' | 'close' | 'error', listener: (...args: any[]) => void): this {
    // net.Socket passes `hadError` to 'close'; the BytePort contract has no argument.
    this.socket.on(event, event === 'close' ? () => listener() : listener);
    return this;
  }
  removeAllListeners(): this {
    this.socket.removeAllListeners();
    return this;
  }
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => {
      if (this.socket.closed) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.destroy();
    });
    return this.closed;
  }
}

function openTcp(
  host: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  clock: Clock,
): Promise<BytePort> {
  return new Promise((resolve, reject) => {
    // node's net module is loaded with the first TCP connection, not at start (ARCHITECTURE.md, "Memory").
    const socket = process.getBuiltinModule('node:net').connect({ host, port });
    const settle = (): void => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      socket.off('error', fail);
    };
    const fail = (err: Error): void => {
      settle();
      socket.destroy();
      reject(err);
    };
    const aborted = (): void => fail(signal!.reason as Error);
    const timer = clock.setTimeout(
      () => fail(new Error(`no connection to ${host}:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', aborted, { once: true });
    socket.once('error', fail);
    socket.once('connect', () => {
      settle();
      resolve(new TcpPort(socket));
    });
  });
}
