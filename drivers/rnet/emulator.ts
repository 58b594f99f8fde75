// The controller side of Russound RNET, byte for byte, with fault switches and bus traffic for tests and demos.
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { SerialPort } from 'serialport';
import { PacedOutput, type OutputOptions } from '../monoprice/emulator-output.js';
import { chatterFrame, keypadKeyFrame, keypadMuteFrame } from './emulator-bus.js';
import {
  EVENT,
  FrameParser,
  KEY,
  KEY_MUTE,
  MAX_CONTROLLERS,
  SOURCE_COUNT,
  VOLUME_STEPS,
  ZONES_PER_CONTROLLER,
  channelOf,
  controllerOf,
  decodeEvent,
  decodeZoneInfoRequest,
  encodeZoneInfoReply,
  zoneOf,
  type Frame,
  type ZoneInfo,
} from './protocol.js';

export interface EmulatorOptions extends OutputOptions {
  /** Controllers on the bus, 1..6. Default 1. */
  controllers?: number;
  /** Silent for this long after attach (a controller still booting). Default 0. */
  bootMs?: number;
  /** Source, volume and mute events to a zone that is off are ignored. Default true. */
  ignoreWhileOff?: boolean;
  /** Frames with a wrong checksum are ignored, as a controller does with a garbled message. Default true. */
  checkChecksums?: boolean;
  /** Unsolicited keypad and display frames every this many ms (0: none). Default 0. */
  chatterIntervalMs?: number;
  /**
   * Before each reply, other traffic for the same zone: display feedback, and the zone's info addressed to another
   * keypad (0x71) with different values, as when two keypads ask at once. Default false.
   */
  trafficBeforeReplies?: boolean;
}

/** What the zone holds, including the mute RNET never reports. Source 1..6, volume 0..50. */
export interface EmulatedZone {
  power: boolean;
  source: number;
  volume: number;
  muted: boolean;
}

/**
 * Events: `command` (a description of each message received, after the state changed), `booted`, `close`.
 * Commands are recorded as `info 11`, `power 11 on`, `source 11 3`, `volume 11 25`, `mute 11`, `all on`,
 * `bad-checksum`, or `other <hex>`.
 */
export class RnetEmulator extends EventEmitter {
  readonly commands: string[] = [];
  /** Every frame received, as the bytes arrived (F0..F7). */
  readonly frames: Buffer[] = [];
  controllers: number;
  ignoreWhileOff: boolean;
  checkChecksums: boolean;
  trafficBeforeReplies: boolean;
  private silent = false;
  private toLose = 0;
  private booting: NodeJS.Timeout | undefined;
  private readonly bootMs: number;
  private chatterIntervalMs: number;
  private chatterTimer: NodeJS.Timeout | undefined;
  private chatterTurn = 0;
  private readonly zones = new Map<number, EmulatedZone>();
  private readonly parser = new FrameParser();
  private rawFrame: number[] = [];
  private stream: Duplex | undefined;
  private readonly output: PacedOutput;

  constructor(options: EmulatorOptions = {}) {
    super();
    this.controllers = options.controllers ?? 1;
    this.bootMs = options.bootMs ?? 0;
    this.ignoreWhileOff = options.ignoreWhileOff ?? true;
    this.checkChecksums = options.checkChecksums ?? true;
    this.trafficBeforeReplies = options.trafficBeforeReplies ?? false;
    this.chatterIntervalMs = options.chatterIntervalMs ?? 0;
    this.output = new PacedOutput(options);
    for (let c = 1; c <= MAX_CONTROLLERS; c++) {
      for (let z = 1; z <= ZONES_PER_CONTROLLER; z++) {
        this.zones.set(channelOf(c, z), { power: false, source: 1, volume: 20, muted: false });
      }
    }
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

  /** Connects to a duplex stream: a serial port, one end of a pty, or a TCP socket accepted by a loopback server. */
  attach(stream: Duplex): void {
    this.detach();
    this.stream = stream;
    this.output.attach(stream);
    this.parser.reset();
    this.rawFrame = [];
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
    if (this.bootMs > 0) this.powerOn(this.bootMs);
    this.setChatter(this.chatterIntervalMs);
  }

  /** Opens a device path (one end of a pty pair) at 19200 baud and attaches to it. */
  async attachPath(path: string): Promise<void> {
    const port = new SerialPort({ path, baudRate: 19200, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    this.attach(port);
  }

  /** The device end going away (a TCP adapter dropping the connection, a cable pulled): closes the stream. */
  vanish(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    const stream = this.stream;
    this.detach();
    clearTimeout(this.booting);
    this.booting = undefined;
    if (!stream || stream.destroyed) return;
    await new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      const port = stream as Partial<SerialPort>;
      if (typeof port.close === 'function' && port.isOpen) port.close(() => resolve());
      else stream.destroy();
    });
  }

  /** A silent controller (powered off, RS-232 cable pulled at the amp): input is ignored, nothing is sent. */
  setSilent(silent: boolean): void {
    this.silent = silent;
  }

  /**
   * Power cycle: the controller goes silent for `bootMs` (it ignores requests while booting), loses the mute of every
   * zone, then answers again and emits `booted`.
   */
  powerOn(bootMs: number): void {
    clearTimeout(this.booting);
    this.silent = true;
    for (const zone of this.zones.values()) zone.muted = false;
    this.booting = setTimeout(() => {
      this.booting = undefined;
      this.silent = false;
      this.emit('booted');
    }, bootMs);
  }

  /** Unsolicited bus traffic at this interval (0 stops it): keypad events, display feedback, foreign replies. */
  setChatter(intervalMs: number): void {
    this.chatterIntervalMs = intervalMs;
    clearInterval(this.chatterTimer);
    this.chatterTimer = undefined;
    if (intervalMs > 0 && this.stream) this.chatterTimer = setInterval(() => this.busTraffic(1), intervalMs);
  }

  /** Sends `count` frames of unsolicited bus traffic (see chatterFrame); keypad events are `keypad()` and `press()`. */
  busTraffic(count = 5): void {
    if (this.silent || !this.stream) return;
    for (let i = 0; i < count; i++) this.send(chatterFrame(this.chatterTurn++, this.controllers, (channel) => this.info(channel)));
  }

  /** A copy of one zone's state (channel = controller*10 + zone). */
  state(channel: number): EmulatedZone {
    return { ...this.zone(channel) };
  }

  /**
   * Someone at a wall keypad changes a zone. The change is applied, then the keypad's event is heard on the bus (a
   * mute change as the mute key, anything else as a generic key), unless `announce` is false: then only a poll finds
   * it. A volume change un-mutes, as on the real controller.
   */
  keypad(channel: number, change: Partial<EmulatedZone>, announce = true): void {
    const zone = this.zone(channel);
    const muteBefore = zone.muted;
    const { muted, ...rest } = change;
    Object.assign(zone, rest);
    if (rest.volume !== undefined) zone.muted = false;
    if (rest.power === false) zone.muted = false;
    if (muted !== undefined) zone.muted = muted;
    if (!announce) return;
    if (Object.keys(rest).length > 0) this.send(keypadKeyFrame(channel, KEY.plus));
    if (zone.muted !== muteBefore) this.send(keypadMuteFrame(channel));
  }

  /** A key pressed on a wall keypad, with its usual effect; the key's event is heard on the bus. */
  press(channel: number, key: 'volume-up' | 'volume-down' | 'power' | 'mute'): void {
    const zone = this.zone(channel);
    if (key === 'mute') {
      zone.muted = !zone.muted;
      this.send(keypadMuteFrame(channel));
      return;
    }
    if (key === 'power') {
      zone.power = !zone.power;
      if (!zone.power) zone.muted = false;
    } else if (zone.power) {
      zone.volume = Math.min(VOLUME_STEPS, Math.max(0, zone.volume + (key === 'volume-up' ? 1 : -1)));
      zone.muted = false;
    }
    const code = key === 'power' ? KEY.power : key === 'volume-up' ? KEY.volumeUp : KEY.volumeDown;
    this.send(keypadKeyFrame(channel, code));
  }

  /** The next `count` events from the host are lost on the way in (garbled beyond their checksum): recorded as `lost`. */
  loseNext(count = 1): void {
    this.toLose += count;
  }

  /** Writes raw bytes to the host as if the line picked up noise. */
  injectNoise(bytes: Buffer): void {
    this.output.write(bytes.toString('latin1'), false);
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

  private zone(channel: number): EmulatedZone {
    const zone = this.zones.get(channel);
    if (!zone) throw new RangeError(`no zone ${channel}: channels are controller*10 + zone, 11..16 up to 61..66`);
    return zone;
  }

  private info(channel: number): ZoneInfo {
    const zone = this.zone(channel);
    return {
      controller: controllerOf(channel),
      zone: zoneOf(channel),
      power: zone.power,
      source: zone.source,
      volume: zone.volume,
      bass: 10,
      treble: 10,
      loudness: false,
      balance: 10,
      systemOn: [...this.zones.values()].some((z) => z.power),
      sharedSource: false,
      party: 0,
      dnd: false,
    };
  }

  private detach(): void {
    clearInterval(this.chatterTimer);
    this.chatterTimer = undefined;
    this.output.attach(undefined);
    this.stream?.off('data', this.onData);
    this.stream = undefined;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.silent) return;
    for (const byte of chunk) {
      // Keep the bytes of the frame being received, for the byte-exact record.
      if (byte === 0xf0) this.rawFrame = [];
      this.rawFrame.push(byte);
      for (const frame of this.parser.push([byte])) {
        this.frames.push(Buffer.from(this.rawFrame));
        this.run(frame);
      }
    }
  };

  private run(frame: Frame): void {
    if (this.checkChecksums && !frame.checksumOk) return this.done('bad-checksum');
    const request = decodeZoneInfoRequest(frame);
    if (request) {
      if (request.controller > this.controllers || request.zone > ZONES_PER_CONTROLLER) return this.done(`info ${request.controller}${request.zone}`);
      const info = this.info(channelOf(request.controller, request.zone));
      if (this.trafficBeforeReplies) {
        this.send(chatterFrame(0, 1, () => info));
        this.send(encodeZoneInfoReply({ ...info, power: !info.power, volume: 49, source: info.source === 6 ? 5 : 6 }, { ...frame.source, keypad: 0x71 }));
      }
      this.send(encodeZoneInfoReply(info, frame.source));
      return this.done(`info ${request.controller}${request.zone}`);
    }
    const event = decodeEvent(frame);
    if (event && this.toLose > 0) {
      this.toLose--;
      return this.done('lost');
    }
    if (event) return this.done(this.apply(frame, event.id, event.timestamp, event.data));
    this.done(`other ${this.frames.at(-1)!.toString('hex')}`);
  }

  /** Applies one event; returns its description for the command log. */
  private apply(frame: Frame, id: number, timestamp: number, data: number): string {
    const controller = frame.target.controller + 1;
    if (id === EVENT.allZonesOnOff && (frame.target.controller === 0x7e || frame.target.controller === 0x7f)) {
      for (const [channel, zone] of this.zones) {
        if (controllerOf(channel) > this.controllers) continue;
        zone.power = data === 1;
        if (!zone.power) zone.muted = false;
      }
      return `all ${data === 1 ? 'on' : 'off'}`;
    }
    if (controller > this.controllers) return `absent ${controller}`;
    // On/off and volume carry the zone in the data field; source select and keys in the source-zone byte.
    const byData = id === EVENT.zoneOnOff || id === EVENT.volume;
    const zoneIndex = (byData ? data : frame.source.zone) + 1;
    if (zoneIndex > ZONES_PER_CONTROLLER) return `bad-zone ${controller}${zoneIndex}`;
    const channel = channelOf(controller, zoneIndex);
    const zone = this.zone(channel);
    const off = !zone.power && this.ignoreWhileOff;
    switch (id) {
      case EVENT.zoneOnOff:
        zone.power = timestamp === 1;
        if (!zone.power) zone.muted = false;
        return `power ${channel} ${zone.power ? 'on' : 'off'}`;
      case EVENT.selectSource:
        if (!off && data < SOURCE_COUNT) zone.source = data + 1;
        return `source ${channel} ${data + 1}`;
      case EVENT.volume:
        if (!off && timestamp <= VOLUME_STEPS) {
          zone.volume = timestamp;
          zone.muted = false;
        }
        return `volume ${channel} ${timestamp}`;
      case EVENT.remoteKey:
        if (data !== KEY_MUTE) return `key ${channel} ${data}`;
        if (!off) zone.muted = !zone.muted;
        return `mute ${channel}`;
      default:
        return `event ${channel} ${id.toString(16)}`;
    }
  }

  private done(command: string): void {
    this.commands.push(command);
    this.emit('command', command);
  }

  private send(frame: Buffer): void {
    this.output.write(frame.toString('latin1'));
  }
}

/** Standalone: `node --import tsx drivers/rnet/emulator.ts --path /tmp/ttyEMU [--controllers 1] [--boot-ms 0] [--chatter-ms 0]`. */
async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const path = arg('--path');
  if (!path) {
    process.stderr.write(
      'usage: emulator.ts --path <pty> [--controllers 1..6] [--byte-delay-ms 0.52] [--boot-ms N] [--chatter-ms N]\n' +
        'make a pty pair first: socat -d -d pty,raw,echo=0,link=/tmp/ttyAMP pty,raw,echo=0,link=/tmp/ttyEMU\n' +
        'then point the driver at /tmp/ttyAMP and this emulator at /tmp/ttyEMU\n',
    );
    process.exitCode = 2;
    return;
  }
  const emulator = new RnetEmulator({
    controllers: Number(arg('--controllers') ?? 1),
    byteDelayMs: Number(arg('--byte-delay-ms') ?? 0.52),
    bootMs: Number(arg('--boot-ms') ?? 0),
    chatterIntervalMs: Number(arg('--chatter-ms') ?? 0),
  });
  emulator.on('command', (command: string) => process.stderr.write(`emulator: ${command}\n`));
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
  process.stderr.write(`emulator: ${emulator.controllers} controller(s) on ${path}\n`);
  const shutdown = (): void => void emulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main(process.argv.slice(2));
