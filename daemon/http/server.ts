// The uWS adapter: headers, body reading with the cap, abort, cork and write around the request pipeline (dispatch.ts).
import { HttpError } from './problem.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { CAPTURED_HEADERS, type ApiResult, type RequestHeaders, type Route } from './route.js';
import {
  Dispatcher,
  EMPTY_QUERY,
  Exchange,
  type InjectRequest,
  type InjectResponse,
  type PipelineOptions,
} from './dispatch.js';
import { isPaused, isUnderWay, move, onAbort, type Phase } from './request-lifecycle.js';
import { sendStreamed } from './streamed-body.js';

export { statusLine } from './dispatch.js';

export interface ServerOptions extends PipelineOptions {
  /**
   * Called once the requests taken up in one event-loop turn have run, before their answers are written: the daemon
   * commits its group commit there, so an acknowledgement goes out in the same turn, before uWS reads again.
   */
  endOfTurn?: () => void;
}

const UPPER_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** The header names as bytes: uWS takes a Buffer as it is, where a string is encoded to UTF-8 on every call. */
const NAME = Object.fromEntries(CAPTURED_HEADERS.map((name) => [name, Buffer.from(name, 'latin1')])) as Record<keyof RequestHeaders, Buffer>;

/** A request on a socket: the pipeline's exchange plus the uWS response and where the request is in its life. */
class SocketExchange extends Exchange {
  phase: Phase = 'routing';
  /** Sent instead of running the route once the request is taken up (a framing error). */
  rejection: HttpError | undefined;
  /** The body as it arrives (requests with a body only). */
  chunks: Buffer[] | undefined;
  /** Ends a streamed answer whose client went away. */
  stopStream: (() => void) | undefined;
  size = 0;
  private address: string | undefined;

  constructor(
    dispatcher: Dispatcher,
    readonly res: HttpResponse,
    method: string,
    path: string,
    rawQuery: string,
    query: URLSearchParams,
    headers: RequestHeaders,
    requestId: string,
  ) {
    super(dispatcher, method, path, rawQuery, query, headers, requestId);
  }

  /** Read on demand (only login needs it); valid until the response is sent. */
  get ip(): string {
    return (this.address ??= remoteAddress(this.res));
  }
}

export class HttpServer {
  readonly dispatcher: Dispatcher;
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | undefined;
  /** Requests under way (bodies being read, handlers awaiting) not yet answered; shutdown waits for them. */
  private inflight = 0;
  private drained: Array<() => void> = [];
  /** Requests taken up at the end of this event-loop turn (see defer), and the pending immediate. */
  private ready: SocketExchange[] = [];
  private readyTimer: NodeJS.Immediate | undefined;
  /** Requests whose handler went async in this turn; those still unanswered when it ends are paused (see hold). */
  private handling: SocketExchange[] = [];
  private holdTimer: NodeJS.Immediate | undefined;
  private readonly endOfTurn: (() => void) | undefined;
  private readonly uws = loadUws();
  boundPort = 0;

  constructor(options: ServerOptions) {
    this.dispatcher = new Dispatcher(options);
    this.endOfTurn = options.endOfTurn;
    this.app = this.uws.module.App();
    this.app.any('/*', (res, req) => this.handle(res, req));
  }

  get uwsSource(): string {
    return this.uws.source;
  }

  get routes(): Route[] {
    return this.dispatcher.routes;
  }

  add(routes: Route[]): void {
    this.dispatcher.add(routes);
  }

  /** Sends a request through the same pipeline without a socket (tests, in-process callers). */
  inject(request: InjectRequest): Promise<InjectResponse> {
    return this.dispatcher.dispatch(request);
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = this.uws.module.us_socket_local_port(socket);
        resolve(this.boundPort);
      });
    });
  }

  /** Stops accepting new connections; open ones (and their in-flight requests) continue. */
  stopListening(): void {
    if (this.listenSocket) this.uws.module.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }

  /** Resolves once no request is waiting on a body or an async handler (or after `timeoutMs`). */
  drain(timeoutMs: number): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drained.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Closes every open connection, event streams included. */
  close(): void {
    this.stopListening();
    // Present at run time though missing from the type declarations: closes all sockets.
    (this.app as unknown as { close?: () => void }).close?.();
  }

  private handle(res: HttpResponse, req: HttpRequest): void {
    const sent = req.getCaseSensitiveMethod();
    const method = UPPER_METHODS.has(sent) ? sent : sent.toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    // Each header is a native call: API requests skip the three only the event stream and the dashboard's files
    // read (the stream's resume point, and the static files' ETag and compression). One object literal, so every
    // request's headers have the same shape.
    const all = !path.startsWith('/api/') || path.startsWith('/api/stream/');
    const headers: RequestHeaders = {
      authorization: req.getHeader(NAME.authorization),
      'x-api-key': req.getHeader(NAME['x-api-key']),
      'content-type': req.getHeader(NAME['content-type']),
      'content-length': req.getHeader(NAME['content-length']),
      'x-request-id': req.getHeader(NAME['x-request-id']),
      'last-event-id': all ? req.getHeader(NAME['last-event-id']) : '',
      'if-none-match': all ? req.getHeader(NAME['if-none-match']) : '',
      'accept-encoding': all ? req.getHeader(NAME['accept-encoding']) : '',
      host: req.getHeader(NAME.host),
    };
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY;
    const dispatcher = this.dispatcher;
    const ex = new SocketExchange(dispatcher, res, method, path, rawQuery, query, headers, dispatcher.requestId(headers['x-request-id']));
    // uWS frames the body by the first Content-Length; a message whose lengths disagree is refused (RFC 9112
    // 6.3), not guessed at. Only requests that declare a length pay for the walk over their headers. The 400
    // (which closes the connection) waits like a write: whatever was sent behind it is never run.
    if (headers['content-length'] && contentLengthsDisagree(req)) {
      ex.rejection = new HttpError(400, 'the request has several Content-Length headers that disagree; send exactly one');
      this.defer(ex, 'rejecting');
      return;
    }
    try {
      const compiled = dispatcher.match(ex, res);
      if (!compiled) {
        this.enter(ex, 'answered');
        return;
      }
      if (compiled.route.kind === 'raw') {
        compiled.route.open(ex, res);
        this.enter(ex, 'answered');
        dispatcher.log(ex, 200);
        return;
      }
      if (compiled.body) this.readBody(ex);
      else if (method === 'GET' || method === 'HEAD') this.finish(ex, dispatcher.run(ex, undefined, false));
      else this.defer(ex, 'waiting');
    } catch (err) {
      this.fail(ex, err);
    }
  }

  /** Moves `ex` to `next`, keeping the count of requests under way that shutdown waits for. */
  private enter(ex: SocketExchange, next: Phase): void {
    const wasUnderWay = isUnderWay(ex.phase);
    ex.phase = move(ex.phase, next);
    if (wasUnderWay === isUnderWay(next)) return;
    if (!wasUnderWay) {
      this.inflight++;
      return;
    }
    if (--this.inflight === 0) {
      const waiters = this.drained;
      this.drained = [];
      for (const resolve of waiters) resolve();
    }
  }

  private abort(ex: SocketExchange): void {
    const next = onAbort(ex.phase);
    if (next) this.enter(ex, next);
    ex.stopStream?.();
    // A body streaming into a sink whose handler will never run lets go of it (a handler running finishes it).
    if (next === 'aborted') ex.sink?.abort();
  }

  /** Reads the whole body, copying every chunk (uWS neuters them) and enforcing the cap as bytes arrive. */
  private readBody(ex: SocketExchange): void {
    this.dispatcher.checkDeclaredLength(ex);
    const limit = this.dispatcher.bodyLimit(ex);
    const sink = this.dispatcher.openBody(ex);
    ex.res.onAborted(() => this.abort(ex));
    this.enter(ex, 'reading');
    const chunks: Buffer[] = (ex.chunks = []);
    ex.res.onData((chunk, isLast) => {
      if (ex.phase !== 'reading') return;
      ex.size += chunk.byteLength;
      if (ex.size > limit) {
        this.fail(ex, this.dispatcher.tooLarge(ex));
        return;
      }
      const piece = Buffer.from(new Uint8Array(chunk));
      if (sink) {
        try {
          sink.write(piece);
        } catch (err) {
          // Answered before the rest of the body: the connection closes behind the answer.
          this.fail(ex, err, true);
          return;
        }
      } else {
        chunks.push(piece);
      }
      if (isLast) this.schedule(ex, 'waiting');
    });
  }

  /**
   * Takes a request up at the end of this event-loop turn instead of now. uWS parses every request that came
   * in the same read before that turn ends, and closes the connection when one arrives while an earlier answer
   * is still pending; a change applied before that would lose its answer. So a request that may change
   * something runs only once the parser is done with its bytes (if the connection is gone by then, nothing
   * happens). Its answer then goes out in the same turn (endOfTurn commits), before uWS reads the socket again;
   * a handler that outlives the turn has its socket paused until it answers (hold), so pipelined requests wait.
   */
  private defer(ex: SocketExchange, next: 'waiting' | 'rejecting'): void {
    ex.res.onAborted(() => this.abort(ex));
    this.schedule(ex, next);
  }

  private schedule(ex: SocketExchange, next: 'waiting' | 'rejecting'): void {
    this.enter(ex, next);
    this.ready.push(ex);
    this.readyTimer ??= setImmediate(this.takeUpReady);
    // Queued behind takeUpReady in the same turn: runs after it and after the microtasks that write its answers.
    this.holdTimer ??= setImmediate(this.hold);
  }

  private readonly takeUpReady = (): void => {
    this.readyTimer = undefined;
    const batch = this.ready;
    this.ready = [];
    for (const ex of batch) this.takeUp(ex);
    this.endOfTurn?.();
  };

  /** Pauses the socket of every request whose handler is still running at the end of the turn it went async in. */
  private readonly hold = (): void => {
    this.holdTimer = undefined;
    const batch = this.handling;
    this.handling = [];
    for (const ex of batch) {
      if (ex.phase !== 'handling') continue;
      this.enter(ex, 'held');
      ex.res.pause();
    }
  };

  private takeUp(ex: SocketExchange): void {
    if (ex.phase === 'rejecting') {
      this.fail(ex, ex.rejection, true);
      return;
    }
    if (ex.phase !== 'waiting') return;
    try {
      const chunks = ex.chunks;
      let body: Buffer | undefined;
      if (chunks) {
        body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, ex.size);
        ex.chunks = undefined;
      }
      this.finish(ex, this.dispatcher.run(ex, body, true));
    } catch (err) {
      this.fail(ex, err);
    }
  }

  private finish(ex: SocketExchange, result: ApiResult | Promise<ApiResult>): void {
    if (!(result instanceof Promise)) {
      this.write(ex, result);
      return;
    }
    // Registered before the response goes async, as uWS requires; the handler still finishes its writes.
    if (ex.phase === 'routing') ex.res.onAborted(() => this.abort(ex));
    this.enter(ex, 'handling');
    this.handling.push(ex);
    // Inside a uWS callback this runs before uWS reads again; inside takeUpReady one is already queued.
    this.holdTimer ??= setImmediate(this.hold);
    result.then(
      (value) => this.write(ex, value),
      (err) => this.fail(ex, err),
    );
  }

  private fail(ex: SocketExchange, err: unknown, closeConnection = false): void {
    const result = this.dispatcher.failure(ex, err);
    this.write(ex, result, closeConnection || result.status === 413);
  }

  private write(ex: SocketExchange, result: ApiResult, closeConnection = false): void {
    const from = ex.phase;
    if (from === 'orphaned') this.enter(ex, 'aborted');
    if (from === 'orphaned' || from === 'answered' || from === 'aborted') {
      result.stream?.close();
      return;
    }
    if (result.stream && ex.method !== 'HEAD') {
      this.stream(ex, result, from);
      return;
    }
    this.enter(ex, 'answered');
    const { res } = ex;
    const dispatcher = this.dispatcher;
    res.cork(() => {
      // The next pipelined request is read once this answer is on its way.
      if (isPaused(from)) res.resume();
      dispatcher.respond(res, ex, result, closeConnection);
    });
    dispatcher.log(ex, result.status);
  }

  /**
   * A streamed body goes out while the request counts as under way (shutdown waits for it); its access-log line is
   * written once it ended, with the time the whole took.
   */
  private stream(ex: SocketExchange, result: ApiResult, from: Phase): void {
    const { res } = ex;
    // A synchronous handler has not registered it yet, and uWS needs it before the body goes async.
    if (from === 'routing') res.onAborted(() => this.abort(ex));
    this.enter(ex, 'streaming');
    res.cork(() => {
      if (isPaused(from)) res.resume();
      this.dispatcher.respond(res, ex, result, false);
    });
    ex.stopStream = sendStreamed(res, result.stream!, () => ex.phase !== 'streaming', (whole, err) => {
      ex.stopStream = undefined;
      if (err) this.dispatcher.streamFailed(ex, err);
      if (ex.phase === 'streaming') this.enter(ex, whole ? 'answered' : 'aborted');
      this.dispatcher.log(ex, result.status);
    }).stop;
  }
}

// req.forEach takes a callback: these two slots let one module-level function serve every request.
let firstContentLength: string | undefined;
let contentLengthDiffers = false;

function compareContentLength(key: string, value: string): void {
  if (key !== 'content-length') return;
  const length = value.trim();
  if (firstContentLength === undefined) firstContentLength = length;
  else if (length !== firstContentLength) contentLengthDiffers = true;
}

/** Whether the request carries Content-Length headers with different values (identical repeats are harmless). */
function contentLengthsDisagree(req: HttpRequest): boolean {
  firstContentLength = undefined;
  contentLengthDiffers = false;
  req.forEach(compareContentLength);
  return contentLengthDiffers;
}

function remoteAddress(res: HttpResponse): string {
  try {
    return Buffer.from(res.getRemoteAddressAsText()).toString();
  } catch {
    return '';
  }
}
