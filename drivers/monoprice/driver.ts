// Monoprice MPR-6ZHMAUT / Dayton DAX66 driver: one serial line, one command in flight, desired vs hardware state.
import { SerialPort } from 'serialport';
import type {
  AmplifierDriver,
  DriverDescription,
  DriverEvent,
  DriverListener,
  DriverOptions,
  ZoneState,
} from '../driver.js';
import { stepToVolume, volumeToStep } from '../driver.js';
import {
  LineFramer,
  MAX_UNITS,
  ReplyCollector,
  SOURCE_COUNT,
  VOLUME_STEPS,
  ZONES_PER_UNIT,
  attributeValue,
  encodeQuery,
  encodeSet,
  isZoneAddress,
  unitOf,
  type ZoneStatus,
} from './protocol.js';

export interface MonopriceOptions extends DriverOptions {
  /** Quiet time between commands; the amp desynchronises when pipelined (20..100 ms). */
  interCommandGapMs?: number;
  /** First reconnect delay; doubles per failed attempt up to reconnectMaxMs. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Consecutive unanswered commands to the master unit that mean the amplifier is off or unplugged. */
  offlineAfterTimeouts?: number;
}

/** Defaults and their reasons live here, not spread through the code. */
export const MONOPRICE_DEFAULTS = {
  baudRate: 9600,
  pollIntervalMs: 5000, // existing integrations poll every 5-15 s
  commandTimeoutMs: 1000, // a ?x0 reply takes ~175 ms at 9600 baud
  interCommandGapMs: 30,
  reconnectMinMs: 250,
  reconnectMaxMs: 10_000,
  offlineAfterTimeouts: 3,
} as const;

/** The attributes ZoneState carries, as wire attribute names. Order matters: see nextWrite(). */
type Managed = 'PR' | 'CH' | 'VO' | 'MU';
const MANAGED: readonly Managed[] = ['PR', 'CH', 'VO', 'MU'];
type Desired = Partial<Record<Managed, number>>;

type Phase = 'new' | 'connecting' | 'online' | 'offline' | 'stopped';
type Outcome = 'ok' | 'timeout' | 'error' | 'closed';

interface Transaction {
  reply: ReplyCollector;
  timer: NodeJS.Timeout;
  resolve: (result: { outcome: Outcome; statuses: ZoneStatus[] }) => void;
}

const unitZones = (unit: number): number[] => Array.from({ length: ZONES_PER_UNIT }, (_, i) => unit * 10 + i + 1);

function toZoneState(s: ZoneStatus): ZoneState {
  return { power: s.power, muted: s.mute, volume: stepToVolume(s.volume, VOLUME_STEPS), source: s.source };
}

export class MonopriceDriver implements AmplifierDriver {
  readonly name = 'monoprice';
  private readonly path: string;
  private readonly baudRate: number;
  private readonly pollIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly gapMs: number;
  private readonly reconnectMinMs: number;
  private readonly reconnectMaxMs: number;
  private readonly offlineAfterTimeouts: number;
  private readonly logFn: MonopriceOptions['log'];

  private readonly listeners = new Set<DriverListener>();
  private readonly desired = new Map<number, Desired>();
  /** Last state read from the amp, updated by our acknowledged writes (the amp sends no data after a set). */
  private readonly known = new Map<number, ZoneStatus>();
  private fitted: number[] = [1];
  private probed = false;
  /** Fitted slave units that stopped answering (powered off): skipped by writes until a poll gets an answer. */
  private readonly unresponsive = new Set<number>();

  private phase: Phase = 'new';
  /** Bumped on every connect/disconnect so callbacks of an old port or loop fall silent. */
  private epoch = 0;
  private port: SerialPort | undefined;
  private readonly framer = new LineFramer();
  private current: Transaction | undefined;
  private lineFreeAt = 0;
  private needsResync = false;
  private masterTimeouts = 0;
  private writeInFlight = false;
  private pumpToken: object | undefined;
  private pollQueue: number[] = [];
  private backoffMs: number;
  private lastStatus: boolean | undefined;

  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private settleWaiters: Array<() => void> = [];

  constructor(options: MonopriceOptions & { serialPort: string }) {
    this.path = options.serialPort;
    this.baudRate = options.baudRate ?? MONOPRICE_DEFAULTS.baudRate;
    this.pollIntervalMs = options.pollIntervalMs ?? MONOPRICE_DEFAULTS.pollIntervalMs;
    this.timeoutMs = options.commandTimeoutMs ?? MONOPRICE_DEFAULTS.commandTimeoutMs;
    this.gapMs = options.interCommandGapMs ?? MONOPRICE_DEFAULTS.interCommandGapMs;
    this.reconnectMinMs = options.reconnectMinMs ?? MONOPRICE_DEFAULTS.reconnectMinMs;
    this.reconnectMaxMs = options.reconnectMaxMs ?? MONOPRICE_DEFAULTS.reconnectMaxMs;
    this.offlineAfterTimeouts = options.offlineAfterTimeouts ?? MONOPRICE_DEFAULTS.offlineAfterTimeouts;
    this.logFn = options.log;
    this.backoffMs = this.reconnectMinMs;
  }

  get online(): boolean {
    return this.phase === 'online';
  }

  describe(): DriverDescription {
    const zones = this.fitted.flatMap((unit) =>
      unitZones(unit).map((channel) => ({ channel, name: `Zone ${(unit - 1) * ZONES_PER_UNIT + (channel % 10)}` })),
    );
    const inputs = Array.from({ length: SOURCE_COUNT }, (_, i) => ({ channel: i + 1, name: `Input ${i + 1}`, kind: 'line-in' }));
    return { zones, inputs, volumeSteps: VOLUME_STEPS };
  }

  async start(desired: ReadonlyMap<number, ZoneState>): Promise<void> {
    if (this.phase !== 'new') return;
    for (const [channel, state] of desired) this.record(channel, state);
    void this.connect();
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    if (this.phase === 'stopped') return;
    this.record(channel, change);
    this.kick();
    this.checkSettled();
  }

  hardwareState(channel: number): ZoneState | undefined {
    const status = this.known.get(channel);
    return status && toZoneState(status);
  }

  settled(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  onEvent(listener: DriverListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.epoch++;
    this.dropConnectionState();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const port = this.port;
    this.port = undefined;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    this.checkSettled();
  }

  // ---- desired state -------------------------------------------------------------------------------------------

  /** Stores a change as wire values; bad values are logged and dropped, never thrown (callers are not the hardware). */
  private record(channel: number, change: Partial<ZoneState>): void {
    if (!isZoneAddress(channel)) {
      this.log('warn', `monoprice: no zone ${channel}; zones are 11..16, 21..26, 31..36`);
      return;
    }
    const next: Desired = { ...this.desired.get(channel) };
    if (typeof change.power === 'boolean') next.PR = change.power ? 1 : 0;
    if (typeof change.muted === 'boolean') next.MU = change.muted ? 1 : 0;
    if (typeof change.volume === 'number' && Number.isFinite(change.volume)) next.VO = volumeToStep(change.volume, VOLUME_STEPS);
    if (change.source !== undefined) {
      if (Number.isInteger(change.source) && change.source >= 1 && change.source <= SOURCE_COUNT) next.CH = change.source;
      else this.log('warn', `monoprice: source must be 1..${SOURCE_COUNT}, got ${change.source}`, { channel });
    }
    this.desired.set(channel, next);
  }

  /** Whether a desired attribute still differs from what the hardware has. */
  private wants(zone: number, attribute: Managed): boolean {
    const want = this.desired.get(zone)?.[attribute];
    const status = this.known.get(zone);
    return want !== undefined && status !== undefined && want !== attributeValue(status, attribute);
  }

  /**
   * The next set to send. The amp ignores sets other than PR to an off zone, so those are only sent while the zone
   * is on: power on therefore goes first, power off last (the amp keeps the other settings), and changes to a
   * zone that stays off wait until it is on again. Source goes before volume and mute so an unmuted zone never
   * plays the previous source.
   */
  private nextWrite(): { zone: number; attribute: Managed; value: number } | undefined {
    for (const unit of this.reachableUnits()) {
      for (const zone of unitZones(unit)) {
        const status = this.known.get(zone);
        const want = this.desired.get(zone);
        if (!status || !want) continue;
        if (status.power) {
          for (const attribute of MANAGED) {
            if (attribute !== 'PR' && this.wants(zone, attribute)) return { zone, attribute, value: want[attribute]! };
          }
        }
        if (this.wants(zone, 'PR')) return { zone, attribute: 'PR', value: want.PR! };
      }
    }
    return undefined;
  }

  private reachableUnits(): number[] {
    return this.fitted.filter((unit) => !this.unresponsive.has(unit));
  }

  /** Units holding a zone we have a desired state for but could not read yet (its status line was garbled). */
  private unreadUnits(): number[] {
    return this.reachableUnits().filter((unit) =>
      unitZones(unit).some((zone) => this.desired.has(zone) && !this.known.has(zone)),
    );
  }

  private isSettled(): boolean {
    if (this.phase === 'connecting') return false;
    if (this.phase !== 'online') return true;
    return !this.writeInFlight && this.nextWrite() === undefined && this.unreadUnits().length === 0;
  }

  private checkSettled(): void {
    if (this.settleWaiters.length === 0 || !this.isSettled()) return;
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // ---- hardware state ------------------------------------------------------------------------------------------

  /**
   * Takes in one status line. `sync` reads (on connect) only learn the hardware: the desired state is pushed over
   * it. `poll` reads report changes nobody here asked for (keypads) as zone events and adopt them as desired.
   */
  private learn(status: ZoneStatus, mode: 'sync' | 'poll'): void {
    const zone = status.zone;
    if (!this.fitted.includes(unitOf(zone))) return;
    const before = this.known.get(zone);
    this.known.set(zone, { ...status });
    if (!before || mode === 'sync') return;
    const want = this.desired.get(zone);
    let changed = false;
    for (const attribute of MANAGED) {
      const was = attributeValue(before, attribute);
      const now = attributeValue(status, attribute);
      if (now === was) continue;
      // A change we still have to write (recorded while this poll was on the wire) is newer than the poll: the
      // poll must neither report it nor overwrite it.
      if (want?.[attribute] !== undefined && want[attribute] !== was) continue;
      // An off zone ignores sets, so a differing value there is our write that did not take: keep it for power-on.
      if (attribute !== 'PR' && !status.power && want?.[attribute] !== undefined) continue;
      changed = true;
      if (want?.[attribute] !== undefined) want[attribute] = now;
    }
    if (changed) this.emit({ type: 'zone', channel: zone, state: this.reportedState(zone) });
  }

  /** What a zone is (or is about to be, once pending writes land): hardware overlaid with pending desired values. */
  private reportedState(zone: number): ZoneState {
    const state = toZoneState(this.known.get(zone)!);
    const want = this.desired.get(zone) ?? {};
    if (want.PR !== undefined) state.power = want.PR === 1;
    if (want.MU !== undefined) state.muted = want.MU === 1;
    if (want.VO !== undefined) state.volume = stepToVolume(want.VO, VOLUME_STEPS);
    if (want.CH !== undefined) state.source = want.CH;
    return state;
  }

  // ---- connection ----------------------------------------------------------------------------------------------

  private async connect(): Promise<void> {
    const epoch = ++this.epoch;
    this.phase = 'connecting';
    let port: SerialPort;
    try {
      port = new SerialPort({ path: this.path, baudRate: this.baudRate, dataBits: 8, parity: 'none', stopBits: 1, autoOpen: false });
      await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    } catch (err) {
      if (epoch === this.epoch) this.lost(`cannot open ${this.path}: ${(err as Error).message}`);
      return;
    }
    if (epoch !== this.epoch) {
      port.close(() => undefined); // stopped while opening
      return;
    }
    this.port = port;
    this.framer.reset();
    port.on('data', (chunk: Buffer) => this.onData(epoch, chunk));
    port.on('close', () => {
      if (epoch === this.epoch) this.lost(`${this.path} closed (unplugged?)`);
    });
    port.on('error', (err: Error) => {
      this.log('warn', `monoprice: port error: ${err.message}`);
      if (epoch === this.epoch && !port.isOpen) this.lost(`${this.path}: ${err.message}`);
    });

    // A bare CR flushes whatever half command the amp holds from before (a replug mid-command).
    const wake = await this.transact('\r', 0, []);
    if (epoch !== this.epoch) return;
    if (wake.outcome === 'timeout') return this.lost('amplifier not answering');

    const units = this.probed ? this.fitted : Array.from({ length: MAX_UNITS }, (_, i) => i + 1);
    const found: number[] = [];
    for (const unit of units) {
      const reply = await this.transact(encodeQuery(unit * 10), ZONES_PER_UNIT, unitZones(unit));
      if (epoch !== this.epoch) return;
      if (reply.statuses.length > 0) found.push(unit);
      if (unit === 1 && reply.statuses.length === 0) return this.lost('amplifier not answering ?10');
      if (found.includes(unit) && !this.fitted.includes(unit)) this.fitted.push(unit);
      if (this.fitted.includes(unit)) this.noteUnit(unit, reply.statuses.length > 0);
      for (const status of reply.statuses) this.learn(status, 'sync');
    }
    if (!this.probed) {
      this.probed = true;
      // Absent units are never asked again: each of their queries costs a full timeout.
      this.fitted = found;
      this.log('info', `monoprice: units fitted: ${found.join(', ')}`);
      if (found.length > 1) this.emit({ type: 'described', description: this.describe() });
    }

    this.phase = 'online';
    this.backoffMs = this.reconnectMinMs;
    this.masterTimeouts = 0;
    this.setStatus(true);
    this.schedulePoll();
    this.kick();
    this.checkSettled();
  }

  /** The link is gone or failed to come up: forget the port, go offline, retry with back-off. */
  private lost(detail: string): void {
    if (this.phase === 'stopped') return;
    this.epoch++;
    this.dropConnectionState();
    const port = this.port;
    this.port = undefined;
    if (port?.isOpen) port.close(() => undefined);
    this.phase = 'offline';
    this.log('warn', `monoprice: offline: ${detail}; retrying in ${this.backoffMs} ms`);
    this.setStatus(false, detail);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, this.reconnectMaxMs);
    this.checkSettled();
  }

  private dropConnectionState(): void {
    if (this.current) this.finish(this.current, 'closed');
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.pollQueue = [];
    this.needsResync = false;
    for (const wait of this.waits) {
      clearTimeout(wait.timer);
      wait.resolve();
    }
    this.waits.clear();
  }

  private setStatus(online: boolean, detail?: string): void {
    if (this.lastStatus === online) return;
    this.lastStatus = online;
    this.emit(detail === undefined ? { type: 'status', online } : { type: 'status', online, detail });
  }

  // ---- work loop -----------------------------------------------------------------------------------------------

  private schedulePoll(): void {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      this.pollQueue = [...this.fitted];
      this.kick();
    }, this.pollIntervalMs);
  }

  /** Wakes the loop on a microtask, so a synchronous burst of setZone calls is seen as one. */
  private kick(): void {
    if (this.phase !== 'online' || this.pumpToken) return;
    queueMicrotask(() => void this.pump());
  }

  /** The only writer while online: resync, then pending writes, then polls; one transaction at a time. */
  private async pump(): Promise<void> {
    if (this.pumpToken) return;
    const token = {};
    this.pumpToken = token;
    const epoch = this.epoch;
    try {
      while (this.phase === 'online' && epoch === this.epoch) {
        if (this.needsResync) {
          this.needsResync = false;
          const r = await this.transact('\r', 0, []);
          this.noteMaster(r.outcome);
          continue;
        }
        const write = this.nextWrite();
        if (write) {
          this.writeInFlight = true;
          const r = await this.transact(encodeSet(write.zone, write.attribute, write.value), 0, []);
          this.writeInFlight = false;
          if (epoch !== this.epoch) break;
          if (r.outcome === 'ok') this.acknowledge(write.zone, write.attribute, write.value);
          if (unitOf(write.zone) === 1) this.noteMaster(r.outcome);
          else if (r.outcome === 'timeout') this.noteUnit(unitOf(write.zone), false);
          this.checkSettled();
          continue;
        }
        // Nothing can be diffed against a zone never read: read its unit again before the regular poll.
        for (const unread of this.unreadUnits()) if (!this.pollQueue.includes(unread)) this.pollQueue.push(unread);
        const unit = this.pollQueue.shift();
        if (unit === undefined) break;
        const r = await this.transact(encodeQuery(unit * 10), ZONES_PER_UNIT, unitZones(unit));
        if (epoch !== this.epoch) break;
        for (const status of r.statuses) this.learn(status, 'poll');
        if (unit === 1) this.noteMaster(r.statuses.length > 0 ? 'ok' : r.outcome);
        else this.noteUnit(unit, r.statuses.length > 0);
        if (this.pollQueue.length === 0 && this.phase === 'online') this.schedulePoll();
      }
    } catch (err) {
      // Nothing above should throw; if it does, the link is in an unknown state, so start it afresh.
      this.log('error', `monoprice: work loop failed: ${(err as Error).stack ?? String(err)}`);
      if (epoch === this.epoch) this.lost('internal error');
    } finally {
      if (this.pumpToken === token) this.pumpToken = undefined;
      this.writeInFlight = false;
      this.checkSettled();
    }
  }

  /** The amp echoed our set: take it as done (it sends no data after a set, so this is all we will know). */
  private acknowledge(zone: number, attribute: Managed, value: number): void {
    const status = this.known.get(zone);
    if (!status) return;
    if (attribute === 'PR') status.power = value === 1;
    else if (attribute === 'MU') status.mute = value === 1;
    else if (attribute === 'VO') status.volume = value;
    else status.source = value;
  }

  /** A slave unit that stops answering must not stall the line: its writes wait until a poll reaches it again. */
  private noteUnit(unit: number, answered: boolean): void {
    if (unit === 1 || answered === !this.unresponsive.has(unit)) return;
    if (answered) this.unresponsive.delete(unit);
    else this.unresponsive.add(unit);
    this.log(answered ? 'info' : 'warn', `monoprice: unit ${unit} ${answered ? 'answers again' : 'stopped answering'}`);
    this.checkSettled();
  }

  private noteMaster(outcome: Outcome): void {
    if (outcome === 'ok' || outcome === 'error') {
      this.masterTimeouts = 0;
      return;
    }
    if (outcome !== 'timeout') return;
    this.masterTimeouts++;
    if (this.masterTimeouts >= this.offlineAfterTimeouts) this.lost(`${this.masterTimeouts} commands unanswered`);
  }

  // ---- transactions --------------------------------------------------------------------------------------------

  private async transact(
    command: string,
    lines: number,
    zones: readonly number[],
  ): Promise<{ outcome: Outcome; statuses: ZoneStatus[] }> {
    const delay = this.lineFreeAt - performance.now();
    if (delay > 0) await this.wait(delay);
    const port = this.port;
    if (!port?.isOpen || this.current || this.phase === 'stopped') return { outcome: 'closed', statuses: [] };
    // Anything still buffered belongs to an earlier exchange; starting clean is what keeps the framing in step.
    this.framer.reset();
    return new Promise((resolve) => {
      const tx: Transaction = {
        reply: new ReplyCollector(lines, new Set(zones)),
        resolve,
        timer: setTimeout(() => {
          this.log('debug', `monoprice: timeout on ${JSON.stringify(command)}`, { buffered: this.framer.buffered });
          this.needsResync = true;
          this.finish(tx, 'timeout');
        }, this.timeoutMs),
      };
      this.current = tx;
      port.write(command, (err) => {
        if (err) {
          this.log('warn', `monoprice: write failed: ${err.message}`);
          this.finish(tx, 'closed');
        }
      });
    });
  }

  private finish(tx: Transaction, outcome: Outcome): void {
    if (this.current !== tx) return;
    clearTimeout(tx.timer);
    this.current = undefined;
    this.lineFreeAt = performance.now() + this.gapMs;
    tx.resolve({ outcome, statuses: tx.reply.statuses });
  }

  private onData(epoch: number, chunk: Buffer): void {
    if (epoch !== this.epoch) return;
    for (const frame of this.framer.push(chunk)) {
      const tx = this.current;
      const done = tx?.reply.accept(frame);
      if (!tx) this.log('debug', 'monoprice: stray line', { frame });
      else if (done) this.finish(tx, done);
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        resolve,
        timer: setTimeout(() => {
          this.waits.delete(entry);
          resolve();
        }, ms),
      };
      this.waits.add(entry);
    });
  }

  private emit(event: DriverEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.log('error', `monoprice: event listener threw: ${(err as Error).message}`);
      }
    }
  }

  private log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void {
    try {
      this.logFn?.(level, msg, fields);
    } catch {
      // A broken logger must not take the serial line down with it.
    }
  }
}
