// The controller side of Russound RNET, byte for byte, with fault switches and bus traffic for tests and demos.
import { isMain, runEmulatorCli } from '../emulator-cli.js';
import { EmulatorPort, type OutputOptions } from '../emulator-port.js';
import { chatterFrame, keypadKeyFrame, keypadMuteFrame } from './emulator-bus.js';
import {
  channelOf,
  controllerOf,
  decodeEvent,
  decodeParameter,
  decodeZoneInfoRequest,
  EVENT,
  encodeZoneInfoReply,
  type Frame,
  FrameParser,
  KEY,
  KEY_MUTE,
  MAX_CONTROLLERS,
  PARAMETER,
  SOURCE_COUNT,
  TONE_STEPS,
  VOLUME_STEPS,
  ZONES_PER_CONTROLLER,
  type ZoneInfo,
  zoneOf,
} from './protocol.js';

export interface EmulatorOptions extends OutputOptions {
  /** Controllers on the bus, 1..6. Default 1. */
  controllers?: number;
  /** Source, volume, mute and parameter (tone) sets to a zone that is off are ignored. Default true. */
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
  /** Every frame sent carries a checksum one off the documented formula, as one document example does. Default false. */
  wrongChecksums?: boolean;
}

/**
 * What the zone holds, including the mute RNET never reports. Source 1..6, volume 0..50, bass, treble and balance
 * 0..20 (10 flat / centre), party mode 0..2.
 */
export interface EmulatedZone {
  power: boolean;
  source: number;
  volume: number;
  muted: boolean;
  bass: number;
  treble: number;
  balance: number;
  loudness: boolean;
  doNotDisturb: boolean;
  party: number;
}

const PARAMETER_NAMES = new Map<number, string>(Object.entries(PARAMETER).map(([name, id]) => [id, name]));

/**
 * Events: `command` (a description of each message received, after the state changed), `booted`, `close`.
 * Commands are recorded as `info 11`, `power 11 on`, `source 11 3`, `volume 11 25`, `mute 11`, `all on`,
 * `bass 11 12` (and treble, balance, loudness, doNotDisturb, party: a parameter set), `bad-checksum`, or `other <hex>`.
 */
export class RnetEmulator extends EmulatorPort {
  /** Every frame received, as the bytes arrived (F0..F7). */
  readonly frames: Buffer[] = [];
  controllers: number;
  ignoreWhileOff: boolean;
  checkChecksums: boolean;
  trafficBeforeReplies: boolean;
  wrongChecksums: boolean;
  private toLose = 0;
  private chatterIntervalMs: number;
  private chatterTimer: unknown;
  private chatterTurn = 0;
  private readonly zones = new Map<number, EmulatedZone>();
  private readonly parser = new FrameParser();
  private rawFrame: number[] = [];

  constructor(options: EmulatorOptions = {}) {
    super(options, 19200);
    this.controllers = options.controllers ?? 1;
    this.ignoreWhileOff = options.ignoreWhileOff ?? true;
    this.checkChecksums = options.checkChecksums ?? true;
    this.trafficBeforeReplies = options.trafficBeforeReplies ?? false;
    this.wrongChecksums = options.wrongChecksums ?? false;
    this.chatterIntervalMs = options.chatterIntervalMs ?? 0;
    for (let c = 1; c <= MAX_CONTROLLERS; c++) {
      for (let z = 1; z <= ZONES_PER_CONTROLLER; z++) {
        const flat = TONE_STEPS / 2;
        this.zones.set(channelOf(c, z), {
          power: false,
          source: 1,
          volume: 20,
          muted: false,
          bass: flat,
          treble: flat,
          balance: flat,
          loudness: false,
          doNotDisturb: false,
          party: 0,
        });
      }
    }
  }

  protected attached(): void {
    this.parser.reset();
    this.rawFrame = [];
    this.setChatter(this.chatterIntervalMs);
  }

  protected override detached(): void {
    this.clock.clearTimeout(this.chatterTimer);
    this.chatterTimer = undefined;
  }

  /**
   * Power cycle: the controller goes silent for `bootMs` (it ignores requests while booting), loses the mute of every
   * zone, then answers again and emits `booted`.
   */
  powerOn(bootMs: number): void {
    for (const zone of this.zones.values()) zone.muted = false;
    this.boot(bootMs);
  }

  /** Unsolicited bus traffic at this interval (0 stops it): keypad events, display feedback, foreign replies. */
  setChatter(intervalMs: number): void {
    this.chatterIntervalMs = intervalMs;
    this.clock.clearTimeout(this.chatterTimer);
    this.chatterTimer = undefined;
    if (intervalMs > 0 && this.stream) this.chatter();
  }

  private chatter(): void {
    this.chatterTimer = this.clock.setTimeout(() => {
      this.busTraffic(1);
      this.chatter();
    }, this.chatterIntervalMs);
  }

  /** Sends `count` frames of unsolicited bus traffic (see chatterFrame); keypad events are `keypad()` and `press()`. */
  busTraffic(count = 5): void {
    if (this.silent || !this.stream) return;
    for (let i = 0; i < count; i++)
      this.send(chatterFrame(this.chatterTurn++, this.controllers, (channel) => this.info(channel)));
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
      bass: zone.bass,
      treble: zone.treble,
      loudness: zone.loudness,
      balance: zone.balance,
      systemOn: [...this.zones.values()].some((z) => z.power),
      sharedSource: false,
      party: zone.party,
      dnd: zone.doNotDisturb,
    };
  }

  protected receive(chunk: Buffer): void {
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
  }

  private run(frame: Frame): void {
    if (this.checkChecksums && !frame.checksumOk) return this.done('bad-checksum');
    const request = decodeZoneInfoRequest(frame);
    if (request) {
      if (request.controller > this.controllers || request.zone > ZONES_PER_CONTROLLER)
        return this.done(`info ${request.controller}${request.zone}`);
      const info = this.info(channelOf(request.controller, request.zone));
      if (this.trafficBeforeReplies) {
        this.send(chatterFrame(0, 1, () => info));
        this.send(
          encodeZoneInfoReply(
            { ...info, power: !info.power, volume: 49, source: info.source === 6 ? 5 : 6 },
            { ...frame.source, keypad: 0x71 },
          ),
        );
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
    const parameter = decodeParameter(frame);
    if (parameter)
      return this.done(this.setParameter(parameter.controller, parameter.zone, parameter.parameter, parameter.value));
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

  /** Applies one parameter set (Set Data); returns its description for the command log. */
  private setParameter(controller: number, zoneIndex: number, parameter: number, value: number): string {
    if (controller > this.controllers) return `absent ${controller}`;
    if (zoneIndex > ZONES_PER_CONTROLLER) return `bad-zone ${controller}${zoneIndex}`;
    const channel = channelOf(controller, zoneIndex);
    const zone = this.zone(channel);
    const name = PARAMETER_NAMES.get(parameter);
    if (!name) return `parameter ${channel} ${parameter} ${value}`;
    if (zone.power || !this.ignoreWhileOff) {
      switch (parameter) {
        case PARAMETER.bass:
          if (value <= TONE_STEPS) zone.bass = value;
          break;
        case PARAMETER.treble:
          if (value <= TONE_STEPS) zone.treble = value;
          break;
        case PARAMETER.balance:
          if (value <= TONE_STEPS) zone.balance = value;
          break;
        case PARAMETER.loudness:
          if (value <= 1) zone.loudness = value === 1;
          break;
        case PARAMETER.doNotDisturb:
          if (value <= 1) zone.doNotDisturb = value === 1;
          break;
        case PARAMETER.party:
          if (value <= 2) zone.party = value;
          break;
      }
    }
    return `${name} ${channel} ${value}`;
  }

  private send(frame: Buffer): void {
    const sent = Buffer.from(frame);
    if (this.wrongChecksums) sent[sent.length - 2] = (sent[sent.length - 2]! + 1) & 0x7f;
    this.output.write(sent.toString('latin1'));
  }
}

/** Standalone: `node --import tsx drivers/rnet/emulator.ts --path /tmp/ttyEMU [--controllers 1] [--boot-ms 0] [--chatter-ms 0]`. */
if (isMain(import.meta.url)) {
  void runEmulatorCli(process.argv.slice(2), {
    usage: 'emulator.ts --path <pty> [--controllers 1..6] [--byte-delay-ms 0.52] [--boot-ms N] [--chatter-ms N]',
    build: (arg) =>
      new RnetEmulator({
        controllers: Number(arg('--controllers') ?? 1),
        byteDelayMs: Number(arg('--byte-delay-ms') ?? 0.52),
        bootMs: Number(arg('--boot-ms') ?? 0),
        chatterIntervalMs: Number(arg('--chatter-ms') ?? 0),
      }),
    banner: (emulator, path) => `${emulator.controllers} controller(s) on ${path}`,
  });
}
