// A serial adapter made of in-memory lines (drivers/memory-port.ts) for driver tests: each open gives the driver a
// new line with the emulator on its far end; the adapter can be pulled out, plugged back, or drop its connection.

import { type DeviceStream, type MemoryIo, type MemoryLine, memoryLine } from '../../drivers/memory-port.js';
import type { OpenPort } from '../../drivers/port.js';

/** What sits behind the adapter: an emulator (drivers/emulator-port.ts), or anything else that takes a stream. */
export interface LineDevice {
  attach(stream: DeviceStream): void;
}

export class MemorySerial {
  /** Successful opens so far. */
  opens = 0;
  private plugged: boolean;
  private line: MemoryLine | undefined;

  constructor(
    private readonly device: LineDevice,
    private readonly io: MemoryIo,
    options: { plugged?: boolean } = {},
  ) {
    this.plugged = options.plugged ?? true;
  }

  /** The driver's openPort: a new line while plugged in, the error of a missing device otherwise. */
  readonly open: OpenPort = async (options) => {
    if (!this.plugged) throw new Error(`Error: No such file or directory, cannot open ${options.path}`);
    const line = memoryLine(this.io);
    this.line = line;
    this.opens++;
    this.device.attach(line.device);
    return line.host;
  };

  /** The adapter is pulled out: the open line closes, and opening fails until replug(). */
  unplug(): void {
    this.plugged = false;
    this.drop();
  }

  replug(): void {
    this.plugged = true;
  }

  /** The open line closes (an adapter restarting); the next open works again. */
  drop(): void {
    this.line?.device.destroy();
    this.line = undefined;
  }
}

/** One openPort for several adapters, chosen by the port path each driver is configured with. */
export function openByPath(adapters: Record<string, MemorySerial>): OpenPort {
  return (options) => {
    const adapter = adapters[options.path];
    if (!adapter)
      return Promise.reject(new Error(`no adapter at ${options.path} (known: ${Object.keys(adapters).join(', ')})`));
    return adapter.open(options);
  };
}
