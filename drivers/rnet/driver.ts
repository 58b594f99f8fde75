// Russound RNET driver (CAA66, CAM6.6, CAV6.6, CAS44, MCA in RNET mode): probing, polling, keypad events, coalescing.
//
// Zone channels are controller*10 + zone: 11..16 on controller 1, 21..26 on controller 2, up to 61..66. This keeps a
// zone's channel stable when another controller is added to the bus, reads the way installers label zones
// ("controller 2, zone 3" is 23), leaves room for MCA units with up to 8 zones, and matches the Monoprice driver.
import type { DriverDescription, DriverOptions } from '../driver.js';
import { SerialDriver } from '../serial-driver.js';
import { RnetLink, type Outcome, type Reply } from './link.js';
import {
  MAX_CONTROLLERS,
  SOURCE_COUNT,
  VOLUME_STEPS,
  ZONES_PER_CONTROLLER,
  channelOf,
  controllerChannels,
  controllerOf,
  encodeMuteToggle,
  encodeSource,
  encodeVolume,
  encodeZonePower,
  zoneOf,
  type Heard,
} from './protocol.js';
import { ZoneBook, type Write } from './zone-book.js';

export interface RnetOptions extends DriverOptions {
  /** Quiet time after every message; the RS-232 doc asks for ~100 ms when using keypad id 0x70 without handshakes. */
  interCommandGapMs?: number;
  /** First reconnect delay; doubles per failed attempt up to reconnectMaxMs. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Consecutive unanswered requests to controller 1 that mean the system is off, booting or unplugged. */
  offlineAfterTimeouts?: number;
}

/** Defaults and their reasons live here, not spread through the code. */
export const RNET_DEFAULTS = {
  baudRate: 19200,
  // A poll reads every zone (6 requests of ~130 ms per controller); keypad traffic on the bus triggers a read of
  // its zone at once, so the poll only catches what the bus did not show.
  pollIntervalMs: 5000,
  commandTimeoutMs: 500, // a zone info reply is 34 bytes, ~18 ms at 19200 baud; aiorussound waits 0.5 s
  interCommandGapMs: 100,
  // A controller that is still booting ignores requests for several seconds: keep asking, no more than every 5 s.
  reconnectMinMs: 500,
  reconnectMaxMs: 5000,
  offlineAfterTimeouts: 3,
} as const;

/** Read-backs in a row that show a zone without our change before the driver stops sending it. */
const MAX_RETRIES = 3;

export class RnetDriver extends SerialDriver {
  readonly name = 'rnet';
  protected readonly link: RnetLink;
  protected readonly zones = new ZoneBook();
  private readonly pollIntervalMs: number;
  private readonly offlineAfterTimeouts: number;

  private fitted: number[] = [1];
  /** Controllers not probed yet; each is asked once (zone 1) on the first connection: absent ones never again. */
  private readonly unprobed = new Set(Array.from({ length: MAX_CONTROLLERS - 1 }, (_, i) => i + 2));
  /** Zones read on this connection whose controller still answers: writes and diffs use their state. */
  private readonly fresh = new Set<number>();
  /** Zones to read before anything else on this connection (and controller probes, as their zone 1). */
  private readonly syncing = new Set<number>();
  /** Zones to read at the next turn: keypad hints first, then the regular poll. */
  private readQueue: number[] = [];
  /**
   * Zones written since they were last read. RNET answers no set, so each zone is read back once its writes are
   * done: that read is what settled() waits for, and a set lost on the line is sent again.
   */
  private readonly unverified = new Set<number>();
  private readonly verifyFailures = new Map<number, number>();
  /** Zones a wall keypad acted on since their last read: a read-back then shows the keypad's change, not a lost set. */
  private readonly touched = new Set<number>();

  private masterTimeouts = 0;

  constructor(options: RnetOptions & { serialPort: string }) {
    super('rnet', options);
    this.pollIntervalMs = options.pollIntervalMs ?? RNET_DEFAULTS.pollIntervalMs;
    this.offlineAfterTimeouts = options.offlineAfterTimeouts ?? RNET_DEFAULTS.offlineAfterTimeouts;
    this.link = new RnetLink({
      path: options.serialPort,
      baudRate: options.baudRate ?? RNET_DEFAULTS.baudRate,
      timeoutMs: options.commandTimeoutMs ?? RNET_DEFAULTS.commandTimeoutMs,
      gapMs: options.interCommandGapMs ?? RNET_DEFAULTS.interCommandGapMs,
      reconnectMinMs: options.reconnectMinMs ?? RNET_DEFAULTS.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? RNET_DEFAULTS.reconnectMaxMs,
      log: (level, msg, fields) => this.log(level, msg, fields),
      onUp: () => void this.begin(),
      onDown: (detail) => this.linkDown(detail),
      onHeard: (heard) => this.heard(heard),
    });
  }

  describe(): DriverDescription {
    const zones = this.fitted.flatMap((controller) =>
      controllerChannels(controller).map((channel) => ({
        channel,
        name: `Zone ${(controller - 1) * ZONES_PER_CONTROLLER + zoneOf(channel)}`,
      })),
    );
    const inputs = Array.from({ length: SOURCE_COUNT }, (_, i) => ({ channel: i + 1, name: `Source ${i + 1}`, kind: 'line-in' }));
    return { zones, inputs, volumeSteps: VOLUME_STEPS };
  }

  // ---- desired state -------------------------------------------------------------------------------------------

  protected isSettledOnline(): boolean {
    const verifying = [...this.unverified].some((channel) => this.fresh.has(channel));
    return !verifying && this.syncing.size === 0 && this.zones.nextWrite(this.fresh) === undefined;
  }

  // ---- session ---------------------------------------------------------------------------------------------------

  /**
   * The port is open: controller 1 must answer for the link to count as up. A controller that is off or still
   * booting does not; the link then closes and retries with back-off, the driver staying offline meanwhile, and the
   * desired state is pushed once it answers. The other zones (and, on the first connection, the other controllers)
   * are read by the work loop.
   */
  protected async begin(): Promise<void> {
    const session = this.link.session;
    this.phase = 'connecting';
    const reply = await this.link.request(1, 1);
    if (session !== this.link.session) return;
    if (reply.outcome !== 'ok') return this.link.fail('controller 1 not answering (powered off or still booting?)');
    this.phase = 'online';
    this.link.healthy();
    this.masterTimeouts = 0;
    this.zones.forgetMutes();
    for (const controller of this.fitted) for (const channel of controllerChannels(controller)) this.syncing.add(channel);
    for (const controller of this.unprobed) this.syncing.add(channelOf(controller, 1));
    this.afterRead(11, reply);
    this.goOnline();
  }

  protected resetSession(): void {
    this.readQueue = [];
    this.syncing.clear();
    this.fresh.clear();
    this.unverified.clear();
    this.verifyFailures.clear();
    this.touched.clear();
  }

  // ---- bus traffic -------------------------------------------------------------------------------------------------

  /**
   * Unsolicited frames. A wall keypad's event names its zone: that zone is read at the next turn, so the change it
   * made is reported without waiting for the poll (the key's effect depends on the keypad's programming, so the
   * read, not the key, says what changed). A mute toggle is the exception: no read can show it.
   */
  private heard(heard: Heard): void {
    if (heard.kind !== 'keypad' || this.phase !== 'online') return;
    const channel = channelOf(heard.controller, heard.zone);
    if (!this.fitted.includes(heard.controller) || heard.zone > ZONES_PER_CONTROLLER) return;
    if (heard.mute) {
      const state = this.zones.toggledMute(channel);
      if (state) this.emit({ type: 'zone', channel, state });
    }
    this.touched.add(channel);
    this.unverified.delete(channel);
    this.readQueue = [channel, ...this.readQueue.filter((c) => c !== channel)];
    this.kick();
  }

  // ---- work loop -----------------------------------------------------------------------------------------------

  protected pollDelayMs(): number {
    return this.pollIntervalMs;
  }

  protected queuePoll(): void {
    for (const controller of this.fitted) {
      // A controller that stopped answering is asked through one zone until it answers again.
      const channels = controller === 1 || this.isLive(controller) ? controllerChannels(controller) : [channelOf(controller, 1)];
      for (const channel of channels) this.queueRead(channel);
    }
  }

  private queueRead(channel: number): void {
    if (!this.readQueue.includes(channel)) this.readQueue.push(channel);
  }

  private isLive(controller: number): boolean {
    return controllerChannels(controller).some((channel) => this.fresh.has(channel));
  }

  /**
   * Pending writes first, then reads (syncs and probes before polls). The next write is chosen only after the
   * previous one's gap, so a burst collapses to its latest value.
   */
  protected async turn(session: number): Promise<boolean> {
    const write = this.zones.nextWrite(this.fresh);
    if (write) {
      this.writeInFlight = true;
      const reply = await this.link.send(encodeWrite(write));
      this.writeInFlight = false;
      if (session !== this.link.session || reply.outcome === 'closed') return false;
      this.zones.acknowledge(write);
      this.unverified.add(write.channel);
      return true;
    }
    const check = this.nextCheck();
    const channel = check ?? (this.syncing.size > 0 ? Math.min(...this.syncing) : this.readQueue.shift());
    if (channel === undefined) return false;
    const reply = await this.link.request(controllerOf(channel), zoneOf(channel));
    if (session !== this.link.session || reply.outcome === 'closed') return false;
    if (check !== undefined) this.afterCheck(channel, reply);
    else this.afterRead(channel, reply);
    if (this.readQueue.length === 0 && this.syncing.size === 0 && this.phase === 'online') this.schedulePoll();
    return true;
  }

  /** The next zone to read back after writes: one whose controller still answers. */
  private nextCheck(): number | undefined {
    for (const channel of this.unverified) if (this.fresh.has(channel)) return channel;
    return undefined;
  }

  /**
   * The read-back after writes. A mismatch means a set was lost on the line (noise): it goes out again, a few times;
   * after that the controller is taken to refuse it, and its value is reported and kept.
   */
  private afterCheck(channel: number, reply: Reply): void {
    if (this.touched.has(channel)) {
      this.unverified.delete(channel);
      return this.afterRead(channel, reply); // a keypad acted meanwhile: what differs is its change
    }
    const controller = controllerOf(channel);
    if (controller === 1) this.noteMaster(reply.outcome);
    if (reply.outcome !== 'ok' || !reply.info) {
      if (reply.outcome === 'timeout') this.lost(controller);
      return; // still unverified: asked again at the next turn
    }
    this.unverified.delete(channel);
    if (this.zones.verify(reply.info, channel)) {
      this.verifyFailures.delete(channel);
    } else {
      const failures = (this.verifyFailures.get(channel) ?? 0) + 1;
      this.verifyFailures.set(channel, failures);
      this.log('debug', `rnet: zone ${channel} did not take a set; sending it again`);
      if (failures >= MAX_RETRIES) {
        this.verifyFailures.delete(channel);
        this.log('warn', `rnet: zone ${channel} ignored the same change ${failures} times; keeping its own value`);
        const state = this.zones.adoptHardware(channel);
        if (state) this.emit({ type: 'zone', channel, state });
      }
    }
    this.checkSettled();
  }

  /** Takes in the reply to one zone's info request: its state, and whether its controller is there. */
  private afterRead(channel: number, reply: Reply): void {
    const controller = controllerOf(channel);
    this.syncing.delete(channel);
    const answered = reply.outcome === 'ok' && reply.info !== undefined;
    if (this.unprobed.delete(controller)) this.probed(controller, answered);
    if (controller === 1) this.noteMaster(reply.outcome);
    if (!this.fitted.includes(controller)) return;
    if (!answered) {
      if (reply.outcome === 'timeout') this.lost(controller);
      return;
    }
    this.touched.delete(channel);
    const mode = this.fresh.has(channel) ? 'poll' : 'sync';
    const state = this.zones.learn(reply.info!, channel, mode);
    if (state) this.emit({ type: 'zone', channel, state });
    if (mode === 'sync' && !this.isLive(controller) && controller !== 1) {
      this.log('info', `rnet: controller ${controller} answers`);
      // Back after a silence: every zone of it is read again before anything is written there.
      for (const other of controllerChannels(controller)) if (other !== channel) this.syncing.add(other);
    }
    this.fresh.add(channel);
    this.checkSettled();
  }

  private probed(controller: number, answered: boolean): void {
    // A controller that answers has its other zones read next, like any controller coming back (afterRead).
    if (answered) this.fitted = [...this.fitted, controller].sort((a, b) => a - b);
    if (this.unprobed.size > 0) return;
    this.log('info', `rnet: controllers on the bus: ${this.fitted.join(', ')}`);
    if (this.fitted.length > 1) this.emit({ type: 'described', description: this.describe() });
  }

  /** A controller that stops answering must not stall the line: its writes wait until a read reaches it again. */
  private lost(controller: number): void {
    if (controller === 1) return;
    const had = this.isLive(controller);
    for (const channel of controllerChannels(controller)) {
      this.fresh.delete(channel);
      this.syncing.delete(channel);
      this.unverified.delete(channel);
    }
    this.readQueue = this.readQueue.filter((channel) => controllerOf(channel) !== controller);
    if (had) this.log('warn', `rnet: controller ${controller} stopped answering`);
    this.checkSettled();
  }

  private noteMaster(outcome: Outcome): void {
    if (outcome === 'ok') {
      this.masterTimeouts = 0;
      return;
    }
    if (outcome !== 'timeout') return;
    this.masterTimeouts++;
    if (this.masterTimeouts >= this.offlineAfterTimeouts) {
      this.link.fail(`${this.masterTimeouts} requests to controller 1 unanswered (powered off?)`);
      return;
    }
    // Ask again at once, so a dead controller is found within a few timeouts rather than a few poll intervals.
    this.readQueue = [11, ...this.readQueue.filter((c) => c !== 11)];
  }
}

function encodeWrite(write: Write): Buffer {
  const controller = controllerOf(write.channel);
  const zone = zoneOf(write.channel);
  switch (write.kind) {
    case 'power':
      return encodeZonePower(controller, zone, write.value);
    case 'source':
      return encodeSource(controller, zone, write.value);
    case 'volume':
      return encodeVolume(controller, zone, write.value);
    case 'mute':
      return encodeMuteToggle(controller, zone);
  }
}
