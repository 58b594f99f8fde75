// Where a socket request is in its life, and the only moves between those places: uWS forbids touching a
// response after it was aborted or ended, and shutdown must wait for every request still under way.

/**
 * - routing: inside the uWS handler call; nothing registered with uWS yet, not counted.
 * - reading: the body is arriving.
 * - waiting: taken up at the end of this event-loop turn (no read of its socket can come before).
 * - rejecting: a framing error to send at the end of the turn (the answer closes the connection).
 * - handling: an async handler runs, in the turn it started in; its answer usually goes out in that turn.
 * - held: the handler outlived that turn; its socket is paused until it is answered, so pipelined requests wait.
 * - orphaned: the client went away while the handler runs; still counted until the handler settles.
 * - streaming: the status and headers are written, the body is being sent as it is made (BodySource).
 * - answered: the response is written, or a raw route or static file took it over.
 * - aborted: the client went away; the response may not be touched.
 */
export type RequestState =
  | 'routing'
  | 'reading'
  | 'waiting'
  | 'rejecting'
  | 'handling'
  | 'held'
  | 'orphaned'
  | 'streaming'
  | 'answered'
  | 'aborted';

const NEXT: Record<RequestState, readonly RequestState[]> = {
  routing: ['reading', 'waiting', 'rejecting', 'handling', 'streaming', 'answered'],
  reading: ['waiting', 'answered', 'aborted'],
  waiting: ['handling', 'streaming', 'answered', 'aborted'],
  rejecting: ['answered', 'aborted'],
  handling: ['held', 'streaming', 'answered', 'orphaned'],
  held: ['streaming', 'answered', 'orphaned'],
  orphaned: ['aborted'],
  streaming: ['answered', 'aborted'],
  answered: [],
  aborted: [],
};

/** Checks a move against the table above; a wrong one is a bug in the adapter, never the client's doing. */
export function move(from: RequestState, to: RequestState): RequestState {
  if (!NEXT[from].includes(to)) throw new Error(`request lifecycle: no move from ${from} to ${to}`);
  return to;
}

/** States that outlive the uWS handler call: shutdown waits for requests in them. */
export function isUnderWay(state: RequestState): boolean {
  return (
    state === 'reading' ||
    state === 'waiting' ||
    state === 'rejecting' ||
    state === 'handling' ||
    state === 'held' ||
    state === 'orphaned' ||
    state === 'streaming'
  );
}

/** States whose socket was paused (and must be resumed when the answer goes out). */
export function isPaused(state: RequestState): boolean {
  return state === 'held';
}

/** What the client going away does: a running handler is left to finish; anything else ends here. */
export function onAbort(state: RequestState): RequestState | undefined {
  if (state === 'handling' || state === 'held') return 'orphaned';
  if (state === 'reading' || state === 'waiting' || state === 'rejecting' || state === 'streaming') return 'aborted';
  return undefined;
}
