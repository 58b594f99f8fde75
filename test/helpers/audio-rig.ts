// The audio services on a real SQLite file and a driver, without HTTP: what the unit tests of routing and apply share.

import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { type Amplifiers, type Audio, createAudio } from '../../daemon/domain/audio/index.js';
import { asWriter, EventBus, type StampedEvent, type Writer } from '../../daemon/domain/shared/index.js';
import { AudioRepo } from '../../daemon/store/audio-repo.js';
import { Store } from '../../daemon/store/db.js';
import { MetaRepo } from '../../daemon/store/meta-repo.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import type { AmplifierDriver } from '../../drivers/driver.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { tempDir } from './daemon.js';
import './sqlite-guard.js';

/** An admin caller; a Writer too, for the pop-free apply (which leaves the role check to its operation). */
export const admin: Writer = asWriter({
  userId: 'a',
  username: 'a',
  role: 'Admin',
  playerIds: new Set(),
  zoneIds: new Set(),
  credential: { kind: 'apiKey', keyDigest: '00' },
});

export interface AudioRig<D extends AmplifierDriver> {
  dir: string;
  store: Store;
  repo: AudioRepo;
  audio: Audio;
  driver: D;
  bus: EventBus;
  /** Every domain event published since the service started. */
  events: StampedEvent[];
}

/** Starts the audio services on a fresh state directory, on `amplifiers` or the one `driver`; torn down with the test. */
export async function audioRig<D extends AmplifierDriver = SimulatedDriver>(
  t: Test,
  /** `watched`: the test reads the database through a second connection (the store then shares its locks). */
  options: { driver?: D; amplifiers?: Amplifiers; busCapacity?: number; watched?: boolean } = {},
): Promise<AudioRig<D>> {
  const dir = tempDir();
  const store = new Store(path.join(dir, 'azc.db'), { exclusive: !options.watched });
  const driver = options.driver ?? (new SimulatedDriver({ applyDelayMs: 0 }) as unknown as D);
  const repo = new AudioRepo(store);
  const bus = new EventBus(options.busCapacity ?? 64);
  const audio = createAudio({
    store,
    repo,
    users: new UsersRepo(store.db),
    meta: new MetaRepo(store.db),
    bus,
    amplifiers: options.amplifiers ?? driver,
  });
  await audio.hardware.start();
  const events: StampedEvent[] = [];
  bus.subscribe('test', (e) => events.push(e));
  t.teardown(async () => {
    await audio.hardware.stop();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, store, repo, audio, driver, bus, events };
}
