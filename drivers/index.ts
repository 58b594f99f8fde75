// The driver registry: every family listed once, with its name, option schema and factory, and the factory of the
// stream players' playback engine (MPD). The daemon sees only this module, drivers/driver.ts and drivers/playback.ts.
import type { AmplifierDriver, DriverOptions } from './driver.js';
import type { DriverFamily } from './family.js';
import { monoprice } from './monoprice/options.js';
import { rnet } from './rnet/options.js';
import { simulated } from './simulated/options.js';
import { xantech } from './xantech/options.js';
import { createPlaybackEngine, type MpdEngineOptions } from './mpd/index.js';
import { PlaybackError } from './playback.js';

export type { DriverFamily } from './family.js';
export { checkSetting, closest, defaultsOf, literals, type SettingProblem } from './settings.js';
/** The characters no text shown to people may hold (names, and the metadata engines read), and the cleaning. */
export { cleanText, FORBIDDEN, LONE_SURROGATE } from './clean-text.js';

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

export { createPlaybackEngine, MPD_MISSING, type MpdEngineOptions } from './mpd/index.js';

/**
 * Why a stream player's engine cannot run here (MPD is not installed: the message names the package), or undefined
 * when it can. Building an engine only looks the program up; nothing is started.
 */
export function playbackEngineMissing(options: Pick<MpdEngineOptions, 'mpdPath'>): string | undefined {
  try {
    createPlaybackEngine({ id: 'check', stateDir: '.', musicDir: '.', output: { kind: 'null' }, ...options });
    return undefined;
  } catch (err) {
    if (err instanceof PlaybackError && err.code === 'engine-missing') return err.message;
    throw err;
  }
}
