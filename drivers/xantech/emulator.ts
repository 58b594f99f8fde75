// The amplifier side of the Xantech RS-232 protocol, byte for byte, with fault switches for tests and demos.
import { CommandRejections, EmulatorPort, type OutputOptions } from '../emulator-port.js';
import {
  acceptsValue,
  attributeValue,
  type Command,
  encodeStatus,
  encodeValue,
  MAX_ZONES,
  parseCommand,
  type SetAttribute,
  VOLUME_STEPS,
  type ZoneCount,
  type ZoneStatus,
} from './protocol.js';

export interface EmulatorOptions extends OutputOptions {
  /** 8, or 16 for two linked amplifiers in expanded mode. Default 8. */
  zones?: ZoneCount;
  /** What follows every reply: '\r' (default, as one integration reads them), '' or '\r\n'. */
  lineEnd?: string;
  /** How `!ZA1+` is refused by firmware without zone-activity reports: 'error', 'silent', or not at all (false). */
  refuseActivityUpdates?: 'error' | 'silent' | false;
  /** How long after the last activity on a zone its report goes out (a look-alike's manual says one second). */
  activityDelayMs?: number;
  /** Whether changes made over RS-232 are reported too, not only keypad ones. Default true (the harder case). */
  reportOwnChanges?: boolean;
  /** Drop sets other than power to a zone that is off, as Monoprice-style units do. Default false. */
  ignoreSetsWhileOff?: boolean;
  /** A zone powered on starts at volume 0, as one MRC88 owner reports. Default false. */
  volumeZeroAtPowerOn?: boolean;
}

/** Longest command kept while waiting for its `+`. */
const INPUT_LIMIT = 64;

export type KeypadChange = Partial<Omit<ZoneStatus, 'zone'>>;

function initialStatus(zone: number): ZoneStatus {
  return {
    zone,
    power: false,
    source: 1,
    volume: 10,
    mute: false,
    treble: 7,
    bass: 7,
    balance: 32,
    linked: false,
    paged: false,
  };
}

/**
 * Events: `command` (text without its `+`, after the state changed), `report` (a zone-activity report went out),
 * `close` (the attached stream ended). Faults switch at run time through the public fields and methods.
 */
export class XantechEmulator extends EmulatorPort {
  zones: ZoneCount;
  lineEnd: string;
  refuseActivityUpdates: 'error' | 'silent' | false;
  activityDelayMs: number;
  reportOwnChanges: boolean;
  ignoreSetsWhileOff: boolean;
  volumeZeroAtPowerOn: boolean;
  /** Whether zone-activity reports are on (`!ZA1+`). */
  activityUpdates = false;
  private readonly state = new Map<number, ZoneStatus>();
  private readonly reportTimers = new Map<number, unknown>();
  private idleWaiters: Array<() => void> = [];
  private input = '';
  private readonly rejections = new CommandRejections();

  constructor(options: EmulatorOptions = {}) {
    super(options, 9600);
    this.zones = options.zones ?? 8;
    this.lineEnd = options.lineEnd ?? '\r';
    this.refuseActivityUpdates = options.refuseActivityUpdates ?? false;
    this.activityDelayMs = options.activityDelayMs ?? 1000;
    this.reportOwnChanges = options.reportOwnChanges ?? true;
    this.ignoreSetsWhileOff = options.ignoreSetsWhileOff ?? false;
    this.volumeZeroAtPowerOn = options.volumeZeroAtPowerOn ?? false;
    for (let zone = 1; zone <= MAX_ZONES; zone++) this.state.set(zone, initialStatus(zone));
  }

  protected attached(): void {
    this.input = '';
  }

  protected override detached(): void {
    this.cancelReports();
  }

  /** A silent amplifier (mains off, cable pulled at the amp end): input is ignored, nothing is sent. */
  override setSilent(silent: boolean): void {
    super.setSilent(silent);
    if (silent) this.cancelReports();
  }

  /** Mains off: silent, and zone-activity mode forgotten, so the driver must ask for it again. */
  powerOff(): void {
    this.setSilent(true);
    this.activityUpdates = false;
  }

  /** Mains on: answers again once it has booted (bootMs). */
  powerOn(): void {
    if (this.bootMs > 0) this.boot(this.bootMs);
    else this.setSilent(false);
  }

  /** A copy of one zone's state. */
  zone(zone: number): ZoneStatus {
    const status = this.state.get(zone);
    if (!status) throw new RangeError(`no zone ${zone}: zones are 1..${MAX_ZONES}`);
    return { ...status };
  }

  /** Someone at a keypad changes a zone; with zone-activity reports on, the amplifier reports it shortly after. */
  keypad(zone: number, change: KeypadChange): void {
    const status = this.state.get(zone);
    if (!status || zone > this.zones) throw new RangeError(`no zone ${zone}: zones are 1..${this.zones}`);
    Object.assign(status, change, { zone });
    this.activity(zone);
  }

  /** The next `times` commands matching `test` arrive garbled: answered with `ERROR`, not executed. */
  rejectNext(test: (command: string) => boolean, times = 1): void {
    this.rejections.add(test, times);
  }

  /** Resolves once every pending zone-activity report has been written (at once if none is pending). */
  reportsSent(): Promise<void> {
    if (this.reportTimers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private cancelReports(): void {
    for (const timer of this.reportTimers.values()) this.clock.clearTimeout(timer);
    this.reportTimers.clear();
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.reportTimers.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Zone activity: (re)starts the zone's report timer, so the report follows once activity stops. */
  private activity(zone: number): void {
    if (!this.activityUpdates || this.silent) return;
    this.clock.clearTimeout(this.reportTimers.get(zone));
    const timer = this.clock.setTimeout(() => {
      this.reportTimers.delete(zone);
      if (this.activityUpdates && !this.silent) {
        this.send(encodeStatus(this.state.get(zone)!));
        this.emit('report', zone);
      }
      this.notifyIdle();
    }, this.activityDelayMs);
    this.reportTimers.set(zone, timer);
  }

  protected receive(chunk: Buffer): void {
    if (this.silent) return;
    for (const byte of chunk) {
      if (byte === 0x2b) {
        const command = this.input;
        this.input = '';
        this.run(command);
      } else if (byte >= 0x20 && byte < 0x7f) {
        // A run without `+` (noise) is bounded like a real input buffer; the command it spoils gets ERROR.
        this.input = (this.input + String.fromCharCode(byte)).slice(-INPUT_LIMIT);
      }
      // CR, LF and other control bytes are ignored: a `+\r` ending is as good as `+`.
    }
  }

  private run(text: string): void {
    const command = parseCommand(text);
    if (!command || this.rejections.take(text) || !this.execute(command)) {
      this.reply('ERROR');
    }
    this.done(text);
  }

  /** Carries out one command and answers it; false when the amplifier would answer ERROR. */
  private execute(command: Command): boolean {
    switch (command.kind) {
      case 'query': {
        if (command.zone < 1 || command.zone > this.zones) return false;
        const status = this.state.get(command.zone)!;
        this.send(
          command.attribute === 'ZD'
            ? encodeStatus(status)
            : encodeValue(status.zone, command.attribute, attributeValue(status, command.attribute)),
        );
        return true;
      }
      case 'set': {
        if (command.zone < 1 || command.zone > this.zones || !acceptsValue(command.attribute, command.value))
          return false;
        this.apply(command.zone, command.attribute, command.value);
        this.reply('OK');
        return true;
      }
      case 'step': {
        if (command.zone < 1 || command.zone > this.zones) return false;
        this.step(command.zone, command.action);
        this.reply('OK');
        return true;
      }
      case 'all':
        for (let zone = 1; zone <= this.zones; zone++) this.apply(zone, 'PR', command.power ? 1 : 0);
        this.reply('OK');
        return true;
      case 'activity':
        if (command.on && this.refuseActivityUpdates === 'silent') return true;
        if (command.on && this.refuseActivityUpdates === 'error') return false;
        this.activityUpdates = command.on;
        if (!command.on) this.cancelReports();
        this.reply('OK');
        return true;
      case 'periodic':
        this.reply('OK'); // periodic reports are not emulated: the driver never asks for them
        return true;
    }
  }

  private apply(zone: number, attribute: SetAttribute, value: number): void {
    const status = this.state.get(zone)!;
    if (attribute !== 'PR' && this.ignoreSetsWhileOff && !status.power) return;
    const before = encodeStatus(status);
    switch (attribute) {
      case 'PR':
        if (value === 1 && !status.power && this.volumeZeroAtPowerOn) status.volume = 0;
        status.power = value === 1;
        break;
      case 'SS':
        status.source = value;
        break;
      case 'VO':
        status.volume = value;
        break;
      case 'MU':
        status.mute = value === 1;
        break;
      case 'TR':
        status.treble = value;
        break;
      case 'BS':
        status.bass = value;
        break;
      case 'BA':
        status.balance = value;
        break;
    }
    if (this.reportOwnChanges && encodeStatus(status) !== before) this.activity(zone);
  }

  private step(zone: number, action: string): void {
    const s = this.state.get(zone)!;
    const clamp = (v: number, max: number): number => Math.min(max, Math.max(0, v));
    const changes: Record<string, () => void> = {
      PT: () => this.apply(zone, 'PR', s.power ? 0 : 1),
      MT: () => this.apply(zone, 'MU', s.mute ? 0 : 1),
      VI: () => this.apply(zone, 'VO', clamp(s.volume + 1, VOLUME_STEPS)),
      VD: () => this.apply(zone, 'VO', clamp(s.volume - 1, VOLUME_STEPS)),
      BI: () => this.apply(zone, 'BS', clamp(s.bass + 1, 14)),
      BD: () => this.apply(zone, 'BS', clamp(s.bass - 1, 14)),
      TI: () => this.apply(zone, 'TR', clamp(s.treble + 1, 14)),
      TD: () => this.apply(zone, 'TR', clamp(s.treble - 1, 14)),
      BL: () => this.apply(zone, 'BA', clamp(s.balance + 1, 63)),
      BR: () => this.apply(zone, 'BA', clamp(s.balance - 1, 63)),
    };
    changes[action]?.();
  }

  private reply(word: 'OK' | 'ERROR'): void {
    this.send(word);
  }

  private send(text: string): void {
    this.output.write(`${text}${this.lineEnd}`);
  }
}
