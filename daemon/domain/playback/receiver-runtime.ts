// The seam between a stream player's receiver switches (stored, changed through the API) and the receivers that run:
// the settings side says which receivers a player wants, the runtime starts, stops and reports them.
import { RECEIVER_KIND_LIST, RECEIVER_KIND_NAMES, type ReceiverKindName } from '../../../drivers/index.js';

export type { ReceiverKindName };

/** Every receiver kind, in the order the API lists them: the drivers' registry (drivers/receivers/kinds.ts). */
export const RECEIVER_KINDS: readonly ReceiverKindName[] = RECEIVER_KIND_NAMES;

/** Each kind's name as people read it (`AirPlay`, `UPnP/DLNA`): the API's `name`, MQTT's switches. */
export const RECEIVER_DISPLAY_NAMES: Readonly<Record<ReceiverKindName, string>> = Object.fromEntries(
  RECEIVER_KIND_LIST.map((module) => [module.kind, module.displayName]),
) as Record<ReceiverKindName, string>;

/** One receiver a player wants running. */
export interface WantedReceiver {
  kind: ReceiverKindName;
  /** Squeezelite only: the music server (`host` or `host:port`); null to find one on the LAN. */
  server: string | null;
}

/** How one receiver of a player runs now. */
export interface ReceiverRunState {
  /** `stopped`: switched off or not started; `running`: its process is up; `restarting`: it went away, back soon. */
  phase: 'stopped' | 'running' | 'restarting';
  /** What a sender does through it. */
  cast: 'idle' | 'playing' | 'paused';
  /** Why it is not running, or what it last reported going wrong; null when all is well. */
  detail: string | null;
  /** For a kind whose program runs one of two protocols, the one it runs as (AirPlay: `AirPlay 1` or `AirPlay 2`). */
  variant?: string;
}

export const STOPPED_RECEIVER: ReceiverRunState = { phase: 'stopped', cast: 'idle', detail: null };

export interface ReceiverRuntime {
  /**
   * The receivers `playerId` wants, all of them (an empty list stops every one). Idempotent: a receiver already
   * running with the same settings is left alone; one no longer named is stopped. Resolves once started or stopped.
   */
  apply(playerId: string, wanted: readonly WantedReceiver[]): Promise<void>;
  /** How a player's receiver runs now. */
  state(playerId: string, kind: ReceiverKindName): ReceiverRunState;
  /** Why `kind` cannot run on this machine (its program missing, naming the Debian package), or undefined. */
  missing(kind: ReceiverKindName): string | undefined;
}
