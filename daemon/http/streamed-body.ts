// Sends a body made while it is sent (a BodySource) to a uWS response: a few milliseconds of pieces per event-loop
// turn, and only as fast as the client takes them (uWS backpressure), so a large answer holds neither the loop nor
// memory.

import { SLICE_MS } from '../domain/shared/index.js';
import { monotonicMs } from '../runtime.js';
import type { BodySource } from './route.js';
import type { HttpResponse } from './uws.js';

/**
 * Pumps `source` into `res` (its status and headers already written). `gone` says the client left (uWS's
 * onAborted, registered by the caller, which then calls the returned `stop`: a pump waiting for the socket to drain
 * would otherwise wait for ever); `done` runs once with whether the body was sent whole.
 */
export function sendStreamed(
  res: HttpResponse,
  source: BodySource,
  gone: () => boolean,
  done: (whole: boolean, err?: unknown) => void,
): { stop(): void } {
  let finished = false;
  let blocked = false;
  const finish = (whole: boolean, err?: unknown) => {
    if (finished) return;
    finished = true;
    try {
      source.close();
    } finally {
      done(whole, err);
    }
  };
  const run = (): void => {
    if (finished) return;
    if (gone()) return finish(false);
    const until = monotonicMs() + SLICE_MS;
    try {
      while (monotonicMs() < until) {
        const piece = source.read();
        if (piece === null) {
          res.cork(() => res.end());
          return finish(true);
        }
        let accepted = true;
        res.cork(() => {
          accepted = res.write(piece);
        });
        // uWS keeps the piece it could not send; the next ones wait for the socket to drain.
        if (!accepted) {
          blocked = true;
          return;
        }
      }
    } catch (err) {
      // The status is out: all that is left is to cut the body short, which the client sees as a broken transfer.
      if (!gone()) res.close();
      return finish(false, err);
    }
    setImmediate(run);
  };
  res.onWritable(() => {
    if (blocked) {
      blocked = false;
      run();
    }
    return true;
  });
  run();
  return { stop: () => finish(false) };
}

/** The whole body of a source at once: for inject(), whose callers (tests, in-process) take the answer as a whole. */
export function readAll(source: BodySource): string {
  const pieces: string[] = [];
  try {
    for (let piece = source.read(); piece !== null; piece = source.read()) pieces.push(piece);
  } finally {
    source.close();
  }
  return pieces.join('');
}
