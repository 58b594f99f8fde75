// The simulated amplifier: 6 zones x 6 sources in memory, with the timing shape of a serial one.
import type {
  AmplifierDriver,
  DriverDescription,
  DriverEvent,
  DriverListener,
  DriverOptions,
  ZoneAvailability,
  ZoneState,
} from '../driver.js';
import { stepToVolume, volumeToStep } from '../driver.js';

export const SIMULATED_ZONES = 6;
export const SIMULATED_SOURCES = 6;
export const SIMULATED_VOLUME_STEPS = 38;

export interface SimulatedOptions extends DriverOptions {
  /** Delay before a change reaches the simulated hardware (a serial round trip is ~20 ms). */
  applyDelayMs?: number;
}

const OFF: ZoneState = { power: false, muted: false, volume: 0, source: 1 };

export class SimulatedDriver implements AmplifierDriver {
  readonly name = 'simulated';
  private readonly listeners = new Set<DriverListener>();
  /** Hardware state, volume held in device steps like a real amplifier. */
  private readonly hardware = new Map<number, ZoneState>();
  private readonly pending = new Map<number, Partial<ZoneState>>();
  private timer: NodeJS.Timeout | undefined;
  private waiters: Array<() => void> = [];
  private running = false;
  private readonly applyDelayMs: number;
  private isOnline = false;
  /** Zones whose (simulated) unit does not answer, with the reason. */
  private readonly silent = new Map<number, string>();

  constructor(options: SimulatedOptions = {}) {
    this.applyDelayMs = options.applyDelayMs ?? 2;
    for (let zone = 1; zone <= SIMULATED_ZONES; zone++) this.hardware.set(zone, { ...OFF });
  }

  get online(): boolean {
    return this.isOnline;
  }

  describe(): DriverDescription {
    const zones = [];
    for (let channel = 1; channel <= SIMULATED_ZONES; channel++) zones.push({ channel, name: `Zone ${channel}` });
    const inputs = [];
    for (let channel = 1; channel <= SIMULATED_SOURCES; channel++) {
      inputs.push({ channel, name: `Input ${channel}`, kind: 'line-in' });
    }
    return { zones, inputs, volumeSteps: SIMULATED_VOLUME_STEPS };
  }

  async start(desired: ReadonlyMap<number, ZoneState>): Promise<void> {
    this.running = true;
    for (const [channel, state] of desired) {
      if (this.hardware.has(channel)) this.hardware.set(channel, this.quantise(state));
    }
    this.isOnline = true;
    this.emit({ type: 'status', online: true });
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    if (!this.running || !this.hardware.has(channel) || this.silent.has(channel)) return;
    const pending = this.pending.get(channel);
    if (pending) Object.assign(pending, change);
    else this.pending.set(channel, { ...change });
    this.timer ??= setTimeout(() => this.flush(), this.applyDelayMs);
  }

  hardwareState(channel: number): ZoneState | undefined {
    const state = this.hardware.get(channel);
    return state && { ...state };
  }

  availability(channel: number): ZoneAvailability {
    if (!this.hardware.has(channel)) return { available: false, reason: `the simulated amplifier has no zone ${channel}` };
    const reason = this.silent.get(channel);
    return reason === undefined ? { available: true } : { available: false, reason };
  }

  settled(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  onEvent(listener: DriverListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.releaseWaiters();
    this.isOnline = false;
  }

  /**
   * Acts like someone turning a keypad on the amplifier: the hardware changes and the driver reports it.
   * Used by tests and the demo; a real driver learns this from its poll.
   */
  simulateKeypad(channel: number, change: Partial<ZoneState>): void {
    const current = this.hardware.get(channel);
    if (!current) throw new RangeError(`no simulated zone ${channel}`);
    const next = this.quantise({ ...current, ...change });
    this.hardware.set(channel, next);
    this.emit({ type: 'zone', channel, state: { ...next } });
  }

  /**
   * Acts like a unit of the amplifier being unplugged (`answering: false`) or plugged back in: its zones become
   * unavailable (writes to them are dropped) and available again, each reported once. Used by tests and the demo.
   */
  simulateUnit(channels: readonly number[], answering: boolean, reason = 'the simulated unit does not answer'): void {
    for (const channel of channels) {
      if (!this.hardware.has(channel)) throw new RangeError(`no simulated zone ${channel}`);
      if (answering === !this.silent.has(channel)) continue;
      if (answering) this.silent.delete(channel);
      else {
        this.silent.set(channel, reason);
        this.pending.delete(channel);
      }
      this.emit(answering ? { type: 'availability', channel, available: true } : { type: 'availability', channel, available: false, reason });
    }
    if (this.pending.size === 0) this.releaseWaiters();
  }

  private flush(): void {
    this.timer = undefined;
    for (const [channel, change] of this.pending) {
      const current = this.hardware.get(channel);
      if (current) this.hardware.set(channel, this.quantise({ ...current, ...change }));
    }
    this.pending.clear();
    this.releaseWaiters();
  }

  private releaseWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private quantise(state: ZoneState): ZoneState {
    const step = volumeToStep(state.volume, SIMULATED_VOLUME_STEPS);
    return { ...state, volume: stepToVolume(step, SIMULATED_VOLUME_STEPS) };
  }

  private emit(event: DriverEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

export function createSimulatedDriver(options: SimulatedOptions = {}): SimulatedDriver {
  return new SimulatedDriver(options);
}
