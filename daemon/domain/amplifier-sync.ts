// Keeps the database and one amplifier in step: rows for what the driver describes, the stored state pushed
// on start, and changes read back from the hardware (keypads, front panel) turned into state and events, under the
// same volume rule as every other path.
import { randomUUID } from 'node:crypto';
import type { AmplifierDriver, DriverEvent, ZoneState } from '../../drivers/driver.js';
import type { AmplifierRef } from '../store/audio-repo.js';
import { refOf, type Amplifier } from './amplifiers.js';
import { volumeToStep } from '../../drivers/driver.js';
import type { Store } from '../store/db.js';
import type { AudioRepo, ZoneRow } from '../store/audio-repo.js';
import type { MetaRepo } from '../store/meta-repo.js';
import type { Logger } from '../log.js';
import type { DomainEvent, EventBus } from './events.js';
import { hardwareOf, limitsOf, newZoneRow, zoneView } from './audio-views.js';
import { effectiveVolume } from './volume-rule.js';
import type { ZoneCommits } from './zone-changes.js';
import { changes } from './zone-apply.js';

export class AmplifierSync {
  private unsubscribe: (() => void) | undefined;
  private readonly driver: AmplifierDriver;
  private readonly ref: AmplifierRef;

  constructor(
    private readonly store: Store,
    private readonly repo: AudioRepo,
    /** Remembers the channels whose zone or input an admin deleted. */
    private readonly meta: MetaRepo,
    private readonly bus: EventBus,
    private readonly amplifier: Amplifier,
    private readonly commits: ZoneCommits,
    private readonly log?: Logger,
  ) {
    this.driver = amplifier.driver;
    this.ref = refOf(amplifier);
  }

  async start(): Promise<void> {
    this.dropRoutesAcrossAmplifiers();
    this.syncDescription();
    this.unsubscribe = this.driver.onEvent((event) => this.onDriverEvent(event));
    this.enforceLimits();
    await this.driver.start(this.storedState());
  }

  /**
   * After the database was replaced underneath (a restore; the repo is already reloaded): as at start, rows for
   * what the amplifier has, then every zone's stored state handed to the driver.
   */
  pushStoredState(): void {
    this.dropRoutesAcrossAmplifiers();
    this.syncDescription();
    this.enforceLimits();
    for (const [channel, state] of this.storedState()) this.driver.setZone(channel, state);
  }

  /** A stored volume above its zone's limit (a database written by other means) is lowered before it is played. */
  private enforceLimits(): void {
    const above = this.ownZones().filter((zone) => zone.volume > zone.max_volume);
    if (above.length === 0) return;
    void this.commits.commit(
      above.map((zone) => ({ before: zone, next: { ...zone, volume: effectiveVolume(limitsOf(zone), zone.volume) } })),
      { durable: true },
    );
  }

  private ownZones(): Readonly<ZoneRow>[] {
    return this.repo.zones().filter((zone) => zone.output_amplifier === this.ref.key && zone.output_driver === this.ref.driver);
  }

  private storedState(): Map<number, ZoneState> {
    return new Map(this.ownZones().map((zone) => [zone.output_channel, hardwareOf(zone)]));
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.driver.stop();
  }

  /**
   * A state read back from the amplifier (a keypad, the front panel): the hardware wins, within the volume rule. A
   * raise above the zone's limit is pulled back on the amplifier and the limit is what is stored and reported; a
   * zone switched on there starts at its turn-on volume.
   */
  private onDriverEvent(event: DriverEvent): void {
    if (event.type === 'status') {
      this.bus.publish({ type: 'hardware.status', payload: { driver: this.driver.name, online: event.online, amplifier: this.amplifier.name } });
      return;
    }
    if (event.type === 'described') {
      this.syncDescription();
      return;
    }
    if (event.type === 'availability') return;
    const zone = this.repo.zoneByOutput(this.ref, event.channel);
    if (!zone) return;
    const steps = this.driver.describe().volumeSteps;
    const limits = limitsOf(zone);
    const next: ZoneRow = { ...zone, power: event.state.power ? 1 : 0, muted: event.state.muted ? 1 : 0, source: event.state.source };
    const heard = volumeToStep(event.state.volume, steps);
    // Keep the client's exact value unless the hardware shows a different step.
    const read = volumeToStep(zone.volume, steps) === heard ? zone.volume : event.state.volume;
    const poweringOn = zone.power === 0 && next.power === 1;
    if (heard > volumeToStep(limits.maxVolume, steps) && !(poweringOn && limits.turnOnVolume !== null)) {
      this.log?.warn(
        { zoneId: zone.id, amplifier: this.amplifier.name, channel: event.channel, maxVolume: limits.maxVolume, read: event.state.volume },
        `zone "${zone.name}" was turned up above its limit on the amplifier; pulled back to ${limits.maxVolume}`,
      );
    }
    next.volume = effectiveVolume(limits, read, { poweringOn });
    if (volumeToStep(next.volume, steps) !== heard) this.driver.setZone(event.channel, { volume: next.volume });
    if (next.source !== zone.source) {
      const owner = this.repo.playerByInput(this.ref, next.source);
      next.player_id = owner?.id ?? null;
    }
    if (!changes({ zone, next })) return;
    // Nobody waits for this commit; a failure is rolled back and reloaded by the store.
    void this.commits.commit([{ before: zone, next }]);
  }

  /**
   * Unlinks zones from players of another amplifier (routes older versions accepted). Only the link goes: the
   * zone keeps its power, mute and source, so nothing audible changes at start.
   */
  private dropRoutesAcrossAmplifiers(): void {
    const crossed = this.repo.zonesRoutedAcrossAmplifiers();
    if (crossed.length === 0) return;
    this.store.transaction(() => {
      for (const zone of crossed) this.repo.updateZone({ ...zone, player_id: null });
    });
  }

  /** Adds rows for zones and inputs the amplifier has and the database lacks; never removes any. */
  private syncDescription(): void {
    const description = this.driver.describe();
    const ref = this.ref;
    const created: DomainEvent[] = [];
    this.store.transaction(() => {
      const now = new Date().toISOString();
      for (const output of description.zones) {
        if (this.repo.zoneByOutput(ref, output.channel)) continue;
        if (this.meta.isDeleted('zone', ref, output.channel)) continue;
        const row = newZoneRow(output.name, ref, output.channel, this.driver.hardwareState(output.channel), now);
        this.repo.insertZone(row);
        created.push({ type: 'zone.created', payload: { zone: zoneView(row, null, this.amplifier.name) } });
      }
      for (const input of description.inputs) {
        if (this.repo.inputByChannel(ref, input.channel)) continue;
        if (this.meta.isDeleted('input', ref, input.channel)) continue;
        const row = {
          id: randomUUID(),
          name: input.name,
          kind: input.kind,
          input_amplifier: ref.key,
          input_driver: ref.driver,
          input_channel: input.channel,
          is_favorite: 0,
          created_at: now,
        };
        this.repo.insertInput(row);
      }
    });
    this.publish(created);
  }

  private publish(events: DomainEvent[]): void {
    for (const event of events) this.bus.publish(event);
  }
}
