// The server-sent-events stream: framing, replay, heartbeats and backpressure; who sees what is the policy's call.

import type { Config } from '../config.js';
import type { Authentication } from '../domain/accounts/index.js';
import type { Caller, CallerViews, EventBus, StampedEvent } from '../domain/shared/index.js';
import {
  accessChangeNeedsRefetch,
  canSeeEvent,
  EVENT_ID_PATTERN,
  eventPayloadFor,
  isInternal,
  STREAM_EVENT_TYPES,
  seesPayloadAsPublished,
} from '../domain/shared/index.js';
import type { Logger } from '../log.js';
import { HttpError, statusLine } from './problem.js';
import type { ApiRequest, RawRoute } from './route.js';
import { T } from './schema.js';
import type { HttpResponse } from './uws.js';

export interface StreamOptions {
  retryMs: number;
  pingIntervalMs: number;
  maxBufferedBytes: number;
  recheckIntervalMs: number;
}

/** How many streams may be open at once: per user (429 beyond) and in all (503 beyond). */
export type StreamLimits = Pick<Config['limits'], 'streamsPerUser' | 'streamsTotal'>;

interface Stream {
  res: HttpResponse;
  caller: Caller;
  /** Frames posted during this event-loop turn, written together at its end. */
  outbox: string;
  /** uWS reported backpressure: new chunks wait in `queue` until onWritable. */
  blocked: boolean;
  queue: string[];
  /** Bytes not yet handed to the socket: what uWS holds plus our queue. */
  backlog: number;
  closed: boolean;
}

const PING = ': ping\n\n';

export class EventStreams {
  private readonly streams = new Set<Stream>();
  private readonly byUser = new Map<string, Set<Stream>>();
  /** Streams with frames in their outbox, and the pending end-of-turn flush. */
  private readonly dirty = new Set<Stream>();
  private flushTimer: NodeJS.Immediate | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private recheckTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribers: Array<() => void> = [];
  /** Counters for tests, the benchmark and logs. */
  readonly stats = { opened: 0, closed: 0, cutOff: 0, revoked: 0 };
  /** Told how many streams are open whenever one opens or ends (drivers read keypads sooner while someone watches). */
  onCount: ((count: number) => void) | undefined;

  constructor(
    private readonly bus: EventBus,
    private readonly auth: Authentication,
    private readonly options: StreamOptions,
    private readonly logger: Logger,
    private readonly limits: StreamLimits,
    /** Per-caller values events are rendered with (a player's volume over the zones a user sees). */
    private readonly views?: CallerViews,
  ) {
    // Internal events are never framed for a client: access.changed re-checks its user's streams; after a restore
    // (configuration.replaced) every stream ends, among the last to hear it, so each client signs in again and refetches.
    this.unsubscribers.push(
      bus.subscribe(
        'event-stream',
        (event) => {
          if (!isInternal(event)) this.broadcast(event);
          else if (event.type === 'access.changed') this.recheckUser(event.payload.userId);
          else if (event.type === 'configuration.replaced') this.closeAll();
        },
        { internal: true, stage: 'clients' },
      ),
    );
  }

  get size(): number {
    return this.streams.size;
  }

  route(): RawRoute {
    return {
      kind: 'raw',
      method: 'GET',
      path: '/api/stream/events',
      access: 'user',
      headers: ['last-event-id'],
      summary: 'Server-sent events for the players and zones you may see',
      description:
        'text/event-stream. First `retry:`, then messages of `id: <run>-<n>` and `data: {"type","payload"}` (no `event:` line); ' +
        'each data line is one components.schemas.Event. Ids are opaque: the run changes at every start of the daemon. ' +
        '`: ping` every 15 s. Resume with the Last-Event-ID header or ?lastEventId=; `stream.reset` means refetch state (it comes ' +
        'first when the events after that id cannot be replayed, a restart in between included). Accepts ?apiKey= for ' +
        `EventSource clients. Event types: ${STREAM_EVENT_TYPES.join(', ')} (user.changed to admins only).`,
      tags: ['events'],
      query: T.Object({
        apiKey: T.Optional(T.String({ description: 'API key for clients that cannot set headers (URL-encode it)' })),
        lastEventId: T.Optional(
          T.String({
            pattern: EVENT_ID_PATTERN,
            description: 'resume after this event id (as the Last-Event-ID header)',
            errorMessage: 'must be an event id such as 12-345',
          }),
        ),
      }),
      responses: {
        200: {
          description: 'the event stream; each data line is one components.schemas.Event object',
          contentType: 'text/event-stream',
          // contentSchema (JSON Schema 2020-12) links the Event component: what each data line holds.
          schema: T.String({
            description: 'SSE: `id: <run>-<n>` and `data: <Event JSON>` lines; `: ping` comments',
            contentSchema: { $ref: '#/components/schemas/Event' },
          }),
          headers: { 'Cache-Control': { description: 'no-cache, no-transform: proxies pass each message on at once' } },
        },
        429: { description: 'you have as many event streams open as one user may (limits.streamsPerUser); close one' },
        503: { description: 'the appliance serves as many event streams as it may (limits.streamsTotal)' },
      },
      open: (req, res) => this.open(req as ApiRequest<Record<string, string>, undefined>, res),
    };
  }

  /** Ends every stream (shutdown), after sending what is queued for them. */
  closeAll(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushOutboxes();
    for (const stream of [...this.streams]) this.end(stream);
    this.stopTimers();
  }

  dispose(): void {
    this.closeAll();
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }

  private open(req: ApiRequest<Record<string, string>, undefined>, res: HttpResponse): void {
    const caller = req.caller!;
    this.admit(caller);
    if (req.method === 'HEAD') {
      // The headers a stream would start with, and nothing else: no body, nothing registered.
      res.writeStatus(statusLine(200));
      writeStreamHeaders(res, req.requestId);
      res.endWithoutBody();
      return;
    }
    const stream: Stream = { res, caller, outbox: '', blocked: false, queue: [], backlog: 0, closed: false };
    res.onAborted(() => this.forget(stream));
    res.onWritable(() => this.flush(stream));
    res.writeStatus(statusLine(200));
    writeStreamHeaders(res, req.requestId);
    let first = `retry: ${this.options.retryMs}\n\n`;
    const resumeFrom = req.headers['last-event-id'] || req.query.get('lastEventId') || '';
    if (resumeFrom !== '') {
      // A client that resumes holds state up to that id: whatever cannot be replayed after it is announced first.
      const replay = this.bus.replay(resumeFrom);
      if ('reset' in replay) first += this.reset(replay.reset);
      else
        for (const event of replay.events) if (canSeeEvent(caller, event)) first += render(caller, event, this.views);
    }
    if (!res.write(first)) {
      stream.blocked = true;
      stream.backlog = Buffer.byteLength(first);
    }
    this.streams.add(stream);
    let mine = this.byUser.get(caller.userId);
    if (!mine) this.byUser.set(caller.userId, (mine = new Set()));
    mine.add(stream);
    this.stats.opened++;
    this.onCount?.(this.streams.size);
    this.startTimers();
  }

  /**
   * Refuses a stream beyond the caps, before anything is written: each open stream holds a socket, and one
   * client must not be able to take the file descriptors the others (and the admin) need.
   */
  private admit(caller: Caller): void {
    const mine = this.byUser.get(caller.userId)?.size ?? 0;
    if (mine >= this.limits.streamsPerUser) {
      throw new HttpError(
        429,
        `you already have ${mine} event streams open, the most one user may; close one before opening another`,
        {
          headers: this.retryAfter(),
        },
      );
    }
    if (this.streams.size >= this.limits.streamsTotal) {
      throw new HttpError(
        503,
        `the appliance already serves ${this.streams.size} event streams, its limit; try again later`,
        {
          headers: this.retryAfter(),
        },
      );
    }
  }

  /** Streams of vanished clients are found out by the next ping: that is when a slot may free up. */
  private retryAfter(): Record<string, string> {
    return { 'Retry-After': String(Math.max(1, Math.ceil(this.options.pingIntervalMs / 1000))) };
  }

  private broadcast(event: StampedEvent): void {
    if (this.streams.size === 0) return;
    let shared: string | undefined;
    for (const stream of this.streams) {
      if (!canSeeEvent(stream.caller, event)) continue;
      if (seesPayloadAsPublished(stream.caller, event)) {
        shared ??= frame(event.id, JSON.stringify({ type: event.type, payload: event.payload }));
        this.post(stream, shared);
      } else {
        this.post(stream, render(stream.caller, event, this.views));
      }
    }
  }

  /**
   * Queues a frame for the end of this event-loop turn: the events one request causes (a volume change
   * touches a player and its zones) leave in one write per stream, once they are committed (flushNow).
   */
  private post(stream: Stream, chunk: string): void {
    stream.outbox += chunk;
    this.dirty.add(stream);
    this.flushTimer ??= setImmediate(() => this.flushOutboxes());
  }

  /**
   * Writes the queued frames now rather than at the turn's end: the HTTP turn calls this once its commit is in, so
   * its events leave in that turn, before its answers, and no write is left pending for the next loop iteration.
   */
  flushNow(): void {
    if (this.flushTimer === undefined) return;
    clearImmediate(this.flushTimer);
    this.flushOutboxes();
  }

  private flushOutboxes(): void {
    this.flushTimer = undefined;
    for (const stream of this.dirty) {
      const chunk = stream.outbox;
      stream.outbox = '';
      if (chunk) this.send(stream, chunk);
    }
    this.dirty.clear();
  }

  private send(stream: Stream, chunk: string): void {
    if (stream.closed) return;
    if (stream.blocked) {
      stream.queue.push(chunk);
      stream.backlog += Buffer.byteLength(chunk);
      this.cutOffIfStalled(stream);
      return;
    }
    this.write(stream, chunk);
  }

  /** Writes one chunk; uWS keeps a chunk it could not send, and we hold the rest until onWritable. */
  private write(stream: Stream, chunk: string): boolean {
    let accepted = false;
    try {
      stream.res.cork(() => {
        accepted = stream.res.write(chunk);
      });
    } catch (err) {
      // uWS throws on a response it already closed; treat it as a vanished client.
      this.logger.debug({ err }, 'event stream write on a closed response');
      this.forget(stream);
      return false;
    }
    if (!accepted) {
      stream.blocked = true;
      stream.backlog += Buffer.byteLength(chunk);
      this.cutOffIfStalled(stream);
    }
    return accepted;
  }

  private cutOffIfStalled(stream: Stream): void {
    if (stream.backlog <= this.options.maxBufferedBytes) return;
    this.stats.cutOff++;
    this.logger.warn(
      { user: stream.caller.userId, bufferedBytes: stream.backlog },
      'event stream cut off: the client is not reading',
    );
    this.abort(stream);
  }

  /** Called by uWS when the socket drained: send what waited, stopping at the next backpressure. */
  private flush(stream: Stream): boolean {
    if (stream.closed) return true;
    stream.blocked = false;
    stream.backlog = stream.queue.reduce((n, c) => n + Buffer.byteLength(c), 0);
    while (stream.queue.length > 0 && !stream.closed) {
      const chunk = stream.queue.shift()!;
      stream.backlog -= Buffer.byteLength(chunk);
      if (!this.write(stream, chunk)) break;
    }
    return true;
  }

  private recheckUser(userId: string): void {
    const mine = this.byUser.get(userId);
    if (!mine) return;
    for (const stream of [...mine]) this.recheck(stream);
  }

  private recheck(stream: Stream): void {
    const caller = this.auth.recheck(stream.caller);
    if (caller) {
      // What this client may see changed: the state it holds is now wrong in ways no event describes.
      if (accessChangeNeedsRefetch(stream.caller, caller)) {
        this.post(stream, this.reset('your role or assignments changed; refetch state'));
      }
      stream.caller = caller;
      return;
    }
    this.stats.revoked++;
    this.end(stream);
  }

  /** A stream.reset message, with the id of the last event so far: a client resuming after it misses nothing. */
  private reset(reason: string): string {
    return frame(this.bus.lastId, JSON.stringify({ type: 'stream.reset', payload: { reason } }));
  }

  private startTimers(): void {
    this.pingTimer ??= setInterval(() => {
      for (const stream of this.streams) this.send(stream, PING);
    }, this.options.pingIntervalMs);
    // Session expiry is the one change no account operation announces: check session streams regularly.
    this.recheckTimer ??= setInterval(() => {
      for (const stream of [...this.streams]) if (stream.caller.credential.kind === 'session') this.recheck(stream);
    }, this.options.recheckIntervalMs);
  }

  private stopTimers(): void {
    clearInterval(this.pingTimer);
    clearInterval(this.recheckTimer);
    this.pingTimer = undefined;
    this.recheckTimer = undefined;
  }

  /**
   * Ends the response with the last chunk, so the client sees the stream finish (an EventSource then
   * reconnects and meets a 401). Not end('', true): this uWS build then writes a header after the body.
   */
  private end(stream: Stream): void {
    if (stream.closed) return;
    this.forget(stream);
    try {
      stream.res.cork(() => stream.res.end());
    } catch {
      // Already gone: nothing to end.
    }
  }

  /** Drops the connection at once (a stalled reader gets no graceful end). */
  private abort(stream: Stream): void {
    if (stream.closed) return;
    this.forget(stream);
    try {
      stream.res.close();
    } catch {
      // Already gone.
    }
  }

  private forget(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.queue.length = 0;
    stream.outbox = '';
    this.dirty.delete(stream);
    this.streams.delete(stream);
    const mine = this.byUser.get(stream.caller.userId);
    mine?.delete(stream);
    if (mine && mine.size === 0) this.byUser.delete(stream.caller.userId);
    this.stats.closed++;
    this.onCount?.(this.streams.size);
    if (this.streams.size === 0) this.stopTimers();
  }
}

function writeStreamHeaders(res: HttpResponse, requestId: string): void {
  res.writeHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.writeHeader('Cache-Control', 'no-cache, no-transform');
  res.writeHeader('X-Accel-Buffering', 'no');
  res.writeHeader('X-Content-Type-Options', 'nosniff');
  res.writeHeader('X-Request-Id', requestId);
}

/** The message of an event the caller may see, in the caller's view. */
function render(caller: Caller, event: StampedEvent, views: CallerViews | undefined): string {
  return frame(event.id, JSON.stringify({ type: event.type, payload: eventPayloadFor(caller, event, views) }));
}

function frame(id: string, data: string): string {
  return `id: ${id}\ndata: ${data}\n\n`;
}
