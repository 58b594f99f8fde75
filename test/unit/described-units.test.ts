// Zones of a unit the amplifier has not found (yet): unavailable from the start, and available once the driver
// describes the unit, as a Monoprice probe finds a slave unit after the link comes up.
import t from 'tap';
import type {
  AmplifierDriver,
  DriverDescription,
  DriverListener,
  ZoneAvailability,
  ZoneState,
} from '../../drivers/driver.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { admin, audioRig } from '../helpers/audio-rig.js';

/**
 * The simulated amplifier behind a driver that has not found its second unit (zones 5 and 6) until `find()`, and has
 * read no state of that unit: a stand-in for a serial driver's probe, which the simulated driver does not have.
 * Everything else is passed through.
 */
class UnitProbe implements AmplifierDriver {
  readonly name = 'simulated';
  private readonly inner = new SimulatedDriver({ applyDelayMs: 0 });
  private readonly listeners = new Set<DriverListener>();
  private found = false;

  get online(): boolean {
    return this.inner.online;
  }
  describe(): DriverDescription {
    return this.inner.describe();
  }
  availability(channel: number): ZoneAvailability {
    return channel >= 5 && !this.found
      ? { available: false, reason: 'unit 2 was not found' }
      : this.inner.availability(channel);
  }
  start(desired: ReadonlyMap<number, ZoneState>): Promise<void> {
    this.inner.onEvent((event) => this.emit(event));
    return this.inner.start(desired);
  }
  setZone(channel: number, change: Partial<ZoneState>): void {
    this.inner.setZone(channel, change);
  }
  hardwareState(channel: number): ZoneState | undefined {
    return channel >= 5 ? undefined : this.inner.hardwareState(channel);
  }
  settled(): Promise<void> {
    return this.inner.settled();
  }
  onEvent(listener: DriverListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  stop(): Promise<void> {
    return this.inner.stop();
  }
  /** What the amplifier itself holds on a channel, read or not. */
  held(channel: number): ZoneState | undefined {
    return this.inner.hardwareState(channel);
  }
  /** The probe answered: the unit is fitted, and the driver says so the way serial drivers do. */
  find(): void {
    this.found = true;
    this.emit({ type: 'described', description: this.describe() });
  }
  private emit(event: Parameters<DriverListener>[0]): void {
    for (const listener of this.listeners) listener(event);
  }
}

t.test(
  'zones of a unit not found yet are unavailable from the start, and available once the driver describes it',
  async (t) => {
    const driver = new UnitProbe();
    const { audio, events } = await audioRig(t, { driver });
    const zones = audio.zones.list(admin);
    t.same(
      zones.map((z) => [z.output.channel, z.available]),
      [
        [1, true],
        [2, true],
        [3, true],
        [4, true],
        [5, false],
        [6, false],
      ],
      'read from the driver at start',
    );
    t.equal(zones[4]!.unavailableReason, 'amplifier "simulated" (driver simulated): unit 2 was not found');
    t.same(events, [], 'nothing is announced for the state found at start');

    driver.find();
    t.same(
      audio.zones.list(admin).map((z) => z.available),
      [true, true, true, true, true, true],
    );
    t.same(
      events.filter((e) => e.type === 'zone.availabilityChanged').map((e) => e.payload),
      [zones[4]!, zones[5]!].map((z) => ({ zoneId: z.id, available: true, reason: null })),
      'each zone that came back is announced once',
    );
    await t.resolves(audio.zones.setVolume(admin, zones[5]!.id, 0.4), 'and takes writes');
  },
);

t.test(
  'a limit lowered while a zone could not answer holds its volume once the zone answers, on the amplifier too',
  async (t) => {
    const driver = new UnitProbe();
    const { audio } = await audioRig(t, { driver });
    const zone = audio.zones.list(admin)[5]!;
    t.equal(zone.volume, 0.3, 'a zone whose state was never read starts at the default volume');
    t.match(
      audio.zones.update(admin, zone.id, { maxVolume: 0.2 }),
      { maxVolume: 0.2, volume: 0.3 },
      'stored; the volume is not claimed to move',
    );
    driver.find();
    t.equal(audio.zones.get(admin, zone.id).volume, 0.2, 'held to the limit once available');
    await driver.settled();
    t.equal(Math.round(driver.held(6)!.volume * 38), Math.round(0.2 * 38), 'and sent to the amplifier');
  },
);
