// Monoprice MPR-6ZHMAUT / Dayton DAX66 RS-232 codec: pure encode/decode and line framing, no I/O, no timers.
import type { SoundDescription } from '../driver.js';

export const VOLUME_STEPS = 38;
export const SOURCE_COUNT = 6;
export const ZONES_PER_UNIT = 6;
export const MAX_UNITS = 3;

/** One decoded `>` status line: every field of a zone as the amplifier reports it. */
export interface ZoneStatus {
  /** Zone address xy (11..36). */
  zone: number;
  pa: boolean;
  power: boolean;
  mute: boolean;
  dnd: boolean;
  /** 0..38 */
  volume: number;
  /** 0..14, 7 flat */
  treble: number;
  /** 0..14, 7 flat */
  bass: number;
  /** 0..20, 10 centre */
  balance: number;
  /** 1..6 */
  source: number;
  /** LS: a keypad is connected (flaps constantly; never a state change). */
  keypad: boolean;
}

/** Writable attributes and the range the amplifier accepts for each. */
export const SET_RANGES = {
  PR: [0, 1],
  MU: [0, 1],
  DT: [0, 1],
  VO: [0, VOLUME_STEPS],
  TR: [0, 14],
  BS: [0, 14],
  BL: [0, 20],
  CH: [1, SOURCE_COUNT],
} as const;
export type SetAttribute = keyof typeof SET_RANGES;

/**
 * Tone and status as the protocol carries them: treble and bass 00..14 (07 flat), balance 00..20 (10 centre); PA
 * (paging, read-only) and DT (do not disturb) in the status line. DT can be set on the wire, but azcd only reports it.
 */
export const MONOPRICE_SOUND: SoundDescription = {
  controls: {
    bass: { down: 7, up: 7 },
    treble: { down: 7, up: 7 },
    balance: { down: 10, up: 10 },
    loudness: { absent: 'the Monoprice protocol has no loudness command' },
  },
  flags: { paging: true, doNotDisturb: true, party: { absent: 'the Monoprice protocol reports no party mode' } },
};
/** Attributes that can be queried one at a time (`?11VO`), including the read-only PA and LS. */
export type QueryAttribute = SetAttribute | 'PA' | 'LS';

const QUERY_ATTRIBUTES: readonly QueryAttribute[] = ['PA', 'PR', 'MU', 'DT', 'VO', 'TR', 'BS', 'BL', 'CH', 'LS'];
const STATUS_LINE = /^>(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/;
const ATTRIBUTE_LINE = /^>([1-3][1-6])(PA|PR|MU|DT|VO|TR|BS|BL|CH|LS)(\d\d)$/;
const COMMAND_ERROR = /^command error\.?$/i;

const pad2 = (n: number): string => String(n).padStart(2, '0');

export function isZoneAddress(zone: number): boolean {
  const unit = Math.floor(zone / 10);
  const index = zone % 10;
  return Number.isInteger(zone) && unit >= 1 && unit <= MAX_UNITS && index >= 1 && index <= ZONES_PER_UNIT;
}

export function unitOf(zone: number): number {
  return Math.floor(zone / 10);
}

/** The six zone addresses of a unit: 11..16 for unit 1. */
export function unitZones(unit: number): number[] {
  return Array.from({ length: ZONES_PER_UNIT }, (_, i) => unit * 10 + i + 1);
}

/** `<11VO20\r`. The value must already be in range: the amplifier silently ignores anything else. */
export function encodeSet(zone: number, attribute: SetAttribute, value: number): string {
  return `<${zone}${attribute}${pad2(value)}\r`;
}

/** `?11\r` for one zone, `?10\r` for all six zones of unit 1. */
export function encodeQuery(address: number): string {
  return `?${address}\r`;
}

/** `?11VO\r`: one attribute of one zone. */
export function encodeAttributeQuery(zone: number, attribute: QueryAttribute): string {
  return `?${zone}${attribute}\r`;
}

/** Decodes a status line; anything that does not match in full (garbled, truncated) gives undefined. */
export function decodeStatus(line: string): ZoneStatus | undefined {
  const m = STATUS_LINE.exec(line);
  if (!m) return undefined;
  const f = m.slice(1).map(Number);
  const status: ZoneStatus = {
    zone: f[0]!,
    pa: f[1] === 1,
    power: f[2] === 1,
    mute: f[3] === 1,
    dnd: f[4] === 1,
    volume: f[5]!,
    treble: f[6]!,
    bass: f[7]!,
    balance: f[8]!,
    source: f[9]!,
    keypad: f[10] === 1,
  };
  // A line with valid digits but impossible values is line noise too.
  const sane =
    isZoneAddress(status.zone) &&
    f.every((n, i) => i === 0 || i >= 5 || n <= 1) &&
    status.volume <= VOLUME_STEPS &&
    status.treble <= 14 &&
    status.bass <= 14 &&
    status.balance <= 20 &&
    status.source >= 1 &&
    status.source <= SOURCE_COUNT &&
    f[10]! <= 1;
  return sane ? status : undefined;
}

/** `>1100010000131112100401` (no terminator): the emulator's side of decodeStatus. */
export function encodeStatus(s: ZoneStatus): string {
  const b = (v: boolean): string => (v ? '01' : '00');
  return (
    `>${s.zone}${b(s.pa)}${b(s.power)}${b(s.mute)}${b(s.dnd)}` +
    `${pad2(s.volume)}${pad2(s.treble)}${pad2(s.bass)}${pad2(s.balance)}${pad2(s.source)}${b(s.keypad)}`
  );
}

/** The value of one attribute in a status, as the two-digit number the wire carries. */
export function attributeValue(s: ZoneStatus, attribute: QueryAttribute): number {
  switch (attribute) {
    case 'PA':
      return s.pa ? 1 : 0;
    case 'PR':
      return s.power ? 1 : 0;
    case 'MU':
      return s.mute ? 1 : 0;
    case 'DT':
      return s.dnd ? 1 : 0;
    case 'VO':
      return s.volume;
    case 'TR':
      return s.treble;
    case 'BS':
      return s.bass;
    case 'BL':
      return s.balance;
    case 'CH':
      return s.source;
    case 'LS':
      return s.keypad ? 1 : 0;
  }
}

/** `>11VO20`: the reply to an attribute query. */
export function encodeAttribute(zone: number, attribute: QueryAttribute, value: number): string {
  return `>${zone}${attribute}${pad2(value)}`;
}

/** A command as the amplifier parses it (the emulator's view of what the host sent). */
export type Command =
  | { kind: 'empty' }
  | { kind: 'query'; unit: number; zone: number } // zone 0 = the whole unit
  | { kind: 'attribute-query'; unit: number; zone: number; attribute: QueryAttribute }
  | { kind: 'set'; unit: number; zone: number; attribute: SetAttribute; value: number };

/** Parses one command line (without its CR); undefined means `Command Error.`. Action letters may be lower case. */
export function parseCommand(text: string): Command | undefined {
  if (text === '') return { kind: 'empty' };
  const upper = text.toUpperCase();
  let m = /^\?([1-3])([0-6])$/.exec(upper);
  if (m) return { kind: 'query', unit: Number(m[1]), zone: Number(m[2]) };
  m = /^\?([1-3])([1-6])([A-Z]{2})$/.exec(upper);
  if (m && (QUERY_ATTRIBUTES as readonly string[]).includes(m[3]!)) {
    return { kind: 'attribute-query', unit: Number(m[1]), zone: Number(m[2]), attribute: m[3] as QueryAttribute };
  }
  m = /^<([1-3])([0-6])([A-Z]{2})(\d\d)$/.exec(upper);
  if (m && m[3]! in SET_RANGES) {
    return {
      kind: 'set',
      unit: Number(m[1]),
      zone: Number(m[2]),
      attribute: m[3] as SetAttribute,
      value: Number(m[4]),
    };
  }
  return undefined;
}

/**
 * One line the amplifier sent, ended by its `\r\n#` prompt. Every frame implies a prompt.
 * `status`: a full status line; `attribute`: a `>11VO20` reply; `error`: `Command Error.`;
 * `text`: anything else (the echo of our command, an empty resync answer, garbage).
 */
export type Frame =
  | { kind: 'status'; status: ZoneStatus }
  | { kind: 'attribute'; zone: number; attribute: QueryAttribute; value: number }
  | { kind: 'error' }
  | { kind: 'text'; text: string };

export function classifyLine(raw: string): Frame {
  // Leading and trailing CR/LF come from `\r\nCommand Error.`, extra CRs and CRLF variants; they carry no meaning.
  const text = raw.trim();
  const status = decodeStatus(text);
  if (status) return { kind: 'status', status };
  const attr = ATTRIBUTE_LINE.exec(text);
  if (attr)
    return { kind: 'attribute', zone: Number(attr[1]), attribute: attr[2] as QueryAttribute, value: Number(attr[3]) };
  if (COMMAND_ERROR.test(text)) return { kind: 'error' };
  return { kind: 'text', text };
}

/** Largest line kept while waiting for a prompt: a run of noise without one is dropped rather than hoarded. */
const MAX_PENDING = 512;
/** `\r\n#` in the reference; `\r\r\n#`, `\n#`, `\n\r#` and `\r\n\r\n#` on clones and bridges. */
const PROMPT = /[\r\n]+#/;

/**
 * Streaming framer for the amplifier's output: feed it chunks as they arrive, get whole frames back.
 * Splits on any run of CR/LF followed by `#`, so echoes, extra CRs, CRLF variants, split chunks and several frames
 * per chunk all work.
 */
export class LineFramer {
  private pending = '';

  push(chunk: Buffer | string): Frame[] {
    // latin1 maps every byte to one char, so garbage bytes never throw and never merge into multi-byte chars.
    this.pending += typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    const frames: Frame[] = [];
    for (let m = PROMPT.exec(this.pending); m; m = PROMPT.exec(this.pending)) {
      frames.push(classifyLine(this.pending.slice(0, m.index)));
      this.pending = this.pending.slice(m.index + m[0].length);
    }
    if (this.pending.length > MAX_PENDING) this.pending = this.pending.slice(-MAX_PENDING);
    return frames;
  }

  /** Forgets a partial line (after a resync or a reconnect). */
  reset(): void {
    this.pending = '';
  }

  /** Bytes received since the last prompt (diagnostics). */
  get buffered(): string {
    return this.pending;
  }
}

/**
 * Collects the reply to one command from its frames, whether or not the amp echoes. Before any data, a text frame
 * without a `>` is the echo (maybe garbled) or a bare prompt: amps that do not echo send only `\r\n#`, and some send
 * nothing and start with the data line. A set (or a bare CR) is complete at that first prompt: the amp sends no data
 * after a set, and waiting for some is how other drivers lock up. A query is complete after `lines` data lines (a
 * garbled line still counts, as it used up a prompt) or at the status line of its last zone, which the amp sends
 * last, so a prompt lost to noise does not cost a timeout.
 */
export class ReplyCollector {
  readonly statuses: ZoneStatus[] = [];
  /** Data lines received, garbled ones included: any means the unit answered. */
  received = 0;
  /** Whether an echo or a prompt came before the data; false for amps whose replies start with the data line. */
  prompted = false;
  private readonly zones: ReadonlySet<number>;
  private readonly lastZone: number | undefined;

  /** `zones`: the addresses whose status lines belong to this query (others are stale and dropped). */
  constructor(
    readonly lines: number,
    zones: Iterable<number> = [],
  ) {
    this.zones = new Set(zones);
    this.lastZone = this.zones.size > 0 ? Math.max(...this.zones) : undefined;
  }

  /** 'ok' or 'error' once the reply is complete; undefined while more is expected. */
  accept(frame: Frame): 'ok' | 'error' | undefined {
    // Without an echo, `Command Error.` may be the first thing the amp sends; once data flows it is someone else's.
    if (frame.kind === 'error') return this.received === 0 ? 'error' : undefined;
    if (this.received === 0) {
      if (frame.kind === 'text' && !frame.text.includes('>')) {
        this.prompted = true;
        return this.lines === 0 ? 'ok' : undefined;
      }
      // Data before the reply has started is left over from an earlier exchange.
      if (this.lines === 0 || (frame.kind === 'status' && !this.zones.has(frame.status.zone))) return undefined;
    }
    this.received++;
    if (frame.kind === 'status' && this.zones.has(frame.status.zone)) {
      this.statuses.push(frame.status);
      if (frame.status.zone === this.lastZone) return 'ok';
    }
    return this.received >= this.lines ? 'ok' : undefined;
  }
}
