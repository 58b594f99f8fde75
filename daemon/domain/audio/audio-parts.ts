// What the audio services share, built once by createAudio (index.ts): each service's constructor only stores it.

import type { AudioRepo } from '../../store/audio-repo.js';
import type { Store } from '../../store/db.js';
import type { MetaRepo } from '../../store/meta-repo.js';
import type { UsersRepo } from '../../store/users-repo.js';
import type { EventBus } from '../shared/index.js';
import type { Amplifiers } from './amplifiers.js';
import type { AudioLookup } from './audio-lookup.js';
import type { Availability } from './availability.js';
import type { StreamHooks } from './stream-outputs.js';
import type { ZoneCommits } from './zone-changes.js';

export interface AudioParts {
  store: Store;
  repo: AudioRepo;
  /** Assignment lists lose a deleted player or zone in the deletion's transaction. */
  users: UsersRepo;
  /** Remembers the channels whose zone or input an admin deleted. */
  meta: MetaRepo;
  bus: EventBus;
  amplifiers: Amplifiers;
  /** Which zones, players and inputs can take writes now (runtime state, followed from the drivers). */
  availability: Availability;
  /** The one way zone changes are committed and announced. */
  commits: ZoneCommits;
  /** Loads players and zones for a caller, checking it. */
  lookup: AudioLookup;
  /** What the playback capability says about stream players (Audio.attachPlayback). */
  streams: StreamHooks;
}
