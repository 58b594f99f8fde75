// Russound RNET codec: F0..F7 framing with F1 escapes, the checksum, and the messages the driver and emulator use.
// Pure encode/decode: no I/O, no timers.
import type { SoundDescription } from '../driver.js';

export const START = 0xf0;
export const END = 0xf7;
export const ESCAPE = 0xf1;

/** Volume is 0..50 on the wire (keypads show 0..100 in steps of 2). */
export const VOLUME_STEPS = 50;
export const SOURCE_COUNT = 6;
export const ZONES_PER_CONTROLLER = 6;
export const MAX_CONTROLLERS = 6;

/**
 * Zone parameters set through Set Data (path `02 00 zz 00 PP`): bass, treble and balance 0..20 (10 flat / centre),
 * loudness 0/1. DND (06) and party (07) are settable too; azcd only reports them.
 */
export const PARAMETER = {
  bass: 0x00,
  treble: 0x01,
  loudness: 0x02,
  balance: 0x03,
  doNotDisturb: 0x06,
  party: 0x07,
} as const;
export const TONE_STEPS = 20;

/**
 * Tone and status as the zone info reply carries them: bass, treble, loudness, balance, party mode (0/1/2, reported
 * as on when not 0) and do-not-disturb. CAS44 and CAA66 have no party mode or DND: their zones report both off.
 */
export const RNET_SOUND: SoundDescription = {
  controls: {
    bass: { down: 10, up: 10 },
    treble: { down: 10, up: 10 },
    balance: { down: 10, up: 10 },
    loudness: true,
  },
  flags: { paging: { absent: 'RNET reports no paging' }, doNotDisturb: true, party: true },
};

/** Message types (byte 7). */
export const TYPE = { setData: 0x00, requestData: 0x01, handshake: 0x02, event: 0x05 } as const;

/** Event ids the driver sends or recognises. */
export const EVENT = {
  zoneOnOff: 0xdc,
  allZonesOnOff: 0xdd,
  selectSource: 0xc1,
  volume: 0xde,
  remoteKey: 0xbf,
} as const;
/** Remote key code carried by a 0xBF event: the only mute RNET has is this toggle. */
export const KEY_MUTE = 0x0d;
/** Keypad key events, sent as the event id itself (zone 1 Vol Up: `... 7F 00 00 00 00 00 01 7B F7`). */
export const KEY = { volumeUp: 0x7f, volumeDown: 0x80, power: 0x6c, source: 0x6b, plus: 0x69, minus: 0x6a } as const;

/**
 * The keypad id third-party controllers use: it needs no handshake (CAV firmware 1.02.02+). The documents disagree on
 * the handshake itself (CAV doc: type 02 body 02; RS-232 doc and aiorussound: 02 06); the driver sends neither. A
 * controller that still repeats an unacknowledged reply (for ~2.5 s) only repeats a frame nobody waits for any more,
 * and the link drops it.
 */
export const HOST_KEYPAD = 0x70;
/** Keypad id meaning "the controller itself". */
export const CONTROLLER_KEYPAD = 0x7f;

/** A device on the bus: controller and zone are 0-based on the wire. */
export interface DeviceId {
  controller: number;
  zone: number;
  keypad: number;
}

/** One message with escapes undone. `checksumOk` says whether the checksum byte matched the bytes as sent. */
export interface Frame {
  target: DeviceId;
  source: DeviceId;
  type: number;
  /** Everything after the type byte, unescaped, without checksum and end marker. */
  body: Buffer;
  checksumOk: boolean;
}

/** The state one "all zone info" reply carries. Source is 1-based here; volume 0..50. */
export interface ZoneInfo {
  /** 1-based controller and zone. */
  controller: number;
  zone: number;
  power: boolean;
  source: number;
  volume: number;
  bass: number;
  treble: number;
  loudness: boolean;
  balance: number;
  systemOn: boolean;
  sharedSource: boolean;
  party: number;
  dnd: boolean;
}

// ---- framing ---------------------------------------------------------------------------------------------------

/** (sum of the bytes as sent, F0 and F1 escapes included) + their count, low seven bits. */
export function checksum(sent: ArrayLike<number>, length = sent.length): number {
  let sum = 0;
  for (let i = 0; i < length; i++) sum += sent[i]!;
  return (sum + length) & 0x7f;
}

/** Every byte above 0x7F goes out as F1 followed by its inverse (0xDC → F1 23, 0x80 → F1 7F). */
export function escapeBytes(content: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < content.length; i++) {
    const byte = content[i]! & 0xff;
    if (byte > 0x7f) out.push(ESCAPE, ~byte & 0x7f);
    else out.push(byte);
  }
  return out;
}

const idBytes = (id: DeviceId): number[] => [id.controller, id.zone, id.keypad];

/** A whole frame: F0, target, source, type and body escaped, checksum, F7. */
export function encodeFrame(target: DeviceId, source: DeviceId, type: number, body: ArrayLike<number>): Buffer {
  const sent = [START, ...escapeBytes([...idBytes(target), ...idBytes(source), type, ...Array.from(body)])];
  return Buffer.from([...sent, checksum(sent), END]);
}

/** Longest frame kept while waiting for F7 (display text frames are the longest real ones, well under this). */
const MAX_FRAME = 512;
/** Target, source and type: anything shorter between F0 and F7 is noise. */
const HEADER = 7;

/** Bytes kept between frames in case they are a frame whose F0 was lost: the longest reply (34 bytes) fits. */
const MAX_ORPHANS = 64;

/**
 * Streaming parser: feed chunks as they arrive, get whole frames back. An F0 inside a frame starts a new one (the
 * old one lost its end to noise); a frame too long or too short is dropped. An F1 at the end of a chunk is
 * remembered, so escapes split across chunks decode. Bytes outside F0..F7 are dropped (counted in `dropped`), except
 * that controllers at times send a message without its F0 (laf commit 2ec1244): bytes ending in F7 outside a frame
 * are taken as one when, with F0 put back, their checksum is right. Never throws.
 */
export class FrameParser {
  /** Bytes thrown away as noise since construction (diagnostics). */
  dropped = 0;
  private raw: number[] | undefined;
  private orphans: number[] = [];

  push(chunk: ArrayLike<number>): Frame[] {
    const frames: Frame[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]! & 0xff;
      if (byte === START) {
        if (this.raw) this.dropped += this.raw.length;
        this.dropped += this.orphans.length;
        this.orphans = [];
        this.raw = [byte];
      } else if (!this.raw) {
        this.orphan(byte, frames);
      } else if (byte === END) {
        const frame = decodeRaw(this.raw);
        if (frame) frames.push(frame);
        else this.dropped += this.raw.length + 1;
        this.raw = undefined;
      } else if (this.raw.length >= MAX_FRAME) {
        this.dropped += this.raw.length + 1;
        this.raw = undefined;
      } else {
        this.raw.push(byte);
      }
    }
    return frames;
  }

  /** Forgets a partial frame (after a reconnect). */
  reset(): void {
    this.raw = undefined;
    this.orphans = [];
  }

  private orphan(byte: number, frames: Frame[]): void {
    if (byte !== END) {
      this.orphans.push(byte);
      if (this.orphans.length > MAX_ORPHANS) {
        this.orphans.shift();
        this.dropped++;
      }
      return;
    }
    const frame = this.orphans.length > HEADER ? decodeRaw([START, ...this.orphans]) : undefined;
    if (frame?.checksumOk) frames.push(frame);
    else this.dropped += this.orphans.length + 1;
    this.orphans = [];
  }
}

/** `raw` is F0 through the checksum byte, as received. */
function decodeRaw(raw: number[]): Frame | undefined {
  const sentLength = raw.length - 1;
  if (raw[sentLength]! > 0x7f) return undefined; // a checksum has seven bits: this is an escape that lost its byte
  const content: number[] = [];
  for (let i = 1; i < sentLength; i++) {
    const byte = raw[i]!;
    if (byte === ESCAPE) {
      if (i + 1 >= sentLength) return undefined; // an escape with nothing after it
      content.push(~raw[++i]! & 0xff);
    } else {
      content.push(byte);
    }
  }
  if (content.length < HEADER) return undefined;
  const id = (at: number): DeviceId => ({ controller: content[at]!, zone: content[at + 1]!, keypad: content[at + 2]! });
  return {
    target: id(0),
    source: id(3),
    type: content[6]!,
    body: Buffer.from(content.slice(HEADER)),
    checksumOk: checksum(raw, sentLength) === raw[sentLength],
  };
}

// ---- message bodies --------------------------------------------------------------------------------------------

/** A body split into its target path, source path and what follows; undefined when the lengths do not fit. */
export interface Paths {
  targetPath: number[];
  sourcePath: number[];
  rest: Buffer;
}

export function splitPaths(body: Buffer): Paths | undefined {
  const targetCount = body[0];
  if (targetCount === undefined || body.length < 2 + targetCount) return undefined;
  const sourceCount = body[1 + targetCount]!;
  const restAt = 2 + targetCount + sourceCount;
  if (body.length < restAt) return undefined;
  return {
    targetPath: [...body.subarray(1, 1 + targetCount)],
    sourcePath: [...body.subarray(2 + targetCount, restAt)],
    rest: body.subarray(restAt),
  };
}

const path = (levels: number[]): number[] => [levels.length, ...levels];
const le16 = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff];

/** Event body: paths, then event id, timestamp, data (each 16-bit little-endian), then priority (01 = low). */
function eventBody(targetPath: number[], id: number, timestamp: number, data: number): number[] {
  return [...path(targetPath), ...path([]), ...le16(id), ...le16(timestamp), ...le16(data), 0x01];
}

export interface DecodedEvent {
  targetPath: number[];
  id: number;
  timestamp: number;
  data: number;
  priority: number;
}

export function decodeEvent(frame: Frame): DecodedEvent | undefined {
  if (frame.type !== TYPE.event) return undefined;
  const paths = splitPaths(frame.body);
  if (!paths || paths.rest.length < 7) return undefined;
  const r = paths.rest;
  return {
    targetPath: paths.targetPath,
    id: r[0]! | (r[1]! << 8),
    timestamp: r[2]! | (r[3]! << 8),
    data: r[4]! | (r[5]! << 8),
    priority: r[6]!,
  };
}

/** The controller, as a target: `cc 00 7F` (c is 1-based). */
export const controllerId = (controller: number): DeviceId => ({
  controller: controller - 1,
  zone: 0,
  keypad: CONTROLLER_KEYPAD,
});
/** Us, as a source: `00 zz 70`; the zone byte is only used by commands that carry the zone there. */
export const hostId = (zone = 0): DeviceId => ({ controller: 0, zone, keypad: HOST_KEYPAD });

/**
 * Zone on/off (event 0xDC): `F0 cc 00 7F 00 00 70 05 02 02 00 00 F1 23 00 ## 00 zz 00 01 xx F7`. On/off and volume
 * carry the zone in the data field with 00 in the source-zone byte, as the documents show; aiorussound's "MCA
 * compatibility" mode also puts the zone in the source-zone byte. This sends the documented form; the emulator reads
 * the data field and so accepts both.
 */
export function encodeZonePower(controller: number, zone: number, on: boolean): Buffer {
  return encodeFrame(
    controllerId(controller),
    hostId(),
    TYPE.event,
    eventBody([0x02, 0x00], EVENT.zoneOnOff, on ? 1 : 0, zone - 1),
  );
}

/** Source select (event 0xC1): the zone goes in the source-zone byte, path `02 00 00`, data = source−1. */
export function encodeSource(controller: number, zone: number, source: number): Buffer {
  return encodeFrame(
    controllerId(controller),
    hostId(zone - 1),
    TYPE.event,
    eventBody([0x00, 0x00], EVENT.selectSource, 0, source - 1),
  );
}

/** Volume (event 0xDE), 0..50. The controller also un-mutes the zone on a volume change. */
export function encodeVolume(controller: number, zone: number, volume: number): Buffer {
  return encodeFrame(
    controllerId(controller),
    hostId(),
    TYPE.event,
    eventBody([0x02, 0x00], EVENT.volume, volume, zone - 1),
  );
}

/** Mute toggle (remote key 0x0D as event 0xBF): there is no discrete mute and no mute status. */
export function encodeMuteToggle(controller: number, zone: number): Buffer {
  return encodeFrame(
    controllerId(controller),
    hostId(zone - 1),
    TYPE.event,
    eventBody([0x02, 0x00], EVENT.remoteKey, 0, KEY_MUTE),
  );
}

/**
 * Sets one zone parameter (Set Data, path 5 levels):
 * `F0 cc 00 7F 00 00 70 00 05 02 00 zz 00 PP 00 00 00 01 00 01 00 ## xx F7`.
 */
export function encodeParameter(controller: number, zone: number, parameter: number, value: number): Buffer {
  const body = [
    ...path([0x02, 0x00, zone - 1, 0x00, parameter]),
    ...path([]),
    ...le16(0),
    ...le16(1),
    ...le16(1),
    value,
  ];
  return encodeFrame(controllerId(controller), hostId(), TYPE.setData, body);
}

/** The emulator's view of a parameter set: 1-based controller and zone, the parameter and its value. */
export function decodeParameter(
  frame: Frame,
): { controller: number; zone: number; parameter: number; value: number } | undefined {
  if (frame.type !== TYPE.setData) return undefined;
  const paths = splitPaths(frame.body);
  if (
    paths?.targetPath.length !== 5 ||
    paths.targetPath[0] !== 0x02 ||
    paths.targetPath[1] !== 0x00 ||
    paths.targetPath[3] !== 0x00
  )
    return undefined;
  const r = paths.rest;
  if (r.length < 7 || (r[4]! | (r[5]! << 8)) !== 1) return undefined;
  return {
    controller: frame.target.controller + 1,
    zone: paths.targetPath[2]! + 1,
    parameter: paths.targetPath[4]!,
    value: r[6]!,
  };
}

/** A keypad key as an event from `from` (the emulator uses it for bus traffic from wall keypads). */
export function encodeKeypadKey(controller: number, from: DeviceId, key: number): Buffer {
  return encodeFrame(controllerId(controller), from, TYPE.event, eventBody([0x02, 0x00], key, 0, 0));
}

/**
 * All zones on/off (event 0xDD). The RS-232 v1.00.01 doc targets controller byte 7E, the CAV doc and laf 7F; this
 * sends 7E (the RS-232 doc is the newer one) and the emulator accepts both.
 */
export function encodeAllZones(on: boolean): Buffer {
  const target = { controller: 0x7e, zone: 0, keypad: CONTROLLER_KEYPAD };
  return encodeFrame(target, hostId(), TYPE.event, eventBody([0x02, 0x00], EVENT.allZonesOnOff, 0, on ? 1 : 0));
}

/** Request all zone info: `F0 cc 00 7F 00 00 70 01 04 02 00 zz 07 00 00 xx F7`. */
export function encodeZoneInfoRequest(controller: number, zone: number): Buffer {
  return encodeFrame(controllerId(controller), hostId(), TYPE.requestData, [
    ...path([0x02, 0x00, zone - 1, 0x07]),
    0x00,
    0x00,
  ]);
}

/** Path levels of "all zone info" for a 0-based zone: `02 00 zz 07`. */
const isZoneInfoPath = (levels: number[]): boolean =>
  levels.length === 4 && levels[0] === 0x02 && levels[1] === 0x00 && levels[3] === 0x07 && levels[2]! < 8;

/** The emulator's view of a zone info request: 1-based controller and zone, or undefined for other requests. */
export function decodeZoneInfoRequest(frame: Frame): { controller: number; zone: number } | undefined {
  if (frame.type !== TYPE.requestData) return undefined;
  const paths = splitPaths(frame.body);
  if (!paths || !isZoneInfoPath(paths.targetPath)) return undefined;
  return { controller: frame.target.controller + 1, zone: paths.targetPath[2]! + 1 };
}

/** The controller's Set Data reply (34 bytes) to the keypad that asked. */
export function encodeZoneInfoReply(info: ZoneInfo, to: DeviceId = hostId()): Buffer {
  const data = [
    info.power ? 1 : 0,
    info.source - 1,
    info.volume,
    info.bass,
    info.treble,
    info.loudness ? 1 : 0,
    info.balance,
    info.systemOn ? 1 : 0,
    info.sharedSource ? 1 : 0,
    info.party,
    info.dnd ? 1 : 0,
    0,
  ];
  const body = [
    ...path([]),
    ...path([0x02, 0x00, info.zone - 1, 0x07]),
    ...le16(0),
    ...le16(1),
    ...le16(data.length),
    ...data,
  ];
  return encodeFrame(to, controllerId(info.controller), TYPE.setData, body);
}

/**
 * Decodes a zone info reply addressed to us (target keypad 0x70); anything else, including the same reply addressed
 * to another keypad, gives undefined. Values out of range mean noise got in and also give undefined.
 */
export function decodeZoneInfoReply(frame: Frame): ZoneInfo | undefined {
  if (frame.type !== TYPE.setData || frame.target.keypad !== HOST_KEYPAD) return undefined;
  if (frame.source.controller >= MAX_CONTROLLERS) return undefined;
  const paths = splitPaths(frame.body);
  if (paths?.targetPath.length !== 0 || !isZoneInfoPath(paths.sourcePath)) return undefined;
  const r = paths.rest;
  // packet number (2), packet count (2), data length (2), data.
  if (r.length < 6) return undefined;
  const length = r[4]! | (r[5]! << 8);
  const d = r.subarray(6, 6 + length);
  if (length < 3 || d.length < length) return undefined;
  const at = (i: number): number => d[i] ?? 0;
  const info: ZoneInfo = {
    controller: frame.source.controller + 1,
    zone: paths.sourcePath[2]! + 1,
    power: at(0) === 1,
    source: at(1) + 1,
    volume: at(2),
    bass: at(3),
    treble: at(4),
    loudness: at(5) === 1,
    balance: at(6),
    systemOn: at(7) === 1,
    sharedSource: at(8) === 1,
    party: at(9),
    dnd: at(10) === 1,
  };
  const sane = at(0) <= 1 && info.source <= 8 && info.volume <= VOLUME_STEPS;
  return sane ? info : undefined;
}

/** What a frame from the bus is, from the host's point of view. */
export type Heard =
  | { kind: 'zone-info'; info: ZoneInfo }
  /** A wall keypad (or another controller) acted on a zone: 1-based controller and zone. */
  | { kind: 'keypad'; controller: number; zone: number; mute: boolean }
  /** Display feedback, handshakes, type 0x06, replies to other keypads, our own echo: nothing for the host. */
  | { kind: 'other' };

/**
 * Classifies a frame. Keypad events are events whose source is a zone keypad (not us, not a controller); their
 * source controller and zone name the zone acted on. A mute toggle (0xBF with key 0x0D) is flagged, as it is the only
 * way a mute change can be known.
 */
export function classify(frame: Frame): Heard {
  const info = decodeZoneInfoReply(frame);
  if (info) return { kind: 'zone-info', info };
  const { source } = frame;
  // Our own id and the controllers' (display feedback, replies) are not keypads; every other source id is.
  const fromKeypad = source.keypad !== HOST_KEYPAD && source.keypad !== CONTROLLER_KEYPAD;
  if (frame.type !== TYPE.event || !fromKeypad) return { kind: 'other' };
  if (source.controller >= MAX_CONTROLLERS || source.zone >= 8) return { kind: 'other' };
  const event = decodeEvent(frame);
  const mute = event !== undefined && event.id === EVENT.remoteKey && event.data === KEY_MUTE;
  return { kind: 'keypad', controller: source.controller + 1, zone: source.zone + 1, mute };
}

/** Channel numbering: controller*10 + zone (11..16 on controller 1, 21..26 on controller 2, ... 61..66). */
export const channelOf = (controller: number, zone: number): number => controller * 10 + zone;
export const controllerOf = (channel: number): number => Math.floor(channel / 10);
export const zoneOf = (channel: number): number => channel % 10;

export function isChannel(channel: number): boolean {
  const c = controllerOf(channel);
  const z = zoneOf(channel);
  return Number.isInteger(channel) && c >= 1 && c <= MAX_CONTROLLERS && z >= 1 && z <= ZONES_PER_CONTROLLER;
}

export function controllerChannels(controller: number): number[] {
  return Array.from({ length: ZONES_PER_CONTROLLER }, (_, i) => channelOf(controller, i + 1));
}
