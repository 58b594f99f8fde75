// The device side every emulator shares: a paced, fault-injecting transmit line, attaching to a pty path or any duplex
// stream (a loopback TCP socket, an in-memory line), the command record with waitForCommand, and scripted rejections.
import { EventEmitter } from 'node:events';
import { SerialPort } from 'serialport';
import { type Clock, monotonicClock } from './core/clock.js';
import type { DeviceStream } from './memory-port.js';

export interface OutputOptions {
  /** Time for the pacing, reports and boots (the system clock by default; tests share theirs with the driver). */
  clock?: Clock;
  /** Pace output like the serial line: 9600 baud is about 1.04 ms per byte. Default 0 (as fast as possible). */
  byteDelayMs?: number;
  /** Fraction (0..1) of output bytes dropped. Default 0. */
  dropRate?: number;
  /** Fraction (0..1) of output bytes replaced by a random byte. Default 0. */
  garbleRate?: number;
  /** Seed for the fault generator, so a failing run can be replayed. */
  seed?: number;
  /** How long the device ignores its port after power-up (a slow boot). Default 0. */
  bootMs?: number;
}

/** mulberry32: a tiny deterministic PRNG for reproducible line faults. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes to one attached stream at a time; the rates can change at run time through the public fields. */
export class PacedOutput {
  byteDelayMs: number;
  dropRate: number;
  garbleRate: number;
  private stream: DeviceStream | undefined;
  private readonly random: () => number;
  private readonly clock: Clock;
  private queue: Buffer[] = [];
  private timer: unknown;
  private startedAt = 0;
  private sent = 0;

  constructor(options: OutputOptions = {}) {
    this.clock = options.clock ?? monotonicClock;
    this.byteDelayMs = options.byteDelayMs ?? 0;
    this.dropRate = options.dropRate ?? 0;
    this.garbleRate = options.garbleRate ?? 0;
    this.random = prng(options.seed ?? 0x5eed);
  }

  attach(stream: DeviceStream | undefined): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.stream = stream;
  }

  /** Sends text (latin1, one char per byte); `faults: false` for bytes that are themselves the fault (noise). */
  write(text: string, faults = true): void {
    if (!this.stream) return;
    let bytes: Buffer = Buffer.from(text, 'latin1');
    if (faults && (this.dropRate > 0 || this.garbleRate > 0)) bytes = this.corrupt(bytes);
    if (this.byteDelayMs <= 0) {
      this.stream.write(bytes);
      return;
    }
    this.queue.push(bytes);
    if (!this.timer) {
      this.startedAt = this.clock.now();
      this.sent = 0;
      this.pace();
    }
  }

  private corrupt(bytes: Buffer): Buffer {
    const out: number[] = [];
    for (const byte of bytes) {
      const r = this.random();
      if (r < this.dropRate) continue;
      out.push(r < this.dropRate + this.garbleRate ? Math.floor(this.random() * 256) : byte);
    }
    return Buffer.from(out);
  }

  /** Writes whatever the baud rate allows by now; catching up by elapsed time keeps the average exact despite 1 ms timers. */
  private pace(): void {
    this.timer = undefined;
    if (!this.stream) return;
    const due = Math.floor((this.clock.now() - this.startedAt) / this.byteDelayMs) + 1 - this.sent;
    const out: Buffer[] = [];
    let budget = due;
    while (budget > 0 && this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.length <= budget) {
        out.push(head);
        budget -= head.length;
        this.queue.shift();
      } else {
        out.push(head.subarray(0, budget));
        this.queue[0] = head.subarray(budget);
        budget = 0;
      }
    }
    if (out.length > 0) {
      const chunk = Buffer.concat(out);
      this.sent += chunk.length;
      this.stream.write(chunk);
    }
    if (this.queue.length > 0) this.timer = this.clock.setTimeout(() => this.pace(), Math.max(1, this.byteDelayMs));
  }
}

/** The next `times` commands matching a test arrive garbled: the emulator refuses them instead of running them. */
export class CommandRejections {
  private rejections: Array<{ test: (command: string) => boolean; left: number }> = [];

  add(test: (command: string) => boolean, times: number): void {
    this.rejections.push({ test, left: times });
  }

  /** Whether this command is to be refused (and one fewer of its kind from now on). */
  take(command: string): boolean {
    const rejection = this.rejections.find((r) => r.test(command));
    if (!rejection) return false;
    if (--rejection.left <= 0) this.rejections = this.rejections.filter((r) => r !== rejection);
    return true;
  }
}

/** Closes an attached stream; resolves once it is closed. A serial port that closed itself on unplug is left as is. */
function closeStream(stream: DeviceStream): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  const port = stream as Partial<SerialPort>;
  return new Promise<void>((resolve) => {
    if (typeof port.close === 'function') {
      if (port.isOpen) port.close(() => resolve());
      else if (port.closing) stream.once('close', () => resolve());
      else resolve();
      return;
    }
    stream.once('close', () => resolve());
    stream.destroy();
  });
}

/**
 * An emulator's connection to the host. Events: `command` (after the state changed), `booted`, `close` (the attached
 * stream ended). The line's rates change at run time through the accessors; subclasses handle the bytes that arrive.
 */
export abstract class EmulatorPort extends EventEmitter {
  /** Every command received, in order, as the family records it. */
  readonly commands: string[] = [];
  protected readonly output: PacedOutput;
  protected readonly clock: Clock;
  protected stream: DeviceStream | undefined;
  /** Input ignored and nothing sent: the mains off, a boot under way, or the cable pulled at the amp end. */
  protected silent = false;
  /** How long a power-up keeps the device silent. */
  protected readonly bootMs: number;
  private poweredUp = false;
  private booting: unknown;

  constructor(
    options: OutputOptions,
    /** The line speed attachPath() opens a pty at. */
    private readonly baudRate: number,
  ) {
    super();
    this.clock = options.clock ?? monotonicClock;
    this.bootMs = options.bootMs ?? 0;
    this.output = new PacedOutput(options);
  }

  /** Silent (powered off, the cable pulled at the amp end) or answering again. */
  setSilent(silent: boolean): void {
    this.silent = silent;
  }

  /** Silent for `ms` (a power-up), then answering again; emits `booted`. The boot goes on whatever the line does. */
  protected boot(ms: number): void {
    this.clock.clearTimeout(this.booting);
    this.setSilent(true);
    this.booting = this.clock.setTimeout(() => {
      this.booting = undefined;
      this.setSilent(false);
      this.emit('booted');
    }, ms);
  }

  get byteDelayMs(): number {
    return this.output.byteDelayMs;
  }
  set byteDelayMs(ms: number) {
    this.output.byteDelayMs = ms;
  }
  get dropRate(): number {
    return this.output.dropRate;
  }
  set dropRate(rate: number) {
    this.output.dropRate = rate;
  }
  get garbleRate(): number {
    return this.output.garbleRate;
  }
  set garbleRate(rate: number) {
    this.output.garbleRate = rate;
  }

  /**
   * Connects to a duplex stream: a serial port, one end of a pty, a TCP socket accepted by a loopback server, or the
   * device end of an in-memory line. The device has one line: a stream attached before is closed.
   */
  attach(stream: DeviceStream): void {
    const replaced = this.stream;
    this.detach();
    // The stream replaced is closed, not just dropped: a pty whose other end vanished reads as end-of-file forever, and
    // serialport retries such reads without end, so a port left open keeps the process alive (a test never exits).
    if (replaced && replaced !== stream) void closeStream(replaced);
    this.stream = stream;
    this.output.attach(stream);
    stream.on('data', this.onData);
    const ended = (): void => {
      if (this.stream !== stream) return;
      this.detach();
      this.emit('close');
    };
    stream.once('close', ended);
    stream.on('error', () => {
      ended();
      // A pty whose other end vanished errors (EIO) but stays open, its pending read keeping the process alive.
      const port = stream as Partial<SerialPort>;
      if (typeof port.close === 'function' && port.isOpen) port.close(() => undefined);
      else if (!stream.destroyed) stream.destroy();
    });
    // The device powers up with its first line; a reconnect later (a new socket, a replugged adapter) finds it running.
    const poweringUp = !this.poweredUp;
    this.poweredUp = true;
    if (poweringUp && this.bootMs > 0) this.boot(this.bootMs);
    this.attached();
  }

  /** Opens a device path (one end of a pty pair) with serialport and attaches to it. */
  async attachPath(path: string, baudRate = this.baudRate): Promise<void> {
    await this.close(); // the port on the previous pty (replugged at the same path) must not outlive it
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    this.attach(port);
  }

  /**
   * The device end going away: closes the attached stream. Over TCP the adapter closes cleanly: a FIN, not the reset
   * that closing with unread bytes would send. On a socat pty the host end stays open and hears nothing more (to
   * make the host's port vanish, kill socat: test/helpers/pty.ts).
   */
  async vanish(): Promise<void> {
    const socket = this.stream as (DeviceStream & { end?: () => void; setNoDelay?: unknown }) | undefined;
    if (!socket || typeof socket.end !== 'function' || typeof socket.setNoDelay !== 'function') return this.close();
    this.detach();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.end(); // the host answers the FIN with its own, and the socket closes
    await closed;
  }

  async close(): Promise<void> {
    this.clock.clearTimeout(this.booting);
    this.booting = undefined;
    const stream = this.stream;
    this.detach();
    if (stream) await closeStream(stream);
  }

  /** Writes raw bytes to the host as if the line picked up noise. */
  injectNoise(bytes: Buffer | string): void {
    this.output.write(typeof bytes === 'string' ? bytes : bytes.toString('latin1'), false);
  }

  /**
   * Resolves with the next command matching `test` (bounded on the emulator's clock, with a clear message). The
   * default limit is generous: a command that never comes fails the same, and a loaded machine can stretch a paced
   * serial line's poll cycle.
   */
  waitForCommand(test: (command: string) => boolean, timeoutMs = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.off('command', listener);
        reject(
          new Error(
            `emulator: no matching command within ${timeoutMs} ms (last: ${this.commands.slice(-5).join(' | ')})`,
          ),
        );
      }, timeoutMs);
      const listener = (command: string): void => {
        if (!test(command)) return;
        this.clock.clearTimeout(timer);
        this.off('command', listener);
        resolve(command);
      };
      this.on('command', listener);
    });
  }

  /** Records a command once its effect is done, and tells the `command` listeners. */
  protected done(command: string): void {
    this.commands.push(command);
    this.emit('command', command);
  }

  /** A new stream is attached: reset the input state, start what runs while attached. */
  protected abstract attached(): void;
  /** The stream is going away: stop what runs while attached. */
  protected detached(): void {
    // Most emulators run nothing while attached.
  }
  /** Bytes from the host. */
  protected abstract receive(chunk: Buffer): void;

  private readonly onData = (chunk: Buffer): void => this.receive(chunk);

  private detach(): void {
    this.detached();
    this.output.attach(undefined);
    this.stream?.off('data', this.onData);
    this.stream = undefined;
  }
}
