// The simulated amplifier: 6 zones x 6 sources in memory, with the timing shape of a serial one, under the same
// ownership rule as the real drivers (drivers/core/zone-book.ts): its in-memory hardware is the truth about the
// present, setZone records intents applied after a short delay, and a keypad change supersedes older intents.

import { type Clock, monotonicClock } from '../core/clock.js';
import { DriverEvents } from '../core/events.js';
import { bit, type Fields, type Reported, type Wire, ZoneBook } from '../core/zone-book.js';
import type {
  AmplifierDriver,
  DriverDescription,
  DriverListener,
  DriverOptions,
  RememberedZone,
  SoundDescription,
  ZoneAvailability,
  ZoneFlags,
  ZoneState,
  ZoneTone,
} from '../driver.js';
import { checkTone, stepToTone, stepToVolume, toneToStep, volumeToStep, ZONE_FLAGS } from '../driver.js';
import { SIMULATED_APPLY_DELAY_MS, SIMULATED_ZONES } from './options.js';

export { SIMULATED_ZONES } from './options.js';

export const SIMULATED_SOURCES = 6;
export const SIMULATED_VOLUME_STEPS = 38;

export interface SimulatedOptions extends DriverOptions {
  /** Delay before a change reaches the simulated hardware (a serial round trip is ~20 ms). */
  applyDelayMs?: number;
  /** Zones fitted, channels 1..zones. */
  zones?: number;
}

/** Every control and flag, with the steps of the most common amplifier (Monoprice): 7 each side of flat, 10 of centre. */
export const SIMULATED_SOUND: SoundDescription = {
  controls: { bass: { down: 7, up: 7 }, treble: { down: 7, up: 7 }, balance: { down: 10, up: 10 }, loudness: true },
  flags: { paging: true, doNotDisturb: true, party: true },
};
const {
  bass: BASS,
  treble: TREBLE,
  balance: BALANCE,
} = SIMULATED_SOUND.controls as Record<'bass' | 'treble' | 'balance', { down: number; up: number }>;

const OFF: Wire = {
  power: 0,
  muted: 0,
  volume: 0,
  source: 1,
  bass: 7,
  treble: 7,
  balance: 10,
  loudness: 0,
  paging: 0,
  doNotDisturb: 0,
  party: 0,
};

/** A change to the simulated hardware: its state, tone and (from the "amplifier" itself only) its flags. */
export type SimulatedChange = Partial<ZoneState> & ZoneTone & ZoneFlags;

function fieldsOf(change: SimulatedChange): Fields {
  const fields: Fields = {};
  if (change.power !== undefined) fields.power = change.power ? 1 : 0;
  if (change.muted !== undefined) fields.muted = change.muted ? 1 : 0;
  if (change.volume !== undefined) fields.volume = volumeToStep(change.volume, SIMULATED_VOLUME_STEPS);
  if (change.source !== undefined) fields.source = change.source;
  // Remembered tone comes unchecked from the store: a value that is no number is left out.
  const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
  if (finite(change.bass)) fields.bass = toneToStep(change.bass, BASS);
  if (finite(change.treble)) fields.treble = toneToStep(change.treble, TREBLE);
  if (finite(change.balance)) fields.balance = toneToStep(change.balance, BALANCE);
  if (typeof change.loudness === 'boolean') fields.loudness = bit(change.loudness);
  for (const flag of ZONE_FLAGS) if (change[flag] !== undefined) fields[flag] = bit(change[flag]);
  return fields;
}

export class SimulatedDriver implements AmplifierDriver {
  readonly name = 'simulated';
  private readonly events: DriverEvents;
  private readonly clock: Clock;
  private readonly book: ZoneBook;
  /** The simulated hardware itself: what the amplifier holds, whatever the driver believes. */
  private readonly amp = new Map<number, Wire>();
  /** Channels the daemon remembers that this amplifier does not have: described, and unavailable. */
  private readonly missing = new Set<number>();
  /** Zones whose (simulated) unit does not answer, with the reason. */
  private readonly silent = new Map<number, string>();
  private readonly applyDelayMs: number;
  private timer: unknown;
  private running = false;
  private reachable = true;

  constructor(options: SimulatedOptions = {}) {
    this.applyDelayMs = options.applyDelayMs ?? SIMULATED_APPLY_DELAY_MS;
    this.clock = options.clock ?? monotonicClock;
    this.events = new DriverEvents('simulated', options.log);
    for (let zone = 1; zone <= (options.zones ?? SIMULATED_ZONES); zone++) this.amp.set(zone, { ...OFF });
    this.book = new ZoneBook({
      volumeSteps: SIMULATED_VOLUME_STEPS,
      sourceCount: SIMULATED_SOURCES,
      checkChannel: (channel) => (this.amp.has(channel) ? undefined : `the simulated amplifier has no zone ${channel}`),
      now: () => this.clock.now(),
      setsWhileOff: true,
      sound: SIMULATED_SOUND,
    });
    // The hardware exists before start: the daemon's first zones are made from what it holds.
    this.readAll();
  }

  get online(): boolean {
    return this.running && this.reachable;
  }

  describe(): DriverDescription {
    const channels = [...this.amp.keys(), ...this.missing].sort((a, b) => a - b);
    const zones = channels.map((channel) => ({ channel, name: `Zone ${channel}` }));
    const inputs = Array.from({ length: SIMULATED_SOURCES }, (_, i) => ({
      channel: i + 1,
      name: `Input ${i + 1}`,
      kind: 'line-in',
    }));
    return { zones, inputs, volumeSteps: SIMULATED_VOLUME_STEPS, sound: SIMULATED_SOUND };
  }

  /** Its hardware does not outlive the process: what the daemon remembers becomes what the amplifier holds. */
  async start(remembered: ReadonlyMap<number, RememberedZone>): Promise<void> {
    if (this.running) return;
    for (const [channel, state] of remembered) {
      const zone = this.amp.get(channel);
      if (zone) {
        Object.assign(zone, fieldsOf(state), state.tone && fieldsOf(state.tone));
        this.book.remember(channel, state);
      } else if (Number.isInteger(channel) && channel > 0) this.missing.add(channel);
    }
    this.running = true;
    this.readAll();
    this.events.status(true);
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    this.intend(channel, change);
  }

  /** A tone intent: checked first (a RangeError changes nothing), then as setZone. */
  setTone(channel: number, change: ZoneTone): void {
    checkTone(change, SIMULATED_SOUND);
    this.intend(channel, change);
  }

  private intend(channel: number, change: Partial<ZoneState> & ZoneTone): void {
    if (!this.running || this.missing.has(channel) || this.silent.has(channel)) return;
    const complaint = this.book.record(channel, change);
    if (complaint) this.events.log('warn', `simulated: ${complaint}`);
    this.timer ??= this.clock.setTimeout(() => this.flush(), this.applyDelayMs);
  }

  hardwareState(channel: number): ZoneState | undefined {
    return this.book.hardware(channel);
  }

  hardwareTone(channel: number): ZoneTone | undefined {
    return this.book.hardwareTone(channel);
  }

  hardwareFlags(channel: number): ZoneFlags | undefined {
    return this.book.hardwareFlags(channel);
  }

  /** The flags the simulated hardware itself holds (tests, the demo). */
  amplifierFlags(channel: number): ZoneFlags | undefined {
    const zone = this.amp.get(channel);
    return zone && { paging: zone.paging === 1, doNotDisturb: zone.doNotDisturb === 1, party: zone.party === 1 };
  }

  /** The tone the simulated hardware itself holds (tests, the demo). */
  amplifierTone(channel: number): ZoneTone | undefined {
    const zone = this.amp.get(channel);
    return (
      zone && {
        bass: stepToTone(zone.bass!, BASS),
        treble: stepToTone(zone.treble!, TREBLE),
        balance: stepToTone(zone.balance!, BALANCE),
        loudness: zone.loudness === 1,
      }
    );
  }

  /** What the simulated hardware itself holds, whatever the driver believes (tests, the demo). */
  amplifierState(channel: number): ZoneState | undefined {
    const zone = this.amp.get(channel);
    return (
      zone && {
        power: zone.power === 1,
        muted: zone.muted === 1,
        volume: stepToVolume(zone.volume, SIMULATED_VOLUME_STEPS),
        source: zone.source,
      }
    );
  }

  availability(channel: number): ZoneAvailability {
    if (!this.amp.has(channel)) return { available: false, reason: `the simulated amplifier has no zone ${channel}` };
    const reason = this.silent.get(channel);
    return reason === undefined ? { available: true } : { available: false, reason };
  }

  settled(): Promise<void> {
    return this.events.settled(this.isSettled());
  }

  onEvent(listener: DriverListener): () => void {
    return this.events.subscribe(listener);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.events.release(() => true);
  }

  /**
   * Someone turning a keypad on the amplifier: the hardware changes and the driver reports it at once (a real
   * driver learns it from its poll), superseding intents made before it. Unreported while the amplifier is offline.
   */
  simulateKeypad(channel: number, change: SimulatedChange): void {
    const zone = this.amp.get(channel);
    if (!zone) throw new RangeError(`no simulated zone ${channel}`);
    Object.assign(zone, fieldsOf(change));
    if (this.reachable && !this.silent.has(channel)) this.read(channel, 'update');
  }

  /**
   * A unit of the amplifier unplugged (`answering: false`) or plugged back in: its zones become unavailable (their
   * intents dropped, writes refused) and available again, each reported once; on return what they hold is read.
   */
  simulateUnit(channels: readonly number[], answering: boolean, reason = 'the simulated unit does not answer'): void {
    for (const channel of channels) {
      if (!this.amp.has(channel)) throw new RangeError(`no simulated zone ${channel}`);
      if (answering === !this.silent.has(channel)) continue;
      if (answering) {
        this.silent.delete(channel);
        this.events.emit({ type: 'availability', channel, available: true });
        this.read(channel, 'first');
      } else {
        this.silent.set(channel, reason);
        this.emitZone(channel, this.book.dropIntents(channel));
        this.events.emit({ type: 'availability', channel, available: false, reason });
      }
    }
    this.events.release(() => this.isSettled());
  }

  /**
   * The whole amplifier unreachable (`true`) and back: offline, intents kept; on return what it holds is adopted and
   * reported where it differs, and the intents made meanwhile are written.
   */
  simulateOffline(offline: boolean): void {
    if (this.reachable === !offline) return;
    this.reachable = !offline;
    this.events.status(this.reachable, offline ? 'the simulated amplifier is unreachable' : undefined);
    if (this.reachable) {
      this.readAll();
      this.timer ??= this.clock.setTimeout(() => this.flush(), this.applyDelayMs);
    }
    this.events.release(() => this.isSettled());
  }

  private readAll(): void {
    for (const channel of this.amp.keys()) if (!this.silent.has(channel)) this.read(channel, 'first');
  }

  /** The driver looks at its hardware: a first look after a start or a return, or one that finds a keypad's change. */
  private read(channel: number, kind: 'first' | 'update'): void {
    this.emitZone(channel, this.book.learn(channel, { ...this.amp.get(channel)! }, kind, this.book.stamp()));
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.running || !this.reachable) return;
    const channels = [...this.amp.keys()].filter((channel) => !this.silent.has(channel));
    for (
      let write = this.book.nextWrite(channels, new Set());
      write;
      write = this.book.nextWrite(channels, new Set())
    ) {
      this.amp.get(write.channel)![write.attribute] = write.value;
      this.emitZone(write.channel, this.book.confirm(write));
    }
    this.events.release(() => this.isSettled());
  }

  private isSettled(): boolean {
    return !this.running || !this.reachable || this.timer === undefined;
  }

  private emitZone(channel: number, reported: Reported | undefined): void {
    if (reported) this.events.emit({ type: 'zone', channel, ...reported });
  }
}
