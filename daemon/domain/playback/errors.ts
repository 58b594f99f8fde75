// The playback engine's refusals as domain errors, each with the status a front door gives it and the engine's words.
import { PlaybackError } from '../../../drivers/playback.js';
import { conflict, DomainError, invalid, notFound, unavailable } from '../shared/index.js';

/** Seconds a client waits before trying a player whose MPD restarts again (it is back within a second or two). */
const RESTART_RETRY_S = 2;
/** Seconds before trying a player whose MPD did not answer in time. */
const TIMEOUT_RETRY_S = 5;

/**
 * The domain error for what the engine threw: `field` names the request field a refused URI or value came from.
 * engine-missing and failed are the appliance's state (409), engine-down and timeout pass (503 with Retry-After),
 * bad-uri and bad-request are the caller's (400), not-found a library folder (404). Anything else is rethrown.
 */
export function fromPlaybackError(err: unknown, field = 'uri'): Error {
  if (!(err instanceof PlaybackError)) return err as Error;
  switch (err.code) {
    case 'engine-missing':
      return conflict(`${err.message}; then create the stream player again or restart azcd`);
    case 'engine-down':
      return unavailable(err.message, RESTART_RETRY_S);
    case 'timeout':
      return unavailable(`${err.message}; try again in a moment`, TIMEOUT_RETRY_S);
    case 'bad-uri':
    case 'bad-request':
      return invalid(err.message, { [field]: [err.message] });
    case 'not-found':
      return notFound(err.message);
    case 'failed':
      return conflict(`MPD refused it: ${err.message}`);
  }
}

/** Runs an engine call, its refusals as domain errors. */
export async function engineCall<T>(call: () => Promise<T>, field?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw err instanceof DomainError ? err : fromPlaybackError(err, field);
  }
}

/** Whether the engine refused some URIs of a queue: their indexes, or undefined for any other error. */
export function refusedIndexes(err: unknown): number[] | undefined {
  if (!(err instanceof PlaybackError) || err.code !== 'bad-uri' || err.problems.length === 0) return undefined;
  return err.problems.map((problem) => problem.index);
}

/** The engine's words for each refused index (for the skip events). */
export function refusalReasons(err: PlaybackError): Map<number, string> {
  return new Map(err.problems.map((problem) => [problem.index, problem.message]));
}
