// Zone states for scenes and their undo: captured from the zones a caller sees, and put back without pops (silence
// what plays, power on and route, set volumes, and only then unmute; zones that end off go off last). One apply at a time.
import type { AmplifierDriver, ZoneTone } from '../../../drivers/driver.js';
import type { AudioRepo, ZoneRow } from '../../store/audio-repo.js';
import type { Caller, Writer } from '../shared/index.js';
import { invalid, visibleZones } from '../shared/index.js';
import type { AudioLookup } from './audio-lookup.js';
import { limitsOf } from './audio-views.js';
import type { Skipped } from './availability.js';
import { effectiveVolume } from './volume-rule.js';
import type { ZoneChange, ZoneCommits } from './zone-changes.js';
import { knownTone, storedTone, toneColumns, toneDiffers, toneFor, toneViewOf } from './zone-tone.js';

/** The state a scene (or the undo slot) holds for one zone. */
export interface ZoneTarget {
  zoneId: string;
  power: boolean;
  volume: number;
  muted: boolean;
  /** The player feeding the zone; null: none (a player deleted since counts as none). */
  playerId: string | null;
  /** The zone's tone (the controls known); absent: the apply leaves the tone as it is. */
  tone?: ZoneTone;
}

/** One zone of an apply: its row now, the row it ends as, and its amplifier. */
export interface ApplyStep {
  zone: Readonly<ZoneRow>;
  next: ZoneRow;
  driver: AmplifierDriver;
  /** The tone to set (controls the zone's amplifier has), if the target has one. */
  tone?: ZoneTone;
}

/** A zone's state to capture; with `driver`, its tone too (what the zone shows, on the controls its amplifier has). */
export function targetOf(zone: Readonly<ZoneRow>, driver?: AmplifierDriver): ZoneTarget {
  const target: ZoneTarget = {
    zoneId: zone.id,
    power: zone.power === 1,
    volume: zone.volume,
    muted: zone.muted === 1,
    playerId: zone.player_id,
  };
  const tone = driver && knownTone(zone, driver);
  if (tone && Object.keys(tone).length > 0) target.tone = tone;
  return target;
}

/** Whether the tone a row stores differs from another's. */
function toneChanges(zone: Readonly<ZoneRow>, next: Readonly<ZoneRow>): boolean {
  return (
    zone.tone_bass !== next.tone_bass ||
    zone.tone_treble !== next.tone_treble ||
    zone.tone_balance !== next.tone_balance ||
    zone.tone_loudness !== next.tone_loudness
  );
}

/** Whether an apply changes anything the amplifier holds or the API reports for a zone. */
export function changes(step: Pick<ApplyStep, 'zone' | 'next'>): boolean {
  const { zone, next } = step;
  return (
    zone.power !== next.power ||
    zone.muted !== next.muted ||
    zone.volume !== next.volume ||
    zone.source !== next.source ||
    zone.player_id !== next.player_id ||
    toneChanges(zone, next)
  );
}

/** Whether the change would be heard: anything but a mute alone. */
function audible(step: ApplyStep): boolean {
  const { zone, next } = step;
  return zone.power !== next.power || zone.volume !== next.volume || zone.source !== next.source || next.muted === 1;
}

/**
 * Drives the amplifiers through the phases, awaiting `settle` (every change so far on the hardware) between them:
 * 1. mute every zone that plays and is about to change;
 * 2. power on (still muted) the zones that were off, then route sources and set volumes;
 * 3. unmute the zones meant to play, then switch off the zones meant to be off.
 * An amplifier ignores everything but power for a zone that is off, so an off zone's mute, source and volume are
 * recorded last and its driver applies them at the next power-on.
 */
export async function applyWithoutPops(
  steps: readonly ApplyStep[],
  settle: (drivers: Set<AmplifierDriver>) => Promise<void>,
): Promise<void> {
  const drivers = new Set(steps.map((step) => step.driver));
  const channel = (step: ApplyStep) => step.zone.output_channel;
  const on = steps.filter((step) => step.next.power === 1);
  const off = steps.filter((step) => step.next.power === 0);

  for (const step of steps)
    if (step.zone.power === 1 && step.zone.muted === 0 && audible(step))
      step.driver.setZone(channel(step), { muted: true });
  await settle(drivers);

  const poweringOn = on.filter((step) => step.zone.power === 0);
  for (const step of poweringOn) step.driver.setZone(channel(step), { power: true, muted: true });
  if (poweringOn.length > 0) await settle(drivers);
  for (const step of on) step.driver.setZone(channel(step), { source: step.next.source, volume: step.next.volume });
  for (const step of on) if (step.tone) step.driver.setTone?.(channel(step), step.tone);
  await settle(drivers);

  for (const step of on) if (step.next.muted === 0) step.driver.setZone(channel(step), { muted: false });
  for (const step of off) if (step.zone.power === 1) step.driver.setZone(channel(step), { power: false });
  await settle(drivers);
  for (const step of off)
    step.driver.setZone(channel(step), {
      muted: step.next.muted === 1,
      source: step.next.source,
      volume: step.next.volume,
    });
  for (const step of off) if (step.tone) step.driver.setTone?.(channel(step), step.tone);
}

/** What an apply did. */
export interface ApplyOutcome {
  /** The zones it set: every target that could answer. */
  applied: string[];
  /** Of those, the ones whose state changed. */
  changed: string[];
  /** The targets left as they were because they cannot answer (before or during the apply), with the reason. */
  skipped: Skipped[];
}

/** Hooks of one apply, run when its turn in the queue comes. */
export interface ApplyOptions {
  /**
   * Receives the state the apply is about to replace (for an undo slot) of the zones it sets, skipped ones left out,
   * before anything changes; may throw to abort.
   */
  beforeApply?: (current: ZoneTarget[]) => void;
}

/**
 * Captures and applies zone states. An apply goes under the volume rule and says what it did; its caller must see
 * every zone (404 otherwise, as for one zone). A zone that cannot answer is skipped, and named with its reason; when
 * no zone can answer the apply is a 409 and nothing changes. Applies are serialized: each starts when the one before
 * it has finished. The final state is stored in one commit and announced with the usual zone and player events.
 */
export class ZoneApplier {
  /** Each apply waits for the one before it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: AudioRepo,
    private readonly lookup: AudioLookup,
    private readonly commits: ZoneCommits,
    /** How long one phase waits for the amplifiers (an offline one never settles). */
    private readonly settleMs: number,
  ) {}

  /**
   * The current state of some zones, to capture (default: every zone the caller may see that can answer). Unknown
   * or invisible ids are a 400; a zone named that cannot answer is a 409 (its present state is not known).
   */
  capture(caller: Caller, zoneIds?: string[]): ZoneTarget[] {
    const { availability } = this.lookup;
    if (zoneIds === undefined) {
      return visibleZones(caller, this.repo.zones()).flatMap((zone) => {
        const driver = availability.reachable(zone);
        return driver ? [targetOf(zone, driver)] : [];
      });
    }
    const zones = this.lookup.zonesNamed(caller, zoneIds);
    availability.requireZones(zones);
    return zones.map((zone) => targetOf(zone, availability.reachable(zone)));
  }

  /**
   * The current state of the zones named that can answer, and those that cannot with the reason (an announcement
   * plays on the others). Unknown or invisible ids are a 400, as for capture.
   */
  captureSome(caller: Caller, zoneIds: string[]): { targets: ZoneTarget[]; skipped: Skipped[] } {
    const zones = this.lookup.zonesNamed(caller, zoneIds);
    const skipped = this.lookup.availability.unavailable(zones);
    const out = new Set(skipped.map((zone) => zone.zoneId));
    return { targets: zones.filter((zone) => !out.has(zone.id)).map((zone) => targetOf(zone)), skipped };
  }

  /** The ids of every zone the caller may see, in the amplifiers' order (whether they can answer or not). */
  order(caller: Caller): string[] {
    return visibleZones(caller, this.repo.zones()).map((zone) => zone.id);
  }

  /**
   * Applies the targets once the applies before it finished. The operation that calls it checked the caller's role
   * (a Writer). The targets are checked now, and their zones loaded again for the caller when the apply's turn comes
   * (one may be gone by then: a 404, and nothing changes).
   */
  async apply(writer: Writer, targets: ZoneTarget[], options: ApplyOptions = {}): Promise<ApplyOutcome> {
    this.checkTargets(writer, targets);
    const run = this.queue.then(() => this.runApply(writer, targets, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private checkTargets(caller: Caller, targets: readonly ZoneTarget[]): void {
    const seen = new Set<string>();
    for (const target of targets) {
      const id = target.zoneId;
      if (seen.has(id)) throw invalid(`zone ${id} is named twice`, { zones: [`zone ${id} is named twice`] });
      seen.add(id);
      const zone = this.lookup.zoneToSee(caller, id);
      if (!Number.isFinite(target.volume) || target.volume < 0 || target.volume > 1) {
        throw invalid(`the volume for zone "${zone.name}" must be a number from 0 to 1, got ${target.volume}`, {
          volume: ['must be a number from 0 to 1'],
        });
      }
      const player = target.playerId === null ? undefined : this.repo.player(target.playerId);
      if (player) this.lookup.checkSameAmplifier(player, [zone]);
    }
  }

  private async runApply(writer: Writer, targets: readonly ZoneTarget[], options: ApplyOptions): Promise<ApplyOutcome> {
    const { availability } = this.lookup;
    const steps: ApplyStep[] = [];
    const unreachable: ZoneRow[] = [];
    for (const target of targets) {
      const zone = this.lookup.zoneToSee(writer, target.zoneId);
      const driver = availability.reachable(zone);
      if (!driver) {
        unreachable.push(zone);
        continue;
      }
      const player = target.playerId === null ? undefined : this.repo.player(target.playerId);
      // A control the zone's amplifier lacks (a scene edited by hand, or a zone moved) is left out.
      const tone = target.tone && toneFor(driver.describe().sound, target.tone);
      // The target's volume is explicit, so it wins over a turn-on volume; the limit still holds.
      const next: ZoneRow = {
        ...zone,
        ...(tone && toneColumns({ ...storedTone(zone), ...tone })),
        power: target.power ? 1 : 0,
        muted: target.muted ? 1 : 0,
        volume: effectiveVolume(limitsOf(zone), target.volume),
        player_id: player?.id ?? null,
        source: player?.input_channel ?? zone.source,
      };
      steps.push({ zone, next, driver, ...(tone && Object.keys(tone).length > 0 && { tone }) });
    }
    if (steps.length === 0 && unreachable.length > 0) throw availability.refusal(unreachable);
    const skipped = availability.unavailable(unreachable);
    options.beforeApply?.(steps.map((step) => targetOf(step.zone, step.driver)));
    const changing = steps.filter(changes);
    await applyWithoutPops(changing, (drivers) => this.settle(drivers));
    // Stored as applied over whatever the zone is now: a zone deleted meanwhile is left out, and so is one that
    // stopped answering meanwhile (what it holds is read back when it answers again).
    const commits: ZoneChange[] = [];
    const lost = new Set<string>();
    for (const step of changing) {
      const zone = this.repo.zone(step.zone.id);
      if (!zone) continue;
      const reason = availability.zoneReason(zone);
      if (reason !== null) {
        lost.add(zone.id);
        skipped.push({ zoneId: zone.id, reason });
        continue;
      }
      const { power, muted, source, player_id, tone_bass, tone_treble, tone_balance, tone_loudness } = step.next;
      const next: ZoneRow = {
        ...zone,
        power,
        muted,
        source,
        player_id: player_id && this.repo.player(player_id) ? player_id : null,
      };
      if (step.tone) Object.assign(next, { tone_bass, tone_treble, tone_balance, tone_loudness });
      next.volume = effectiveVolume(limitsOf(zone), step.next.volume);
      if (changes({ zone, next })) commits.push({ before: zone, next });
    }
    // The tone is written with the rest of the change, and announced once it is the zone's.
    const toned = commits.filter(({ before, next }) => toneChanges(before, next));
    const shown = new Map(
      toned.map(({ before }) => [before.id, toneViewOf(before, this.lookup.availability.reachable(before))]),
    );
    await this.commits.commit(commits, {
      alongside: () => toned.forEach(({ next }) => this.repo.setZoneTone(next.id, next)),
    });
    for (const { next } of toned) {
      const zone = this.repo.zone(next.id);
      if (!zone) continue;
      const tone = toneViewOf(zone, this.lookup.availability.reachable(zone));
      const was = shown.get(next.id)!;
      if (toneDiffers(was, tone))
        this.commits.bus.publish({ type: 'zone.toneChanged', payload: { zoneId: zone.id, tone } });
    }
    return {
      applied: steps.map((step) => step.zone.id).filter((id) => !lost.has(id)),
      changed: commits.map((change) => change.next.id),
      skipped,
    };
  }

  /** Waits until the amplifiers took every command so far, for at most settleMs. */
  private async settle(drivers: ReadonlySet<AmplifierDriver>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.settleMs);
      timer.unref();
    });
    try {
      await Promise.race([Promise.all([...drivers].map((driver) => driver.settled())), expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}
