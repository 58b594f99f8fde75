// The driver registry: every family listed once, with its name, option schema and factory, and the factory of the
// stream players' playback engine (MPD). The daemon sees only this module, drivers/driver.ts and drivers/playback.ts.
import type { AmplifierDriver, DriverOptions } from './driver.js';
import type { DriverFamily } from './family.js';
import { monoprice } from './monoprice/options.js';
import type { MpdEngineOptions } from './mpd/index.js';
import { findMpd } from './mpd/process.js';
import { PlaybackError } from './playback.js';
import { rnet } from './rnet/options.js';
import { simulated } from './simulated/options.js';
import { xantech } from './xantech/options.js';

/** The characters no text shown to people may hold (names, and the metadata engines read), and the cleaning. */
export { cleanText, FORBIDDEN, LONE_SURROGATE } from './clean-text.js';
export { monotonicMs } from './core/clock.js';
export type { DriverFamily } from './family.js';
export { checkSetting, closest, defaultsOf, literals, type SettingProblem } from './settings.js';

/** Every family, in the order help lists them (systemd/install.sh reads the names from this line before a build). */
export const DRIVER_FAMILIES = [simulated, monoprice, rnet, xantech] as const;

export const DRIVER_NAMES: readonly string[] = DRIVER_FAMILIES.map((family) => family.name);

/** The family registered under `name`, if any. */
export function driverFamily(name: string): DriverFamily | undefined {
  return DRIVER_FAMILIES.find((family) => family.name === name);
}

/** A driver of the family `name`, not started; throws naming the option when `options` break the family's schema. */
export async function createDriver(name: string, options: DriverOptions): Promise<AmplifierDriver> {
  const family = driverFamily(name);
  if (!family) throw new Error(`unknown driver "${name}": choose one of ${DRIVER_NAMES.join(', ')}`);
  return family.create(options);
}

/** An ALSA player's device while receivers are on: the daemon's aplay, and the private FIFO its MPD plays into. */
export { castFifo, playerFiles } from './mpd/config.js';
export type { MpdEngineOptions } from './mpd/index.js';
export { MPD_MISSING } from './mpd/process.js';
export { AlsaOutput, findAplay } from './receivers/alsa-output.js';
export { readFifo } from './receivers/child.js';
/** What the casting runtime runs: the receivers' supervisor and the output switch (the kinds' modules are below). */
export { fifoOutput, OutputSwitch, type SourceCounts } from './receivers/output-switch.js';
export type { CastMetadata, ReceiverKind } from './receivers/receiver.js';
export { echoOf } from './receivers/receiver.js';
export {
  findProgram,
  makeFifo,
  type ReceiverEvent,
  ReceiverSupervisor,
  type SupervisorTiming,
} from './receivers/supervisor.js';

/** The stream players' engine (MPD): its factory and what it needs. */
export type PlaybackEngines = typeof import('./mpd/index.js');

/**
 * The stream players' engine code, loaded when the first stream player needs an engine: a daemon without one never
 * holds it (ARCHITECTURE.md, "Memory").
 */
export function loadPlaybackEngines(): Promise<PlaybackEngines> {
  return import('./mpd/index.js');
}

/**
 * Why a stream player's engine cannot run here (MPD is not installed: the message names the package), or undefined
 * when it can. Only looks the program up: the engine's code is not loaded for it.
 */
export function playbackEngineMissing(options: Pick<MpdEngineOptions, 'mpdPath'>): string | undefined {
  try {
    findMpd(options.mpdPath);
    return undefined;
  } catch (err) {
    if (err instanceof PlaybackError && err.code === 'engine-missing') return err.message;
    throw err;
  }
}

/**
 * The receiver kinds' registry (drivers/receivers/kinds.ts): each kind's module (its name, display name, program,
 * Debian package, how it runs) listed once, and what derives from it.
 */
export {
  isReceiverKind,
  kindsInWords,
  RECEIVER_KIND_LIST,
  RECEIVER_KIND_MODULES,
  RECEIVER_KIND_NAMES,
  type ReceiverKindName,
} from './receivers/kinds.js';
