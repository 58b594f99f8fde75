// Keeps the database and one amplifier in step: rows for what the driver describes, the stored state pushed
// on start, and changes read back from the hardware (keypads, front panel) turned into state and events.
import { randomUUID } from 'node:crypto';
import type { AmplifierDriver, DriverEvent, ZoneState } from '../../drivers/driver.js';
import type { AmplifierRef } from '../store/audio-repo.js';
import { refOf, type Amplifier } from './amplifiers.js';
import { volumeToStep } from '../../drivers/driver.js';
import type { Store } from '../store/db.js';
import type { AudioRepo, ZoneRow } from '../store/audio-repo.js';
import type { MetaRepo } from '../store/meta-repo.js';
import type { DomainEvent, EventBus } from './events.js';
import { hardwareOf, newZoneRow, zoneEvents, zonesChangedEvent, zoneView } from './audio-views.js';

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
  ) {
    this.driver = amplifier.driver;
    this.ref = refOf(amplifier);
  }

  async start(): Promise<void> {
    this.dropRoutesAcrossAmplifiers();
    this.syncDescription();
    this.unsubscribe = this.driver.onEvent((event) => this.onDriverEvent(event));
    const desired = new Map<number, ZoneState>();
    for (const zone of this.repo.zones()) {
      if (zone.output_amplifier === this.ref.key && zone.output_driver === this.ref.driver) desired.set(zone.output_channel, hardwareOf(zone));
    }
    await this.driver.start(desired);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.driver.stop();
  }

  /** A state read back from the amplifier (a keypad, the front panel): the hardware wins. */
  private onDriverEvent(event: DriverEvent): void {
    if (event.type === 'status') {
      this.bus.publish({ type: 'hardware.status', payload: { driver: this.driver.name, online: event.online, amplifier: this.amplifier.name } });
      return;
    }
    if (event.type === 'described') {
      this.syncDescription();
      return;
    }
    const zone = this.repo.zoneByOutput(this.ref, event.channel);
    if (!zone) return;
    const steps = this.driver.describe().volumeSteps;
    const next: ZoneRow = { ...zone, power: event.state.power ? 1 : 0, muted: event.state.muted ? 1 : 0, source: event.state.source };
    // Keep the client's exact value unless the hardware shows a different step.
    if (volumeToStep(zone.volume, steps) !== volumeToStep(event.state.volume, steps)) next.volume = event.state.volume;
    const events = zoneEvents(zone, next);
    if (next.source !== zone.source) {
      const owner = this.repo.playerByInput(this.ref, next.source);
      next.player_id = owner?.id ?? null;
    }
    if (events.length === 0 && next.player_id === zone.player_id && next.source === zone.source) return;
    // Nobody waits for this commit; a failure is rolled back and reloaded by the store.
    void this.store.commitSoon(() => this.repo.updateZone(next));
    if (next.player_id !== zone.player_id) {
      if (zone.player_id) events.push(zonesChangedEvent(this.repo, zone.player_id));
      if (next.player_id) events.push(zonesChangedEvent(this.repo, next.player_id));
    }
    this.publish(events);
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
