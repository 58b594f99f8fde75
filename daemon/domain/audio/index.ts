// The audio capability's entry: players, zones and input devices as services, the zone states scenes capture and
// apply, zone sleep state, and the amplifiers kept in step with the database. The rest of the daemon imports this file.
import type { AmplifierDriver } from '../../../drivers/driver.js';
import type { Logger } from '../../log.js';
import type { AudioRepo } from '../../store/audio-repo.js';
import type { Store } from '../../store/db.js';
import type { MetaRepo } from '../../store/meta-repo.js';
import type { UsersRepo } from '../../store/users-repo.js';
import type { EventBus } from '../shared/index.js';
import { Amplifiers, singleAmplifier } from './amplifiers.js';
import { AudioLookup } from './audio-lookup.js';
import type { AudioParts } from './audio-parts.js';
import { Availability } from './availability.js';
import { HardwareSync } from './hardware-sync.js';
import { InputsService } from './inputs.js';
import { PlayersService } from './players.js';
import { NO_STREAMS, type StreamHooks } from './stream-outputs.js';
import { ZoneApplier } from './zone-apply.js';
import { ZoneCommits } from './zone-changes.js';
import { ZoneSleep } from './zone-sleep.js';
import { ZonesService } from './zones.js';

/** The drivers' mapping between the tone scale (-1..1) and a family's native steps, for views in native steps. */
export { stepToTone, toneToStep } from '../../../drivers/driver.js';
export { type Amplifier, Amplifiers, singleAmplifier } from './amplifiers.js';
export type { Availability, Skipped } from './availability.js';
export type { HardwareSync } from './hardware-sync.js';
export { INPUT_SETTINGS_NONE, InputsService } from './inputs.js';
export { type NewPlayer, PLAYER_CHANGE_NONE, type PlayerChange, PlayersService } from './players.js';
export {
  type OutputRequest,
  outputColumns,
  outputOf,
  placeOutput,
  resolveOutput,
  type StreamHooks,
  type StreamOutputKind,
  sameOutput,
} from './stream-outputs.js';
export { effectiveVolume, VOLUME_REQUEST_FIELDS, type VolumeRequest, volumeRequestOf } from './volume-rule.js';
export type { ApplyOptions, ApplyOutcome, ZoneApplier, ZoneTarget } from './zone-apply.js';
export type { ZoneSleep } from './zone-sleep.js';
export { storedTone, TONE_NONE, toneColumns } from './zone-tone.js';
export { ZONE_SETTINGS_NONE, ZonesService } from './zones.js';

/**
 * How long one phase of a pop-free apply waits for the amplifiers to take its commands. An amplifier that is
 * offline or reconnecting never settles; it gets the final state, in its safe order, when it is back.
 */
const APPLY_SETTLE_MS = 5000;

export interface AudioDeps {
  store: Store;
  repo: AudioRepo;
  users: UsersRepo;
  meta: MetaRepo;
  bus: EventBus;
  /** The amplifiers driven; a bare driver is the single amplifier of --driver. */
  amplifiers: Amplifiers | AmplifierDriver;
  /** Where the amplifier sync reports what it corrected (a keypad raise above a zone's limit). */
  log?: Logger;
  /** See APPLY_SETTLE_MS. */
  applySettleMs?: number;
}

/** The audio services, built together because they share one view of the zones (AudioParts). */
export interface Audio {
  players: PlayersService;
  zones: ZonesService;
  inputs: InputsService;
  /** What scenes capture and apply. */
  zoneStates: ZoneApplier;
  /** Sleep timers' state (the schedule is scenes/sleep-timers.ts). */
  zoneSleep: ZoneSleep;
  /** Started and stopped with the amplifiers; reloaded after a restore. */
  hardware: HardwareSync;
  amplifiers: Amplifiers;
  /** Which zones can take writes now (health counts the silent ones). */
  availability: Availability;
  /**
   * The playback capability, once built, answers about stream players (whether MPD can play an output, whether one
   * plays); until then, and without one, any output is taken and nothing plays.
   */
  attachPlayback(hooks: StreamHooks): void;
}

/** Builds the audio services; nothing runs and nothing is opened until hardware.start(). */
export function createAudio(deps: AudioDeps): Audio {
  const { store, repo, users, meta, bus } = deps;
  const amplifiers =
    deps.amplifiers instanceof Amplifiers ? deps.amplifiers : new Amplifiers([singleAmplifier(deps.amplifiers)]);
  const availability = new Availability(amplifiers);
  const lookup = new AudioLookup(repo, amplifiers, availability);
  const commits = new ZoneCommits(store, repo, bus);
  const parts: AudioParts = {
    store,
    repo,
    users,
    meta,
    bus,
    amplifiers,
    availability,
    commits,
    lookup,
    streams: NO_STREAMS,
  };
  return {
    players: new PlayersService(parts),
    zones: new ZonesService(parts),
    inputs: new InputsService(parts),
    zoneStates: new ZoneApplier(repo, lookup, commits, deps.applySettleMs ?? APPLY_SETTLE_MS),
    zoneSleep: new ZoneSleep(parts),
    hardware: new HardwareSync(parts, deps.log),
    amplifiers,
    availability,
    attachPlayback: (hooks) => {
      parts.streams = hooks;
    },
  };
}
