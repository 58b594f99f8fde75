// The amplifier side of the Monoprice/Dayton RS-232 protocol, byte for byte, with fault switches for tests and demos.
import { CommandRejections, EmulatorPort, type OutputOptions } from '../emulator-port.js';
import {
  attributeValue,
  encodeAttribute,
  encodeStatus,
  MAX_UNITS,
  parseCommand,
  SET_RANGES,
  type SetAttribute,
  ZONES_PER_UNIT,
  type ZoneStatus,
} from './protocol.js';

/** Variants the protocol reference allows or real units, clones and serial-to-IP bridges show; every one switchable. */
export interface EmulatorOptions extends OutputOptions {
  /** Units fitted (1 master + up to 2 slaves). Default 1. */
  units?: number;
  /** Add the extra CR to single-zone and attribute replies too. Default false. */
  extraCr?: boolean;
  /** Whole-unit replies end each data line with an extra CR (`\r\r\n#`). Default true. */
  wholeUnitExtraCr?: boolean;
  /** The line break printed before every `#`. Default '\r\n'; '\n', '\n\r' and '\r\n\r\n' are seen on clones. */
  newline?: string;
  /** 'bytes': each byte as it arrives (the reference); 'line': the whole command at its CR; 'none': no echo. */
  echo?: 'bytes' | 'line' | 'none';
  /** Prompt right after the CR (the reference). false: replies start with the data line and sets get no answer. */
  promptAfterCommand?: boolean;
  /** How queries to a unit that is not fitted are answered: 'prompt' (echo and prompt, no data) or 'silent' (nothing). */
  absentUnits?: 'prompt' | 'silent';
  /** Real units ignore set commands other than PR to a zone that is off. Default true. */
  ignoreSetsWhileOff?: boolean;
  /** Toggle the LS (keypad connected) field on every status read, as busy keypads do. Default false. */
  flapKeypadConnected?: boolean;
}

export type KeypadChange = Partial<Omit<ZoneStatus, 'zone'>>;

const BACKSPACE = new Set([0x08, 0x7f]);

function initialStatus(zone: number): ZoneStatus {
  return {
    zone,
    pa: false,
    power: false,
    mute: false,
    dnd: false,
    volume: 10,
    treble: 7,
    bass: 7,
    balance: 10,
    source: 1,
    keypad: true,
  };
}

/** A status line as line noise leaves it: the right length and a `>`, but no longer a valid line. */
const garble = (line: string): string => `${line.slice(0, 7)}\x9f?${line.slice(9)}`;

/**
 * Events: `command` (text without CR, after the state changed), `close` (the attached stream ended).
 * Variants and faults switch at run time through the public fields, `setSilent` and `rejectNext`.
 */
export class MonopriceEmulator extends EmulatorPort {
  units: number;
  extraCr: boolean;
  wholeUnitExtraCr: boolean;
  newline: string;
  echo: 'bytes' | 'line' | 'none';
  promptAfterCommand: boolean;
  absentUnits: 'prompt' | 'silent';
  ignoreSetsWhileOff: boolean;
  flapKeypadConnected: boolean;
  /** Zones whose lines in whole-unit (`?x0`) replies go out garbled: a reply with only some lines garbled. */
  readonly garbledZones = new Set<number>();
  private readonly zones = new Map<number, ZoneStatus>();
  private input = '';
  private readonly rejections = new CommandRejections();

  constructor(options: EmulatorOptions = {}) {
    super(options, 9600);
    this.units = options.units ?? 1;
    this.extraCr = options.extraCr ?? false;
    this.wholeUnitExtraCr = options.wholeUnitExtraCr ?? true;
    this.newline = options.newline ?? '\r\n';
    this.echo = options.echo ?? 'bytes';
    this.promptAfterCommand = options.promptAfterCommand ?? true;
    this.absentUnits = options.absentUnits ?? 'prompt';
    this.ignoreSetsWhileOff = options.ignoreSetsWhileOff ?? true;
    this.flapKeypadConnected = options.flapKeypadConnected ?? false;
    for (let unit = 1; unit <= MAX_UNITS; unit++) {
      for (let i = 1; i <= ZONES_PER_UNIT; i++) this.zones.set(unit * 10 + i, initialStatus(unit * 10 + i));
    }
  }

  protected attached(): void {
    this.input = '';
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

  /** The next `times` commands matching `test` arrive garbled: answered with `Command Error.`, not executed. */
  rejectNext(test: (command: string) => boolean, times = 1): void {
    this.rejections.add(test, times);
  }

  /** Echoing byte by byte is impossible when a whole command may have to go unanswered: then the echo waits for the CR. */
  private get echoesBytes(): boolean {
    return this.echo === 'bytes' && this.absentUnits !== 'silent';
  }

  protected receive(chunk: Buffer): void {
    if (this.silent) return;
    for (const byte of chunk) {
      if (byte === 0x0d) {
        const command = this.input;
        this.input = '';
        this.run(command);
      } else if (BACKSPACE.has(byte)) {
        this.input = this.input.slice(0, -1);
        if (this.echoesBytes) this.send(String.fromCharCode(byte));
      } else if (byte >= 0x20 && byte < 0x7f) {
        this.input += String.fromCharCode(byte);
        if (this.echoesBytes) this.send(String.fromCharCode(byte));
      }
      // LF and other control bytes are swallowed, like the real terminal does.
    }
  }

  private run(text: string): void {
    const prompt = `${this.newline}#`;
    const command = parseCommand(text);
    const absent = command !== undefined && command.kind !== 'empty' && command.unit > this.units;
    if (absent && this.absentUnits === 'silent') return this.done(text);
    if (this.echo !== 'none' && !this.echoesBytes) this.send(text);
    if (this.promptAfterCommand) this.send(prompt);
    if (!command || this.rejections.take(text)) {
      this.send(`${this.newline}Command Error.${prompt}`);
    } else if (command.kind === 'query' || command.kind === 'attribute-query') {
      if (!absent) {
        const whole = command.kind === 'query' && command.zone === 0;
        const zones = whole ? [1, 2, 3, 4, 5, 6] : [command.zone];
        const cr = (whole && this.wholeUnitExtraCr) || this.extraCr ? '\r' : '';
        for (const i of zones) {
          const status = this.readStatus(command.unit * 10 + i);
          const line =
            command.kind === 'attribute-query'
              ? encodeAttribute(status.zone, command.attribute, attributeValue(status, command.attribute))
              : encodeStatus(status);
          this.send(`${whole && this.garbledZones.has(status.zone) ? garble(line) : line}${cr}${prompt}`);
        }
      }
    } else if (command.kind === 'set' && !absent) {
      const zones = command.zone === 0 ? [1, 2, 3, 4, 5, 6] : [command.zone];
      for (const i of zones) this.applySet(this.zones.get(command.unit * 10 + i)!, command.attribute, command.value);
    }
    this.done(text);
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
      case 'PR':
        status.power = value === 1;
        break;
      case 'MU':
        status.mute = value === 1;
        break;
      case 'DT':
        status.dnd = value === 1;
        break;
      case 'VO':
        status.volume = value;
        break;
      case 'TR':
        status.treble = value;
        break;
      case 'BS':
        status.bass = value;
        break;
      case 'BL':
        status.balance = value;
        break;
      case 'CH':
        status.source = value;
        break;
    }
  }

  private send(text: string): void {
    this.output.write(text);
  }
}
