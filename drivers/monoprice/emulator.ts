// The amplifier side of the Monoprice/Dayton RS-232 protocol, byte for byte, with fault switches for tests and demos.
import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';
import type { Duplex } from 'node:stream';
import { SerialPort } from 'serialport';
import {
  MAX_UNITS,
  ZONES_PER_UNIT,
  attributeValue,
  encodeAttribute,
  encodeStatus,
  parseCommand,
  SET_RANGES,
  type SetAttribute,
  type ZoneStatus,
} from './protocol.js';

export interface EmulatorOptions {
  /** Units fitted (1 master + up to 2 slaves). Default 1. */
  units?: number;
  /** Add the extra CR to single-zone and attribute replies too (whole-unit replies always have it). Default false. */
  extraCr?: boolean;
  /** Real units ignore set commands other than PR to a zone that is off. Default true. */
  ignoreSetsWhileOff?: boolean;
  /** Pace output like the serial line: 9600 baud is about 1.04 ms per byte. Default 0 (as fast as possible). */
  byteDelayMs?: number;
  /** Fraction (0..1) of output bytes dropped. Default 0. */
  dropRate?: number;
  /** Fraction (0..1) of output bytes replaced by a random byte. Default 0. */
  garbleRate?: number;
  /** Toggle the LS (keypad connected) field on every status read, as busy keypads do. Default false. */
  flapKeypadConnected?: boolean;
  /** Seed for the fault generator, so a failing run can be replayed. */
  seed?: number;
}

export type KeypadChange = Partial<Omit<ZoneStatus, 'zone'>>;

const BACKSPACE = new Set([0x08, 0x7f]);

function initialStatus(zone: number): ZoneStatus {
  return { zone, pa: false, power: false, mute: false, dnd: false, volume: 10, treble: 7, bass: 7, balance: 10, source: 1, keypad: true };
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

/**
 * Events: `command` (text without CR, after the state changed), `close` (the attached stream ended).
 * Faults switch at run time through the public fields and `setSilent`.
 */
export class MonopriceEmulator extends EventEmitter {
  /** Every command line received (without the CR), in order, including empty resync lines. */
  readonly commands: string[] = [];
  units: number;
  extraCr: boolean;
  ignoreSetsWhileOff: boolean;
  byteDelayMs: number;
  dropRate: number;
  garbleRate: number;
  flapKeypadConnected: boolean;
  private silent = false;
  private readonly zones = new Map<number, ZoneStatus>();
  private input = '';
  private stream: Duplex | undefined;
  private readonly random: () => number;
  private outQueue: Buffer[] = [];
  private paceTimer: NodeJS.Timeout | undefined;
  private paceStart = 0;
  private paceSent = 0;

  constructor(options: EmulatorOptions = {}) {
    super();
    this.units = options.units ?? 1;
    this.extraCr = options.extraCr ?? false;
    this.ignoreSetsWhileOff = options.ignoreSetsWhileOff ?? true;
    this.byteDelayMs = options.byteDelayMs ?? 0;
    this.dropRate = options.dropRate ?? 0;
    this.garbleRate = options.garbleRate ?? 0;
    this.flapKeypadConnected = options.flapKeypadConnected ?? false;
    this.random = prng(options.seed ?? 0x5eed);
    for (let unit = 1; unit <= MAX_UNITS; unit++) {
      for (let i = 1; i <= ZONES_PER_UNIT; i++) this.zones.set(unit * 10 + i, initialStatus(unit * 10 + i));
    }
  }

  /** Connects the emulator to a duplex stream (a serial port, one end of a pty, a socket pair). */
  attach(stream: Duplex): void {
    this.detach();
    this.stream = stream;
    this.input = '';
    stream.on('data', this.onData);
    const ended = (): void => {
      if (this.stream !== stream) return;
      this.detach();
      this.emit('close');
    };
    stream.once('close', ended);
    stream.on('error', () => ended());
  }

  /** Opens a device path (one end of a pty pair) with serialport and attaches to it. */
  async attachPath(path: string): Promise<void> {
    const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    this.attach(port);
  }

  /**
   * The device end going away: closes the attached stream. On a socat pty the host end stays open and simply hears
   * nothing more; to make the host's port itself vanish (a USB adapter unplugged), kill socat (test/helpers/pty.ts).
   */
  vanish(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    const stream = this.stream;
    this.detach();
    if (!stream || stream.destroyed) return;
    await new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      const port = stream as Partial<SerialPort>;
      if (typeof port.close === 'function' && port.isOpen) port.close(() => resolve());
      else stream.destroy();
    });
  }

  /** A silent amplifier (powered off, cable pulled at the amp end): input is ignored, nothing is echoed. */
  setSilent(silent: boolean): void {
    this.silent = silent;
  }

  /** A copy of one zone's state. */
  state(zone: number): ZoneStatus {
    const status = this.zones.get(zone);
    if (!status) throw new RangeError(`no zone ${zone}: addresses are 11..16, 21..26, 31..36`);
    return { ...status };
  }

  /** Someone at a keypad changes a zone; the amplifier tells nobody until it is polled. */
  keypad(zone: number, change: KeypadChange): void {
    const status = this.zones.get(zone);
    if (!status) throw new RangeError(`no zone ${zone}: addresses are 11..16, 21..26, 31..36`);
    Object.assign(status, change, { zone });
  }

  /** Writes raw bytes to the host as if the line picked up noise. */
  injectNoise(bytes: Buffer | string): void {
    this.send(typeof bytes === 'string' ? bytes : bytes.toString('latin1'), false);
  }

  /** Resolves with the next command matching `test` (bounded, with a clear message). */
  waitForCommand(test: (command: string) => boolean, timeoutMs = 5000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('command', listener);
        reject(new Error(`emulator: no matching command within ${timeoutMs} ms (last: ${this.commands.slice(-5).join(' | ')})`));
      }, timeoutMs);
      const listener = (command: string): void => {
        if (!test(command)) return;
        clearTimeout(timer);
        this.off('command', listener);
        resolve(command);
      };
      this.on('command', listener);
    });
  }

  private detach(): void {
    if (this.paceTimer) clearTimeout(this.paceTimer);
    this.paceTimer = undefined;
    this.outQueue = [];
    this.stream?.off('data', this.onData);
    this.stream = undefined;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.silent) return;
    for (const byte of chunk) {
      if (byte === 0x0d) {
        const command = this.input;
        this.input = '';
        this.run(command);
      } else if (BACKSPACE.has(byte)) {
        this.input = this.input.slice(0, -1);
        this.send(String.fromCharCode(byte));
      } else if (byte >= 0x20 && byte < 0x7f) {
        this.input += String.fromCharCode(byte);
        this.send(String.fromCharCode(byte));
      }
      // LF and other control bytes are swallowed, like the real terminal does.
    }
  };

  private run(text: string): void {
    this.send('\r\n#');
    const command = parseCommand(text);
    if (!command) {
      this.send('\r\nCommand Error.\r\n#');
    } else if (command.kind === 'query' || command.kind === 'attribute-query') {
      if (command.unit <= this.units) {
        const whole = command.kind === 'query' && command.zone === 0;
        const zones = whole ? [1, 2, 3, 4, 5, 6] : [command.zone];
        const cr = whole || this.extraCr ? '\r' : '';
        for (const i of zones) {
          const status = this.readStatus(command.unit * 10 + i);
          const line = command.kind === 'attribute-query'
            ? encodeAttribute(status.zone, command.attribute, attributeValue(status, command.attribute))
            : encodeStatus(status);
          this.send(`${line}${cr}\r\n#`);
        }
      }
    } else if (command.kind === 'set' && command.unit <= this.units) {
      const zones = command.zone === 0 ? [1, 2, 3, 4, 5, 6] : [command.zone];
      for (const i of zones) this.applySet(this.zones.get(command.unit * 10 + i)!, command.attribute, command.value);
    }
    this.commands.push(text);
    this.emit('command', text);
  }

  private readStatus(zone: number): ZoneStatus {
    const status = this.zones.get(zone)!;
    if (this.flapKeypadConnected) status.keypad = !status.keypad;
    return status;
  }

  private applySet(status: ZoneStatus, attribute: SetAttribute, value: number): void {
    const [min, max] = SET_RANGES[attribute];
    if (value < min || value > max) return; // the amplifier ignores out-of-range values
    if (attribute !== 'PR' && this.ignoreSetsWhileOff && !status.power) return;
    switch (attribute) {
      case 'PR': status.power = value === 1; break;
      case 'MU': status.mute = value === 1; break;
      case 'DT': status.dnd = value === 1; break;
      case 'VO': status.volume = value; break;
      case 'TR': status.treble = value; break;
      case 'BS': status.bass = value; break;
      case 'BL': status.balance = value; break;
      case 'CH': status.source = value; break;
    }
  }

  private send(text: string, faults = true): void {
    if (!this.stream) return;
    let bytes: Buffer = Buffer.from(text, 'latin1');
    if (faults && (this.dropRate > 0 || this.garbleRate > 0)) bytes = this.corrupt(bytes);
    if (this.byteDelayMs <= 0) {
      this.stream.write(bytes);
      return;
    }
    this.outQueue.push(bytes);
    if (!this.paceTimer) {
      this.paceStart = performance.now();
      this.paceSent = 0;
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
    this.paceTimer = undefined;
    if (!this.stream) return;
    const due = Math.floor((performance.now() - this.paceStart) / this.byteDelayMs) + 1 - this.paceSent;
    const out: Buffer[] = [];
    let budget = due;
    while (budget > 0 && this.outQueue.length > 0) {
      const head = this.outQueue[0]!;
      if (head.length <= budget) {
        out.push(head);
        budget -= head.length;
        this.outQueue.shift();
      } else {
        out.push(head.subarray(0, budget));
        this.outQueue[0] = head.subarray(budget);
        budget = 0;
      }
    }
    if (out.length > 0) {
      const chunk = Buffer.concat(out);
      this.paceSent += chunk.length;
      this.stream.write(chunk);
    }
    if (this.outQueue.length > 0) this.paceTimer = setTimeout(() => this.pace(), Math.max(1, this.byteDelayMs));
  }
}

/** Standalone: `node --import tsx drivers/monoprice/emulator.ts --path /tmp/ttyEMU [--units 1] [--byte-delay-ms 1.04]`. */
async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const path = arg('--path');
  if (!path) {
    process.stderr.write(
      'usage: emulator.ts --path <pty> [--units 1..3] [--byte-delay-ms 1.04]\n' +
        'make a pty pair first: socat -d -d pty,raw,echo=0,link=/tmp/ttyAMP pty,raw,echo=0,link=/tmp/ttyEMU\n' +
        'then point the driver at /tmp/ttyAMP and this emulator at /tmp/ttyEMU\n',
    );
    process.exitCode = 2;
    return;
  }
  const emulator = new MonopriceEmulator({
    units: Number(arg('--units') ?? 1),
    byteDelayMs: Number(arg('--byte-delay-ms') ?? 1.04),
  });
  emulator.on('command', (command: string) => process.stderr.write(`emulator: ${JSON.stringify(command)}\n`));
  emulator.on('close', () => {
    process.stderr.write('emulator: port closed\n');
    process.exit(0);
  });
  try {
    await emulator.attachPath(path);
  } catch (err) {
    process.stderr.write(`emulator: cannot open ${path}: ${(err as Error).message} (is socat running?)\n`);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`emulator: ${emulator.units} unit(s) on ${path}\n`);
  const shutdown = (): void => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main(process.argv.slice(2));
