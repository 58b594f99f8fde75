// One playback engine (its own MPD) per stream player, kept in step with the players' rows: started with the daemon or
// when a stream player is made, restarted on a new output, stopped with its player or the daemon. Start failures are
// state, not errors: they are reported, and the next command that needs the engine tries again.
import { mkdirSync, rmSync } from 'node:fs';
import type { PlaybackEngine, PlaybackEvent } from '../../../drivers/playback.js';
import type { Logger } from '../../log.js';
import { sameOutput } from '../audio/index.js';
import { conflict, type EngineState, type EngineView, type StreamOutput, unavailable } from '../shared/index.js';

/**
 * An engine for a player and its output, not started; fails with an engine-missing PlaybackError without MPD. It may
 * answer later: the daemon's factory loads the engine's code when the first stream player needs it
 * (ARCHITECTURE.md, "Memory").
 */
export type EngineFactory = (player: { id: string; output: StreamOutput }) => PlaybackEngine | Promise<PlaybackEngine>;

export interface EngineDeps {
  factory: EngineFactory;
  /** Why engines cannot run here (MPD not installed, naming the package); undefined when they can. */
  missing(): string | undefined;
  /** The folder a player's engine keeps its files in (removed with the player). */
  folderOf(playerId: string): string;
  /** The music folder, created when missing if `createMusicDir` (the default one, inside the state folder). */
  musicDir: string;
  createMusicDir: boolean;
  log: Logger;
}

/** What the capability hears from its engines: their events, and changes of their state. */
export type EngineListener = (playerId: string, event: PlaybackEvent | { type: 'state' }) => void;

interface Slot {
  /** The player's own output, as stored. */
  own: StreamOutput;
  /** What its MPD plays into: the own output, or the one the casting runtime routed it to (reroute). */
  output: StreamOutput;
  engine: PlaybackEngine | undefined;
  state: EngineState;
  detail: string | null;
  /** The start under way, if any. */
  starting: Promise<void> | undefined;
  unsubscribe: () => void;
}

const RETRY_MS = 2000;

export class StreamEngines {
  private readonly slots = new Map<string, Slot>();
  /** Where an ALSA player's MPD plays instead of its device while the casting runtime holds that device. */
  private readonly reroutes = new Map<string, StreamOutput>();
  private stopped = false;

  constructor(
    private readonly deps: EngineDeps,
    private readonly listener: EngineListener,
  ) {}

  /** Players that have an engine slot (stream players), in no particular order. */
  get playerIds(): string[] {
    return [...this.slots.keys()];
  }

  /** Brings the slots in step with the stream players given (at start, and after a restore): new ones start. */
  sync(players: ReadonlyArray<{ id: string; output: StreamOutput | null }>): Promise<void> {
    const wanted = new Map(players.filter((p) => p.output !== null).map((p) => [p.id, p.output!]));
    const work: Array<Promise<void>> = [];
    for (const id of this.slots.keys()) if (!wanted.has(id)) work.push(this.remove(id, { keepFiles: true }));
    for (const [id, output] of wanted) work.push(this.set(id, output));
    return Promise.all(work).then(() => undefined);
  }

  /** A player's output is `output` (null: it is no stream player): its engine is made, replaced or stopped. */
  async set(playerId: string, output: StreamOutput | null): Promise<void> {
    if (this.stopped) return;
    const slot = this.slots.get(playerId);
    const plays = output && this.effective(playerId, output);
    if (slot && output && plays && sameOutput(slot.output, plays)) {
      slot.own = output;
      return;
    }
    if (slot) await this.remove(playerId, { keepFiles: true });
    if (output && plays) this.add(playerId, output, plays);
  }

  /**
   * The player's MPD plays into `output` instead of its ALSA device (null: into the device again): the casting
   * runtime holds the device while receivers run for the player. The engine restarts with the other output;
   * resolves once the one that held the device stopped. A player whose own output is no ALSA device keeps it.
   */
  async reroute(playerId: string, output: StreamOutput | null): Promise<void> {
    if (output) this.reroutes.set(playerId, output);
    else this.reroutes.delete(playerId);
    const slot = this.slots.get(playerId);
    if (slot) await this.set(playerId, slot.own);
  }

  /** What the player's MPD plays into: its own output, or where it was rerouted while that is an ALSA device. */
  private effective(playerId: string, own: StreamOutput): StreamOutput {
    return (own.kind === 'alsa' && this.reroutes.get(playerId)) || own;
  }

  /** Stops a player's engine and forgets it; its files go too unless kept (a player deleted takes them along). */
  async remove(playerId: string, options: { keepFiles: boolean }): Promise<void> {
    const slot = this.slots.get(playerId);
    if (!slot) return;
    this.slots.delete(playerId);
    slot.unsubscribe();
    await slot.engine
      ?.stop()
      .catch((err: Error) =>
        this.deps.log.warn({ player: playerId, err: err.message }, 'stopping a stream player failed'),
      );
    if (!options.keepFiles) rmSync(this.deps.folderOf(playerId), { recursive: true, force: true });
  }

  /** Stops every engine (the daemon stops). */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.slots.keys()].map((id) => this.remove(id, { keepFiles: true })));
  }

  /** The engine's state as views show it; undefined for a player that is no stream player. */
  view(playerId: string): EngineView | undefined {
    const slot = this.slots.get(playerId);
    return slot && { state: slot.state, detail: slot.detail };
  }

  /** The engine of a stream player, whatever its state (its last status stays readable). */
  engineOf(playerId: string): PlaybackEngine | undefined {
    return this.slots.get(playerId)?.engine;
  }

  /** The engine of a stream player that is up, if it is. */
  up(playerId: string): PlaybackEngine | undefined {
    const slot = this.slots.get(playerId);
    return slot?.state === 'up' ? slot.engine : undefined;
  }

  /**
   * The engine, started if it must be: one that failed to start is started again, one that is starting is waited
   * for. Refused with what to do when MPD is missing (409) or restarting (503), or cannot start (409).
   */
  async ready(playerId: string): Promise<PlaybackEngine> {
    const slot = this.slots.get(playerId);
    if (!slot) throw conflict('this player is not a stream player');
    if (slot.state === 'failed' || slot.state === 'stopped') this.start(playerId, slot);
    if (slot.starting) await slot.starting;
    switch (slot.state) {
      case 'up':
        return slot.engine!;
      case 'missing':
        throw conflict(`${slot.detail}; then restart azcd`);
      case 'restarting':
        throw unavailable(
          `the player's MPD is restarting (${slot.detail ?? 'it exited'}); try again in a moment`,
          Math.ceil(RETRY_MS / 1000),
        );
      default:
        throw conflict(`the player's MPD could not start: ${slot.detail ?? 'no reason given'}`);
    }
  }

  private add(playerId: string, own: StreamOutput, output: StreamOutput): void {
    const slot: Slot = {
      own,
      output,
      engine: undefined,
      state: 'starting',
      detail: null,
      starting: undefined,
      unsubscribe: () => undefined,
    };
    this.slots.set(playerId, slot);
    const missing = this.deps.missing();
    if (missing !== undefined) {
      this.setState(playerId, slot, 'missing', missing);
      return;
    }
    this.start(playerId, slot);
  }

  private start(playerId: string, slot: Slot): void {
    if (slot.starting) return;
    this.setState(playerId, slot, 'starting', null);
    slot.starting = (async () => {
      try {
        const engine = slot.engine ?? (await this.make(playerId, slot));
        // Removed while its code loaded (the player deleted, the daemon stopping): nothing was started.
        if (!engine) return;
        if (this.deps.createMusicDir) mkdirSync(this.deps.musicDir, { recursive: true, mode: 0o700 });
        await engine.start();
        if (this.slots.get(playerId) === slot) this.setState(playerId, slot, 'up', null);
      } catch (err) {
        if (this.slots.get(playerId) !== slot) return;
        this.deps.log.warn({ player: playerId, err: (err as Error).message }, 'a stream player could not start');
        this.setState(playerId, slot, 'failed', (err as Error).message);
      } finally {
        slot.starting = undefined;
      }
    })();
  }

  /** Builds the slot's engine, not started, if the slot is still its player's once the factory has it. */
  private async make(playerId: string, slot: Slot): Promise<PlaybackEngine | undefined> {
    const engine = await this.deps.factory({ id: playerId, output: slot.output });
    if (this.stopped || this.slots.get(playerId) !== slot) return undefined;
    slot.engine = engine;
    slot.unsubscribe = engine.onEvent((event) => this.engineEvent(playerId, slot, event));
    return engine;
  }

  /** The engine's own supervision: down while it restarts, up again (with how the playback came back), faults. */
  private engineEvent(playerId: string, slot: Slot, event: PlaybackEvent): void {
    if (this.slots.get(playerId) !== slot) return;
    if (event.type === 'engine') {
      // The first start's `up` is the start's own business (start() sets the state when it resolves).
      if (slot.starting && event.up) return;
      slot.state = event.up ? 'up' : 'restarting';
      slot.detail = event.up ? (event.detail ?? null) : event.detail;
    } else if (event.type === 'fault') {
      slot.detail = event.detail;
    } else if (
      event.type === 'playback' &&
      event.status.state === 'playing' &&
      slot.detail !== null &&
      slot.state === 'up'
    ) {
      // Playing again: the output opened, so its last fault is over.
      slot.detail = null;
      this.listener(playerId, { type: 'state' });
    }
    this.listener(playerId, event);
  }

  private setState(playerId: string, slot: Slot, state: EngineState, detail: string | null): void {
    if (slot.state === state && slot.detail === detail) return;
    slot.state = state;
    slot.detail = detail;
    this.listener(playerId, { type: 'state' });
  }
}
