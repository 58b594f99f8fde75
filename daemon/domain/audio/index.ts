// The audio capability's entry: players, zones and input devices as services, the zone states scenes capture and
// apply, zone sleep state, and the amplifiers kept in step with the database. The rest of the daemon imports this file.
import type { AmplifierDriver } from '../../../drivers/driver.js';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/db.js';
import type { AudioRepo } from '../../store/audio-repo.js';
import type { UsersRepo } from '../../store/users-repo.js';
import type { MetaRepo } from '../../store/meta-repo.js';
import type { EventBus } from '../shared/index.js';
import { Amplifiers, singleAmplifier } from './amplifiers.js';
import { Availability } from './availability.js';
import { AudioLookup } from './audio-lookup.js';
import { ZoneCommits } from './zone-changes.js';
import { ZoneApplier } from './zone-apply.js';
import { PlayersService } from './players.js';
import { ZonesService } from './zones.js';
import { InputsService } from './inputs.js';
import { ZoneSleep } from './zone-sleep.js';
import { HardwareSync } from './hardware-sync.js';
import { NO_STREAMS, type StreamHooks } from './stream-outputs.js';
import type { AudioParts } from './audio-parts.js';

export { Amplifiers, singleAmplifier, type Amplifier } from './amplifiers.js';
export type { Availability, Skipped } from './availability.js';
export { PlayersService, PLAYER_CHANGE_NONE, type NewPlayer, type PlayerChange } from './players.js';
export {
  outputColumns,
  outputOf,
  placeOutput,
  resolveOutput,
  sameOutput,
  type OutputRequest,
  type StreamHooks,
  type StreamOutputKind,
} from './stream-outputs.js';
export { ZonesService, ZONE_SETTINGS_NONE } from './zones.js';
export { InputsService, INPUT_SETTINGS_NONE } from './inputs.js';
export type { ZoneSleep } from './zone-sleep.js';
export type { HardwareSync } from './hardware-sync.js';
export type { ZoneApplier, ApplyOptions, ApplyOutcome, ZoneTarget } from './zone-apply.js';
export { VOLUME_REQUEST_FIELDS, effectiveVolume, volumeRequestOf, type VolumeRequest } from './volume-rule.js';
export { TONE_NONE, storedTone, toneColumns } from './zone-tone.js';
/** The drivers' mapping between the tone scale (-1..1) and a family's native steps, for views in native steps. */
export { stepToTone, toneToStep } from '../../../drivers/driver.js';

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
