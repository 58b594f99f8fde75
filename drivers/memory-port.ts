// An in-memory serial line: the host end is a BytePort for a driver, the device end a stream an emulator attaches
// to. Bytes arrive asynchronously, as a real port delivers them, but with no real time in between, so a test on a
// hand-driven clock decides every delay itself (the emulator's pacing, the driver's timeouts and gaps).
import { EventEmitter } from 'node:events';
import type { BytePort } from './port.js';

/**
 * Delivers the bytes of one or more lines, each chunk on its own turn of the event loop (setImmediate), and counts
 * what is still on its way: a test rig waits until nothing is (see test/helpers/virtual-time.ts).
 */
export class MemoryIo {
  private inFlight = 0;

  /** Deliveries scheduled and not yet made. */
  get pending(): number {
    return this.inFlight;
  }

  deliver(fn: () => void): void {
    this.inFlight++;
    setImmediate(() => {
      this.inFlight--;
      fn();
    });
  }
}

/** What an emulator needs of the stream it attaches to: a Duplex, a serial port, a socket, or the device end here. */
export interface DeviceStream {
  write(data: Buffer | string): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  destroy(): unknown;
  readonly destroyed: boolean;
}

/** One end of the line. Writes after either end closed go nowhere, as on a vanished port. */
class End extends EventEmitter {
  peer!: End;
  closed = false;

  constructor(private readonly io: MemoryIo) {
    super();
  }

  get destroyed(): boolean {
    return this.closed;
  }

  write(data: Buffer | string): boolean {
    if (this.closed) return false;
    const chunk = typeof data === 'string' ? Buffer.from(data, 'latin1') : Buffer.from(data);
    const peer = this.peer;
    this.io.deliver(() => {
      if (!peer.closed) peer.emit('data', chunk);
    });
    return true;
  }

  /** Ends the line from this side: both ends are closed and each hears 'close' once. */
  destroy(): this {
    if (this.closed) return this;
    for (const end of [this, this.peer]) {
      end.closed = true;
      this.io.deliver(() => end.emit('close'));
    }
    return this;
  }
}

class HostEnd extends End implements BytePort {
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.once('close', () => resolve()));
    this.destroy();
    return closed;
  }
}

export interface MemoryLine {
  /** The driver's end. */
  host: BytePort;
  /** The amplifier's end: give it to an emulator's attach(). */
  device: DeviceStream;
}

/** A new line whose bytes `io` delivers. */
export function memoryLine(io: MemoryIo): MemoryLine {
  const host = new HostEnd(io);
  const device = new End(io);
  host.peer = device;
  device.peer = host;
  return { host, device };
}
