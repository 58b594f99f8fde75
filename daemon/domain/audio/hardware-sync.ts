// The amplifiers kept in step with the database, all of them: started and stopped together (the composition root's
// "amplifier" step), and handed the stored state again after a restore replaced it.
import type { Logger } from '../../log.js';
import { AmplifierSync } from './amplifier-sync.js';
import type { AudioParts } from './audio-parts.js';

export class HardwareSync {
  private readonly syncs: AmplifierSync[];

  constructor(
    private readonly parts: AudioParts,
    /** Where a sync reports what it corrected (a keypad raise above a zone's limit). */
    log?: Logger,
  ) {
    const { store, repo, meta, bus, commits, availability } = parts;
    this.syncs = parts.amplifiers.list.map(
      (amplifier) => new AmplifierSync(store, repo, meta, bus, amplifier, commits, availability, log),
    );
  }

  /** Creates rows for what each amplifier has, then hands it the stored state and follows its changes. */
  async start(): Promise<void> {
    // A restore replaced the rows: reread first (stage `stored`), as every other service then reads them.
    this.parts.bus.subscribe(
      'hardware-sync',
      (event) => {
        if (event.type === 'configuration.replaced') this.reload();
      },
      { internal: true, stage: 'stored' },
    );
    this.parts.commits.storePlayerVolumes();
    const results = await Promise.allSettled(this.syncs.map((sync) => sync.start()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!failed) return;
    // The caller registers stop() only after a successful start: stop the amplifiers that did start.
    await this.stop().catch(() => {
      // The start's failure, thrown below, is the one the operator is told about.
    });
    throw failed.reason;
  }

  async stop(): Promise<void> {
    this.parts.bus.removeListeners('hardware-sync');
    await Promise.all(this.syncs.map((sync) => sync.stop()));
  }

  /** Resolves once every amplifier took the commands sent so far (shutdown waits for this, bounded). */
  settled(): Promise<unknown> {
    return Promise.all(this.parts.amplifiers.list.map((amplifier) => amplifier.driver.settled()));
  }

  /**
   * After the database was replaced underneath (a restore): rereads the players and zones and hands every zone's
   * stored state to its amplifier.
   */
  reload(): void {
    this.parts.repo.reload();
    this.parts.availability.forget();
    this.parts.commits.storePlayerVolumes();
    for (const sync of this.syncs) sync.pushStoredState();
  }
}
