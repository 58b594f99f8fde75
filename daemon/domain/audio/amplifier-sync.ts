// Keeps the database and one amplifier in step: rows for what the driver describes, the stored state pushed
// on start, changes read back from the hardware (keypads, front panel) turned into state and events under the
// same volume rule as every other path, and which zones can answer (a unit that stops answering, and comes back).
import { randomUUID } from 'node:crypto';
import type {
  AmplifierDriver,
  DriverEvent,
  RememberedZone,
  ZoneAvailability,
  ZoneFlags,
  ZoneState,
  ZoneTone,
} from '../../../drivers/driver.js';
import { toneToStep, volumeToStep } from '../../../drivers/driver.js';
import type { Logger } from '../../log.js';
import type { AmplifierRef, AudioRepo, ZoneRow } from '../../store/audio-repo.js';
import type { Store } from '../../store/db.js';
import type { MetaRepo } from '../../store/meta-repo.js';
import type { AmplifierStatusView, EventBus } from '../shared/index.js';
import { type Amplifier, refOf } from './amplifiers.js';
import { hardwareOf, limitsOf, newZoneRow, zoneView } from './audio-views.js';
import type { Availability } from './availability.js';
import { effectiveVolume } from './volume-rule.js';
import { changes } from './zone-apply.js';
import type { ZoneChange, ZoneCommits } from './zone-changes.js';
import { amplifierStatusOf, statusDiffers, storedTone, toneColumns, toneFor, toneViewOf } from './zone-tone.js';

export class AmplifierSync {
  private unsubscribe: (() => void) | undefined;
  private readonly driver: AmplifierDriver;
  private readonly ref: AmplifierRef;
  /** The status last announced (or first seen) of each zone, by id: a change of it is a zone.statusChanged. */
  private readonly statuses = new Map<string, AmplifierStatusView>();

  constructor(
    private readonly store: Store,
    private readonly repo: AudioRepo,
    /** Remembers the channels whose zone or input an admin deleted. */
    private readonly meta: MetaRepo,
    private readonly bus: EventBus,
    private readonly amplifier: Amplifier,
    private readonly commits: ZoneCommits,
    private readonly availability: Availability,
    private readonly log?: Logger,
  ) {
    this.driver = amplifier.driver;
    this.ref = refOf(amplifier);
  }

  async start(): Promise<void> {
    this.dropRoutesAcrossAmplifiers();
    this.syncDescription();
    this.unsubscribe = this.driver.onEvent((event) => this.onDriverEvent(event));
    this.enforceLimits(this.ownZones());
    await this.driver.start(this.storedState());
    this.storeToneRead();
    this.readAvailability(false);
  }

  /**
   * After the database was replaced underneath (a restore; the repo is already reloaded): as at start, rows for
   * what the amplifier has, then every zone's stored state handed to the driver.
   */
  pushStoredState(): void {
    this.dropRoutesAcrossAmplifiers();
    this.syncDescription();
    this.enforceLimits(this.ownZones());
    const sound = this.driver.describe().sound;
    for (const [channel, { tone, ...state }] of this.storedState()) {
      this.driver.setZone(channel, state);
      const kept = tone && toneFor(sound, tone);
      if (kept && Object.keys(kept).length > 0) this.driver.setTone?.(channel, kept);
    }
    this.readAvailability(false);
  }

  /**
   * A stored volume above its zone's limit (a database written by other means, or a limit lowered while the zone
   * could not answer) is lowered before it is played.
   */
  private enforceLimits(zones: readonly Readonly<ZoneRow>[]): ZoneChange[] {
    const lowered = zones
      .filter((zone) => zone.volume > zone.max_volume)
      .map((zone) => ({ before: zone, next: { ...zone, volume: effectiveVolume(limitsOf(zone), zone.volume) } }));
    if (lowered.length > 0) void this.commits.commit(lowered, { durable: true });
    return lowered;
  }

  private ownZones(): Readonly<ZoneRow>[] {
    return this.repo
      .zones()
      .filter((zone) => zone.output_amplifier === this.ref.key && zone.output_driver === this.ref.driver);
  }

  /** What the daemon last knew of each zone: its state, and its tone where one was stored. */
  private storedState(): Map<number, RememberedZone> {
    return new Map(
      this.ownZones().map((zone) => {
        const tone = storedTone(zone);
        return [zone.output_channel, Object.keys(tone).length > 0 ? { ...hardwareOf(zone), tone } : hardwareOf(zone)];
      }),
    );
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
    switch (event.type) {
      case 'status':
        this.bus.publish({
          type: 'hardware.status',
          payload: { driver: this.driver.name, online: event.online, amplifier: this.amplifier.name },
        });
        return;
      case 'described':
        this.syncDescription();
        this.readAvailability(true);
        return;
      case 'availability': {
        const zone = this.repo.zoneByOutput(this.ref, event.channel);
        if (zone)
          this.followAvailability(
            zone,
            event.available ? { available: true } : { available: false, reason: event.reason },
          );
        return;
      }
      case 'zone': {
        const zone = this.repo.zoneByOutput(this.ref, event.channel);
        if (!zone) return;
        this.adopt(zone, event.state);
        if (event.tone) this.adoptTone(zone, event.tone);
        if (event.flags) this.followStatus(zone, event.flags);
      }
    }
  }

  /**
   * A state the amplifier reports for a zone is the truth about the present, adopted within the volume rule: a raise
   * above the limit is pulled back on the amplifier and the limit is stored and reported; a zone switched on there
   * starts at its turn-on volume.
   */
  private adopt(zone: Readonly<ZoneRow>, state: ZoneState): void {
    const channel = zone.output_channel;
    const steps = this.driver.describe().volumeSteps;
    const limits = limitsOf(zone);
    const next: ZoneRow = { ...zone, power: state.power ? 1 : 0, muted: state.muted ? 1 : 0, source: state.source };
    const heard = volumeToStep(state.volume, steps);
    // Keep the client's exact value unless the hardware shows a different step.
    const read = volumeToStep(zone.volume, steps) === heard ? zone.volume : state.volume;
    const poweringOn = zone.power === 0 && next.power === 1;
    if (heard > volumeToStep(limits.maxVolume, steps) && !(poweringOn && limits.turnOnVolume !== null)) {
      this.log?.warn(
        { zoneId: zone.id, amplifier: this.amplifier.name, channel, maxVolume: limits.maxVolume, read: state.volume },
        `zone "${zone.name}" was turned up above its limit on the amplifier; pulled back to ${limits.maxVolume}`,
      );
    }
    next.volume = effectiveVolume(limits, read, { poweringOn });
    if (volumeToStep(next.volume, steps) !== heard) this.driver.setZone(channel, { volume: next.volume });
    if (next.source !== zone.source) {
      const owner = this.repo.playerByInput(this.ref, next.source);
      next.player_id = owner?.id ?? null;
    }
    if (!changes({ zone, next })) return;
    // Nobody waits for this commit; a failure is rolled back and reloaded by the store.
    void this.commits.commit([{ before: zone, next }]);
  }

  /**
   * Stores, without an event, the tone the driver read for the controls a zone has none stored of (a database from
   * before tone controls, or a new zone): a later read is then compared with what the amplifier had.
   */
  private storeToneRead(): void {
    const sound = this.driver.describe().sound;
    const filled = this.ownZones().flatMap((zone) => {
      const read = this.driver.hardwareTone?.(zone.output_channel);
      if (!read) return [];
      const columns = toneColumns({ ...toneFor(sound, read), ...storedTone(zone) });
      const same = columns.tone_bass === zone.tone_bass && columns.tone_treble === zone.tone_treble;
      return same && columns.tone_balance === zone.tone_balance && columns.tone_loudness === zone.tone_loudness
        ? []
        : [{ id: zone.id, columns }];
    });
    // Written before start() resolves, not in a later group commit: it belongs to the start, not to the first turn
    // of requests (whose commit would otherwise carry these rows too).
    if (filled.length > 0)
      this.store.transaction(() => filled.forEach(({ id, columns }) => this.repo.setZoneTone(id, columns)));
  }

  /**
   * A tone read from the amplifier (a keypad, the front panel) is the zone's tone now: stored like a volume read
   * back, and announced when it differs from the stored one. (The driver holds the new tone already, so the
   * stored one is what it is compared with; a zone with none stored yet is announced once, with the tone read.)
   */
  private adoptTone(zone: Readonly<ZoneRow>, tone: ZoneTone): void {
    const sound = this.driver.describe().sound;
    const stored = storedTone(zone);
    const read = toneFor(sound, tone);
    // Keep the client's exact value unless the amplifier shows a different step, as for the volume.
    for (const control of ['bass', 'treble', 'balance'] as const) {
      const scale = sound?.controls[control];
      const kept = stored[control];
      if (kept === undefined || read[control] === undefined || !scale || 'absent' in scale) continue;
      if (toneToStep(kept, scale) === toneToStep(read[control], scale)) read[control] = kept;
    }
    const columns = toneColumns({ ...stored, ...read });
    if (
      columns.tone_bass === zone.tone_bass &&
      columns.tone_treble === zone.tone_treble &&
      columns.tone_balance === zone.tone_balance &&
      columns.tone_loudness === zone.tone_loudness
    ) {
      return;
    }
    // Nobody waits for this commit; a failure is rolled back and reloaded by the store.
    void this.store.commitSoon(() => this.repo.setZoneTone(zone.id, columns));
    this.bus.publish({
      type: 'zone.toneChanged',
      payload: { zoneId: zone.id, tone: toneViewOf(this.repo.zone(zone.id) ?? zone, this.driver) },
    });
  }

  /**
   * What the amplifier reports about the zone (paging, do-not-disturb, party): announced when it changes. The first
   * report after a start is announced only when something is on, since nothing was known before it.
   */
  private followStatus(zone: Readonly<ZoneRow>, flags: ZoneFlags): void {
    const status = amplifierStatusOf(flags);
    const before = this.statuses.get(zone.id);
    this.statuses.set(zone.id, status);
    const changed = before
      ? statusDiffers(before, status)
      : status.paging === true || status.doNotDisturb === true || status.party === true;
    if (changed)
      this.bus.publish({ type: 'zone.statusChanged', payload: { zoneId: zone.id, amplifierStatus: status } });
  }

  /** Reads what the driver says about each zone of this amplifier; `announce` publishes every change. */
  private readAvailability(announce: boolean): void {
    for (const zone of this.ownZones())
      this.followAvailability(zone, this.driver.availability(zone.output_channel), announce);
  }

  /**
   * A zone became unavailable or available again: announced, and on its return the amplifier's state of the zone is
   * adopted (nothing written while it could not answer reached it) and its limit enforced.
   */
  private followAvailability(zone: Readonly<ZoneRow>, said: ZoneAvailability, announce = true): void {
    if (!this.availability.record(zone, this.amplifier, said)) return;
    if (!announce) return;
    const reason = this.availability.zoneReason(zone);
    this.bus.publish({
      type: 'zone.availabilityChanged',
      payload: { zoneId: zone.id, available: reason === null, reason },
    });
    if (reason !== null) return;
    const hardware = this.driver.hardwareState(zone.output_channel);
    if (hardware) this.adopt(zone, hardware);
    else
      for (const { next } of this.enforceLimits([zone]))
        this.driver.setZone(next.output_channel, { volume: next.volume });
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
    const created: ZoneRow[] = [];
    this.store.transaction(() => {
      const now = new Date().toISOString();
      for (const output of description.zones) {
        if (this.repo.zoneByOutput(ref, output.channel)) continue;
        if (this.meta.isDeleted('zone', ref, output.channel)) continue;
        const row = newZoneRow(output.name, ref, output.channel, this.driver.hardwareState(output.channel), now);
        this.repo.insertZone(row);
        created.push(row);
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
    for (const row of created) {
      this.availability.record(row, this.amplifier, this.driver.availability(row.output_channel));
      const zone = zoneView(row, null, this.amplifier.name, this.availability.zoneReason(row), this.driver);
      this.bus.publish({ type: 'zone.created', payload: { zone } });
    }
  }
}
