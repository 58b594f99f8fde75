// The serial amplifier driver every family shares: the driver interface, the lifecycle and the connection phases, on
// the shared work loop (work-loop.ts). A family supplies its link (framing, exchanges), its topology, how one read
// and one write go on the wire, and the handshake a new connection begins with.
import type {
  AmplifierDriver,
  DriverDescription,
  DriverListener,
  RememberedZone,
  ZoneAvailability,
  ZoneFlags,
  ZoneState,
  ZoneTone,
} from '../driver.js';
import { checkTone } from '../driver.js';
import { monotonicClock } from './clock.js';
import { DriverEvents } from './events.js';
import {
  type CoreOptions,
  type FirstRead,
  type LineOptions,
  type SerialOptions,
  type SerialTimings,
  TIMINGS,
} from './serial-options.js';
import { WorkLoop } from './work-loop.js';

export abstract class SerialDriver extends WorkLoop implements AmplifierDriver {
  /** The family's name, as configuration chooses it. */
  readonly name: string;

  protected constructor(
    private readonly core: CoreOptions,
    private readonly options: SerialOptions & { serialPort: string },
  ) {
    const timings = Object.fromEntries(
      TIMINGS.map((key) => [key, options[key] ?? core.defaults[key]]),
    ) as SerialTimings;
    super(
      core.family,
      core.topology,
      options.clock ?? monotonicClock,
      timings,
      new DriverEvents(core.family, options.log),
      {
        configured: core.configured ?? [],
        probeOthers: core.probeOthers,
        maxRefusals: core.maxRefusals,
      },
    );
    this.name = core.family;
  }

  /** The options of the family's link: the port, the timings, and this driver's connection callbacks. */
  protected lineOptions(baudRate = this.timings.baudRate): LineOptions {
    const { openPort } = this.options;
    return {
      path: this.options.serialPort,
      baudRate,
      timeoutMs: this.timings.commandTimeoutMs,
      gapMs: this.timings.interCommandGapMs,
      reconnectMinMs: this.timings.reconnectMinMs,
      reconnectMaxMs: this.timings.reconnectMaxMs,
      clock: this.clock,
      ...(openPort ? { openPort } : {}),
      log: (level, msg, fields) => this.log(level, msg, fields),
      onUp: () => void this.begin(),
      onDown: (detail) => this.linkDown(detail),
    };
  }

  get online(): boolean {
    return this.phase === 'online';
  }

  describe(): DriverDescription {
    const zones = this.units
      .fittedUnits()
      .flatMap((unit) =>
        this.topology.channels(unit).map((channel) => ({ channel, name: this.topology.zoneName(channel) })),
      );
    return { zones, inputs: this.core.inputs, volumeSteps: this.core.volumeSteps, sound: this.core.sound };
  }

  async start(remembered: ReadonlyMap<number, RememberedZone>): Promise<void> {
    if (this.phase !== 'new') return;
    for (const [channel, state] of remembered) {
      if (this.checkChannel(channel)) continue;
      this.book.remember(channel, state);
      this.units.remember(channel);
    }
    this.phase = 'connecting';
    this.link.start();
  }

  setZone(channel: number, change: Partial<ZoneState>): void {
    this.intend(channel, change);
  }

  /** A tone intent: checked against the family's controls first (a RangeError changes nothing), then as setZone. */
  setTone(channel: number, change: ZoneTone): void {
    checkTone(change, this.core.sound);
    this.intend(channel, change);
  }

  private intend(channel: number, change: Partial<ZoneState> & ZoneTone): void {
    if (this.phase === 'stopped') return;
    const complaint = this.checkChannel(channel);
    const availability = complaint ? undefined : this.units.availability(channel);
    if (availability && !availability.available) {
      this.log(
        'debug',
        `${this.name}: zone ${channel} is unavailable (${availability.reason}); the change is not sent`,
      );
      return;
    }
    const refused = complaint ?? this.book.record(channel, change);
    if (refused) this.log('warn', `${this.name}: ${refused}`);
    else this.activity();
    this.kick();
    this.checkSettled();
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

  availability(channel: number): ZoneAvailability {
    const complaint = this.checkChannel(channel);
    return complaint ? { available: false, reason: complaint } : this.units.availability(channel);
  }

  settled(): Promise<void> {
    return this.events.settled(this.isSettled());
  }

  onEvent(listener: DriverListener): () => void {
    return this.events.subscribe(listener);
  }

  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.dropSession();
    await this.link.stop();
    this.checkSettled();
  }

  // ---- what each family supplies besides read() and send() (work-loop.ts) -------------------------------------------

  /**
   * The port is open: the family's first exchanges (its master must answer). Resolves with that first read, or
   * undefined when the connection is over (the family failed the link, or the port went away).
   */
  protected abstract handshake(connection: number): Promise<FirstRead | undefined>;
  /** Undefined for a channel the family can address, else the complaint naming the valid ones. */
  protected abstract checkChannel(channel: number): string | undefined;

  // ---- connection ------------------------------------------------------------------------------------------------

  /** The link's onUp: the handshake, then every fitted unit is read (unknown ones probed) before anything is written. */
  protected async begin(): Promise<void> {
    const connection = this.link.connection;
    this.phase = 'connecting';
    const first = await this.handshake(connection);
    if (connection !== this.link.connection || !first) return;
    this.phase = 'online';
    this.link.healthy();
    this.units.newSession();
    for (const unit of this.units.fittedUnits()) for (const address of this.unitReads(unit)) this.plan.sync(address);
    for (const unit of this.units.unprobedUnits()) this.plan.sync(this.topology.probeRead(unit));
    this.afterRead({ address: first.address, purpose: 'sync' }, first.reply, first.stamp);
    this.events.status(true);
    this.schedulePoll();
    this.kick();
    this.checkSettled();
  }

  /** The link's onDown: offline until it reopens; intents stay, to be written on return. */
  protected linkDown(detail: string): void {
    if (this.phase === 'stopped') return;
    this.phase = 'offline';
    this.dropSession();
    this.events.status(false, detail);
    this.checkSettled();
  }
}
