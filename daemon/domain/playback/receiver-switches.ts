// Receiver switches: which receivers (AirPlay, UPnP/DLNA, Squeezelite) an admin switched on for each stream player,
// kept in SQLite, handed to the receiver runtime as each player's whole wanted list (after a switch, at start, after a
// restore, and an empty one for a player deleted or no longer a stream player), and shown with how each one runs.
// The kinds are the drivers' registry's: a stored row of a kind this build does not know is left alone, and said once.
import { findProgram, isReceiverKind, RECEIVER_KIND_MODULES, type ReceiverKindName } from '../../../drivers/index.js';
import type { Logger } from '../../log.js';
import type { AudioRepo } from '../../store/audio-repo.js';
import type { Store } from '../../store/db.js';
import type { PlayerReceiverRow, ReceiversRepo } from '../../store/receivers-repo.js';
import type { PlayersService } from '../audio/index.js';
import {
  type BusEvent,
  type Caller,
  conflict,
  type EventBus,
  invalid,
  KINDS_IN_WORDS,
  type PlayerView,
  type ReceiverView,
  requireAdmin,
  SERVER_KINDS,
  serverProblem,
} from '../shared/index.js';
import {
  RECEIVER_DISPLAY_NAMES,
  RECEIVER_KINDS,
  type ReceiverRunState,
  type ReceiverRuntime,
  STOPPED_RECEIVER,
  type WantedReceiver,
} from './receiver-runtime.js';

/** A switch as an admin sets it: on or off, and (Squeezelite) the music server; null or left out: found on the LAN. */
export interface ReceiverSwitch {
  enabled: boolean;
  server?: string | null;
}

export interface ReceiverSwitchesDeps {
  store: Store;
  repo: ReceiversRepo;
  /** The players' rows (read only): which players are stream players. */
  players: AudioRepo;
  /** Who may see a player (a receiver list is read under the same rule as the player). */
  playerViews: Pick<PlayersService, 'get'>;
  bus: EventBus;
  runtime: ReceiverRuntime;
  /** The Debian package of each kind's program (drivers/index.ts unless given). */
  packageOf?: (kind: ReceiverKindName) => string;
  log: Logger;
}

export class ReceiverSwitches {
  /** The view last published per `<player>/<kind>`: a state change the runtime reports is sent only when it shows. */
  private readonly published = new Map<string, string>();
  /** Players whose runtime was last given a list that was not empty: told an empty one when they go. */
  private readonly running = new Set<string>();
  /** Per player, the last apply asked: the next waits for it, so the runtime gets a player's lists in order. */
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly packageOf: (kind: ReceiverKindName) => string;
  /** Stored kinds this build does not know (a downgrade, a kind taken out), each logged once. */
  private readonly unknownKinds = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: ReceiverSwitchesDeps) {
    this.packageOf = deps.packageOf ?? ((kind) => RECEIVER_KIND_MODULES[kind].debianPackage);
  }

  /** Applies every stream player's wanted list, and follows the players and restores from now on. */
  start(): void {
    this.deps.bus.subscribe(
      'receiver-switches',
      (event: BusEvent) => {
        switch (event.type) {
          case 'player.updated':
            // A new output or name reaches the runtime with the same list; a player that lost its output stops them.
            void this.applyTo(event.payload.player.id);
            return;
          case 'player.deleted':
            this.forget(event.payload.playerId);
            void this.applyTo(event.payload.playerId);
            return;
          case 'configuration.replaced':
            // A restore: what was published describes rows that are gone.
            this.published.clear();
            void this.reload();
            return;
        }
      },
      { internal: true },
    );
    void this.reload();
  }

  /** Stops following the players; an apply not yet begun is not made (the runtime stops its receivers itself). */
  stop(): void {
    this.stopped = true;
    this.deps.bus.removeListeners('receiver-switches');
  }

  /** A stream player's receivers, every kind, for anyone who may see the player. */
  list(caller: Caller, playerId: string): ReceiverView[] {
    const player = this.deps.playerViews.get(caller, playerId);
    streamPlayer(player);
    return RECEIVER_KINDS.map((kind) => this.view(player.id, kind));
  }

  /**
   * Switches one receiver of a stream player on or off (admins only) and hands the runtime the player's whole
   * wanted list; resolves with the receiver once the runtime started or stopped it. Switching on needs the kind's
   * program; switching off never does.
   */
  async set(caller: Caller, playerId: string, kind: ReceiverKindName, change: ReceiverSwitch): Promise<ReceiverView> {
    requireAdmin(caller, 'switching a receiver');
    // The API's schema and MQTT's topics know the same kinds; this keeps any other caller from storing another.
    if (!isReceiverKind(kind))
      throw invalid(`"kind" must be ${KINDS_IN_WORDS}, got ${JSON.stringify(String(kind)).slice(0, 40)}`, {
        kind: [`must be ${KINDS_IN_WORDS}`],
      });
    const player = this.deps.playerViews.get(caller, playerId);
    const server = change.server ?? null;
    if (server !== null) {
      if (!RECEIVER_KIND_MODULES[kind].takesServer)
        throw invalid(`"server" is for the ${SERVER_KINDS} receiver only: leave it out for ${kind}`, {
          server: [`is for the ${SERVER_KINDS} receiver only`],
        });
      const problem = serverProblem(server);
      if (problem)
        throw invalid(`"server" ${problem}, got ${JSON.stringify(server).slice(0, 80)}`, { server: [problem] });
    }
    streamPlayer(player);
    if (change.enabled) {
      const missing = this.deps.runtime.missing(kind);
      if (missing !== undefined) throw conflict(`${missing}; then switch the receiver on again`);
    }
    const { store, repo } = this.deps;
    store.transaction(() => {
      if (change.enabled) repo.switchOn({ player_id: player.id, kind, server });
      else repo.switchOff(player.id, kind);
    });
    this.publishIfChanged(player.id, kind);
    await this.applyTo(player.id);
    return this.publishIfChanged(player.id, kind);
  }

  /**
   * What the runtime's owner calls when a receiver's phase, cast or detail changed: the receiver's event is sent
   * when its view differs from the one last sent.
   */
  stateChanged(playerId: string, kind: ReceiverKindName): void {
    if (this.deps.players.player(playerId)?.output_kind == null) return;
    this.publishIfChanged(playerId, kind);
  }

  /** The list the runtime runs for a player: its receivers switched on, while it is a stream player. */
  wanted(playerId: string): WantedReceiver[] {
    if (this.deps.players.player(playerId)?.output_kind == null) return [];
    const rows = this.rowsOf(playerId);
    return RECEIVER_KINDS.flatMap((kind) => {
      const row = rows.find((r) => r.kind === kind);
      return row ? [{ kind, server: row.server }] : [];
    });
  }

  /**
   * The players' rows were replaced (the start, a restore): every stream player's list, and an empty one for each
   * player that had receivers and is no longer here or no longer a stream player.
   */
  reload(): Promise<void> {
    const ids = new Set(
      this.deps.players
        .players()
        .filter((p) => p.output_kind !== null)
        .map((p) => p.id),
    );
    for (const id of this.running) ids.add(id);
    return Promise.all([...ids].map((id) => this.applyTo(id))).then(() => undefined);
  }

  /**
   * Hands the runtime the player's whole list, read when its turn comes, after the one asked before it; nothing once
   * stopped (the store may be closed then). A failure is logged: the lane never rejects.
   */
  private applyTo(playerId: string): Promise<void> {
    const previous = this.lanes.get(playerId) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (this.stopped) return;
      try {
        const wanted = this.wanted(playerId);
        if (wanted.length > 0) this.running.add(playerId);
        else this.running.delete(playerId);
        await this.deps.runtime.apply(playerId, wanted);
      } catch (err) {
        this.deps.log.warn(
          { player: playerId, err: (err as Error).message },
          "a player's receivers could not follow its switches",
        );
      }
    });
    this.lanes.set(playerId, next);
    // The lane is dropped once idle, so a deleted player leaves nothing behind.
    void next.then(() => {
      if (this.lanes.get(playerId) === next) this.lanes.delete(playerId);
    });
    return next;
  }

  private forget(playerId: string): void {
    for (const kind of RECEIVER_KINDS) this.published.delete(`${playerId}/${kind}`);
  }

  /** The receiver's view; published as `player.receiverChanged` when it differs from the one last published. */
  private publishIfChanged(playerId: string, kind: ReceiverKindName): ReceiverView {
    const receiver = this.view(playerId, kind);
    const key = `${playerId}/${kind}`;
    const text = JSON.stringify(receiver);
    if (this.published.get(key) !== text) {
      this.published.set(key, text);
      this.deps.bus.publish({ type: 'player.receiverChanged', payload: { playerId, receiver } });
    }
    return receiver;
  }

  /**
   * A player's stored switches of the kinds this build knows; a row of another kind (stored by a build that knew it)
   * is left in the store, unused, and logged once per kind.
   */
  private rowsOf(playerId: string): PlayerReceiverRow[] {
    const rows = this.deps.repo.ofPlayer(playerId);
    for (const row of rows) {
      if (isReceiverKind(row.kind) || this.unknownKinds.has(row.kind)) continue;
      this.unknownKinds.add(row.kind);
      this.deps.log.warn(
        { player: playerId, kind: row.kind.slice(0, 40) },
        `a stored receiver switch names a kind this azcd does not know: it is left off (the kinds: ${KINDS_IN_WORDS})`,
      );
    }
    return rows;
  }

  private view(playerId: string, kind: ReceiverKindName): ReceiverView {
    const row = this.rowsOf(playerId).find((r) => r.kind === kind);
    const missing = this.deps.runtime.missing(kind);
    const state: ReceiverRunState = row ? this.deps.runtime.state(playerId, kind) : STOPPED_RECEIVER;
    return {
      kind,
      name: RECEIVER_DISPLAY_NAMES[kind],
      enabled: row !== undefined,
      server: row?.server ?? null,
      available: missing === undefined,
      package: this.packageOf(kind),
      phase: state.phase,
      cast: state.cast,
      detail: missing ?? state.detail,
      ...(state.variant === undefined ? {} : { variant: state.variant }),
    };
  }
}

/** Receivers run on a stream player only (409 otherwise, saying how to make it one). */
function streamPlayer(player: PlayerView): void {
  if (player.output !== null) return;
  throw conflict(
    `receivers need a stream player: give player "${player.name}" an output first ` +
      `(PUT /api/players/${player.id} {"output": {"kind": "alsa", "device": …}})`,
  );
}

/**
 * A stand-in runtime until the receivers run: it remembers each player's wanted list, reports every receiver
 * stopped, and says a kind is missing when its program is not in PATH.
 */
export class ListedReceivers implements ReceiverRuntime {
  readonly wanted = new Map<string, readonly WantedReceiver[]>();

  async apply(playerId: string, wanted: readonly WantedReceiver[]): Promise<void> {
    if (wanted.length > 0) this.wanted.set(playerId, wanted);
    else this.wanted.delete(playerId);
  }

  state(): ReceiverRunState {
    return STOPPED_RECEIVER;
  }

  missing(kind: ReceiverKindName): string | undefined {
    return programMissing(kind);
  }
}

/**
 * Why a receiver kind cannot run here: its program is not in `searchPath` (PATH unless given), in the supervisor's
 * words, naming the Debian package; undefined when it can run.
 */
export function programMissing(kind: ReceiverKindName, searchPath?: string): string | undefined {
  try {
    findProgram(RECEIVER_KIND_MODULES[kind], searchPath);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
