// Xantech MRC88 / MRAUDIO8x8 / MX88 RS-232 codec: pure encode/decode and framing, no I/O, no timers.
import type { SoundDescription } from '../driver.js';

export const VOLUME_STEPS = 38;
export const SOURCE_COUNT = 8;
/** One amplifier has 8 zones; two linked in expanded mode answer as one with zones 1..16. */
export const ZONE_COUNTS = [8, 16] as const;
export type ZoneCount = (typeof ZONE_COUNTS)[number];
export const MAX_ZONES = 16;

/**
 * Models and their factory serial settings. 9600 8N1 is the documented default (MRC88, HD44/HD88 manuals); the
 * MRC88m and MX88 family ship faster, per one integration's per-model overrides. The baud rate stays an option.
 */
export const XANTECH_MODELS = {
  mrc88: { baudRate: 9600 },
  mraudio8x8: { baudRate: 9600 },
  cm8x8: { baudRate: 9600 },
  mrc88m: { baudRate: 19200 },
  mx88: { baudRate: 57600 },
  mx88a: { baudRate: 57600 },
  mx88ai: { baudRate: 57600 },
} as const;
export type XantechModel = keyof typeof XANTECH_MODELS;

/** One `#1ZS ...+` zone report: the reply to `?1ZD+` and what zone-activity mode sends unasked. */
export interface ZoneStatus {
  /** 1..16 */
  zone: number;
  power: boolean;
  /** 1..8 */
  source: number;
  /** 0..38, 38 = 0 dB */
  volume: number;
  mute: boolean;
  /** 0..14, 7 flat */
  treble: number;
  /** 0..14, 7 flat */
  bass: number;
  /** 0..63, 31/32 centre */
  balance: number;
  /** LS: the zone is linked to another keypad. */
  linked: boolean;
  /** PS: the zone is being paged. */
  paged: boolean;
}

/** Settable attributes and the values the amplifier takes. */
export const SET_RANGES = {
  PR: [0, 1],
  SS: [1, SOURCE_COUNT],
  VO: [0, VOLUME_STEPS],
  MU: [0, 1],
  TR: [0, 14],
  BS: [0, 14],
  BA: [0, 63],
} as const;
export type SetAttribute = keyof typeof SET_RANGES;

/**
 * Tone and status as the protocol carries them: treble and bass 0..14 (7 flat); balance 0..63, where the documents
 * give 31/32 as centre: 32 is taken as centre (the zone report's own example), so full left is 32 steps away and full
 * right 31. PS (paged) in the zone report is the paging flag.
 */
export const XANTECH_SOUND: SoundDescription = {
  controls: {
    bass: { down: 7, up: 7 },
    treble: { down: 7, up: 7 },
    balance: { down: 32, up: 31 },
    loudness: { absent: 'the Xantech protocol has no loudness command' },
  },
  flags: {
    paging: true,
    doNotDisturb: { absent: 'the Xantech protocol reports no do-not-disturb' },
    party: { absent: 'the Xantech protocol reports no party mode' },
  },
};
/** Single-value queries (`?4VO+` → `?4VO20+`) plus `ZD`, the zone details. */
export type QueryAttribute = SetAttribute | 'ZD';
/** Relative commands without a value: toggles and one-step changes. */
export const STEP_ACTIONS = ['PT', 'MT', 'VI', 'VD', 'BI', 'BD', 'TI', 'TD', 'BL', 'BR'] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

export function isZone(zone: number, zones: number = MAX_ZONES): boolean {
  return Number.isInteger(zone) && zone >= 1 && zone <= zones;
}

/**
 * `!1VO20+`. Values go out without zero padding, as in the manufacturer's table (`!{z}VO{v}+`); one integration
 * pads to two digits (`!1VO05+`) and the emulator takes both. No CR follows the `+`: the manual needs none, and a
 * CR only costs a byte on the wire.
 */
export function encodeSet(zone: number, attribute: SetAttribute, value: number): string {
  return `!${zone}${attribute}${value}+`;
}

/** `?1ZD+` for the zone details, `?1VO+` for one value. */
export function encodeQuery(zone: number, attribute: QueryAttribute = 'ZD'): string {
  return `?${zone}${attribute}+`;
}

/** `!ZA1+`: the amplifier reports a zone by itself once activity on it stops (a keypad, a front panel, us). */
export function encodeActivityUpdates(on: boolean): string {
  return `!ZA${on ? 1 : 0}+`;
}

/** `#1ZS PR0 SS1 VO0 MU1 TR7 BS7 BA32 LS0 PS0+` (the line end, if any, is the emulator's choice). */
export function encodeStatus(s: ZoneStatus): string {
  const b = (v: boolean): number => (v ? 1 : 0);
  return (
    `#${s.zone}ZS PR${b(s.power)} SS${s.source} VO${s.volume} MU${b(s.mute)} ` +
    `TR${s.treble} BS${s.bass} BA${s.balance} LS${b(s.linked)} PS${b(s.paged)}+`
  );
}

/** `?4VO20+`: a single-value reply echoes the query with the value appended. */
export function encodeValue(zone: number, attribute: SetAttribute, value: number): string {
  return `?${zone}${attribute}${value}+`;
}

export function attributeValue(s: ZoneStatus, attribute: SetAttribute): number {
  switch (attribute) {
    case 'PR':
      return s.power ? 1 : 0;
    case 'SS':
      return s.source;
    case 'VO':
      return s.volume;
    case 'MU':
      return s.mute ? 1 : 0;
    case 'TR':
      return s.treble;
    case 'BS':
      return s.bass;
    case 'BA':
      return s.balance;
  }
}

const inRange = (attribute: SetAttribute, value: number): boolean =>
  value >= SET_RANGES[attribute][0] && value <= SET_RANGES[attribute][1];

const STATUS_HEAD = /^#(\d{1,2})ZS((?:\s+[A-Z]{2}\d{1,2})+)\s*\+?$/;

/**
 * Decodes a zone report; anything that does not match in full, or carries impossible values, is undefined.
 * Power comes as PR in the Xantech regexes and as PO in another integration's field list and on the Monoprice 31028
 * look-alike: both are taken. Fields other than power, source, volume and mute may be missing (look-alikes send
 * fewer); unknown fields (IS, DT) are ignored.
 */
export function decodeStatus(text: string): ZoneStatus | undefined {
  const m = STATUS_HEAD.exec(text);
  if (!m) return undefined;
  const fields = new Map<string, number>();
  for (const token of m[2]!.trim().split(/\s+/)) {
    const key = token.slice(0, 2);
    if (fields.has(key)) return undefined;
    fields.set(key, Number(token.slice(2)));
  }
  const power = fields.get('PR') ?? fields.get('PO');
  const source = fields.get('SS');
  const volume = fields.get('VO');
  const mute = fields.get('MU');
  if (power === undefined || source === undefined || volume === undefined || mute === undefined) return undefined;
  const status: ZoneStatus = {
    zone: Number(m[1]),
    power: power === 1,
    source,
    volume,
    mute: mute === 1,
    treble: fields.get('TR') ?? 7,
    bass: fields.get('BS') ?? 7,
    balance: fields.get('BA') ?? 32,
    linked: fields.get('LS') === 1,
    paged: fields.get('PS') === 1,
  };
  const flags = [power, mute, fields.get('LS') ?? 0, fields.get('PS') ?? 0];
  const sane =
    isZone(status.zone) &&
    flags.every((f) => f <= 1) &&
    (['SS', 'VO', 'TR', 'BS', 'BA'] as const).every((a) => inRange(a, attributeValue(status, a)));
  return sane ? status : undefined;
}

/** What the amplifier sent, one frame at a time. `text` is anything else: an echo, noise, a reply we do not use. */
export type Frame =
  | { kind: 'ok' }
  | { kind: 'error' }
  | { kind: 'status'; status: ZoneStatus }
  | { kind: 'value'; zone: number; attribute: SetAttribute; value: number }
  | { kind: 'text'; text: string };

const VALUE_REPLY = /^\?(\d{1,2})(PR|SS|VO|MU|TR|BS|BA)(\d{1,2})\+?$/;

export function classify(raw: string): Frame {
  const text = raw.trim();
  if (text.endsWith('ERROR')) return { kind: 'error' };
  if (text.endsWith('OK')) return { kind: 'ok' };
  const status = decodeStatus(text);
  if (status) return { kind: 'status', status };
  const m = VALUE_REPLY.exec(text);
  if (m) {
    const attribute = m[2] as SetAttribute;
    const value = Number(m[3]);
    if (isZone(Number(m[1])) && inRange(attribute, value))
      return { kind: 'value', zone: Number(m[1]), attribute, value };
  }
  return { kind: 'text', text };
}

/** Longest partial frame kept: a run of noise without a terminator is dropped rather than hoarded. */
const MAX_PENDING = 256;

/**
 * Streaming framer for the amplifier's output. A frame ends at `+`, CR or LF (replies end `+`, `+\r` or `\r` across
 * the manuals and integrations), and `OK`/`ERROR` end one by themselves, so a missing line end costs nothing. A `#`,
 * `?` or `!` starts a new frame: noise before a report is cut off as its own text frame instead of spoiling it.
 */
export class Framer {
  private pending = '';

  push(chunk: Buffer | string): Frame[] {
    // latin1 maps every byte to one char: garbage never throws and never merges into multi-byte chars.
    const text = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    const frames: Frame[] = [];
    for (const c of text) {
      if (c === '+' || c === '\r' || c === '\n') {
        this.flush(frames);
      } else if (c === '#' || c === '?' || c === '!') {
        this.flush(frames);
        this.pending = c;
      } else {
        this.pending += c;
        if (this.pending.endsWith('OK') || this.pending.endsWith('ERROR')) this.flush(frames);
        else if (this.pending.length > MAX_PENDING) this.pending = this.pending.slice(-MAX_PENDING);
      }
    }
    return frames;
  }

  /** Forgets a partial frame (after a reconnect). */
  reset(): void {
    this.pending = '';
  }

  /** Bytes received since the last frame ended (diagnostics). */
  get buffered(): string {
    return this.pending;
  }

  private flush(frames: Frame[]): void {
    if (this.pending.trim() !== '') frames.push(classify(this.pending));
    this.pending = '';
  }
}

/** A command as the amplifier parses it (the emulator's view of what the host sent). */
export type Command =
  | { kind: 'set'; zone: number; attribute: SetAttribute; value: number }
  | { kind: 'step'; zone: number; action: StepAction }
  | { kind: 'all'; power: boolean }
  | { kind: 'activity'; on: boolean }
  | { kind: 'periodic'; seconds: number }
  | { kind: 'query'; zone: number; attribute: QueryAttribute };

/**
 * Parses one command without its `+`; undefined means `ERROR`. Letters may be lower case. Forms taken where the
 * sources disagree: `!AO+` (manual) and `!A0+` (an integration) for all off; `!{z}BL{n}+` (an integration's balance
 * set) besides `!{z}BA{n}+` (manual); `?{z}ZS+` (another integration) as `?{z}ZD+`; values with or without padding.
 */
export function parseCommand(raw: string): Command | undefined {
  const text = raw.trim().toUpperCase();
  let m = /^!(\d{1,2})(PR|SS|VO|MU|TR|BS|BA|BL)(\d{1,2})$/.exec(text);
  if (m) {
    const attribute = (m[2] === 'BL' ? 'BA' : m[2]) as SetAttribute;
    return { kind: 'set', zone: Number(m[1]), attribute, value: Number(m[3]) };
  }
  m = /^!(\d{1,2})([A-Z]{2})$/.exec(text);
  if (m && (STEP_ACTIONS as readonly string[]).includes(m[2]!)) {
    return { kind: 'step', zone: Number(m[1]), action: m[2] as StepAction };
  }
  if (text === '!AO' || text === '!A0') return { kind: 'all', power: false };
  if (text === '!AA') return { kind: 'all', power: true };
  m = /^!ZA([01])$/.exec(text);
  if (m) return { kind: 'activity', on: m[1] === '1' };
  m = /^!ZP(\d{1,3})$/.exec(text);
  if (m) return { kind: 'periodic', seconds: Number(m[1]) };
  m = /^\?(\d{1,2})(ZD|ZS|PR|SS|VO|MU|TR|BS|BA)$/.exec(text);
  if (m) return { kind: 'query', zone: Number(m[1]), attribute: (m[2] === 'ZS' ? 'ZD' : m[2]) as QueryAttribute };
  return undefined;
}

/** Whether a set value is one the amplifier takes (it answers `ERROR` to anything else). */
export function acceptsValue(attribute: SetAttribute, value: number): boolean {
  return inRange(attribute, value);
}
