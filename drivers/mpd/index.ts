// The stream player engine factory: the daemon sees only this and drivers/playback.ts.
import type { PlaybackEngine } from '../playback.js';
import { MpdEngine, type MpdEngineOptions } from './engine.js';
import { findMpd } from './process.js';

export type { MpdEngineOptions, MpdTiming } from './engine.js';
export { MPD_MISSING } from './process.js';

/**
 * An engine for one stream player, not started yet. Throws an engine-missing PlaybackError, whose message names the
 * package to install, when mpd is not installed: the daemon runs without it until a stream player is wanted.
 */
export function createPlaybackEngine(options: MpdEngineOptions): PlaybackEngine & { readonly pid: number | undefined } {
  findMpd(options.mpdPath);
  return new MpdEngine(options);
}
