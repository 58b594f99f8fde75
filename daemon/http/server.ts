// The uWS adapter: headers, body reading with the cap, abort, cork and write around the request pipeline (dispatch.ts).

import { Dispatcher, EMPTY_QUERY, type PipelineOptions, PipelineRequest } from './dispatch.js';
import { type InjectRequest, type InjectResponse, inject } from './inject.js';
import { HttpError } from './problem.js';
import { isPaused, isUnderWay, move, onAbort, type RequestState } from './request-lifecycle.js';
import { type ApiResult, CAPTURED_HEADERS, type RequestHeaders, type Route } from './route.js';
import { sendStreamed } from './streamed-body.js';
import { type HttpRequest, type HttpResponse, loadUws, type TemplatedApp, type us_listen_socket } from './uws.js';

export interface ServerOptions extends PipelineOptions {
  /**
   * Called once the requests taken up in one event-loop turn have run, before their answers are written: the daemon
   * commits its group commit there, so an acknowledgement goes out in the same turn, before uWS reads again.
   */
  endOfTurn?: () => void;
}

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (ListenOptions in the declarations): listen without SO_REUSEPORT. */
const EXCLUSIVE_PORT = 1;
type ListenWithOptions = {
  listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): unknown;
};

/**
 * Whether host:port can be listened on alone right now: a throwaway uWS listen, closed at once. Node's own net server
 * would do, but its listen loads node's cluster module, and with it child_process, dgram and dns (~1 MB of an idle
 * daemon's memory, ARCHITECTURE.md "Memory"). uWS says only yes or no.
 */
export function canListen(host: string, port: number): boolean {
  const uws = loadUws().module;
  let bound: us_listen_socket | false = false;
  (uws.App() as unknown as ListenWithOptions).listen(host, port, EXCLUSIVE_PORT, (socket) => {
    bound = socket;
  });
  if (bound) uws.us_listen_socket_close(bound);
  return Boolean(bound);
}

const UPPER_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
/** The header names as bytes: uWS takes a Buffer as it is, where a string is encoded to UTF-8 on every call. */
const NAME = Object.fromEntries(CAPTURED_HEADERS.map((name) => [name, Buffer.from(name, 'latin1')])) as Record<
  keyof RequestHeaders,
  Buffer
>;

/** A request on a socket: the pipeline's request plus the uWS response and where the request is in its life. */
class SocketRequest extends PipelineRequest {
  state: RequestState = 'routing';
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
  private ready: SocketRequest[] = [];
  private readyTimer: NodeJS.Immediate | undefined;
  /** Requests whose handler went async in this turn; those still unanswered when it ends are paused (see hold). */
  private handling: SocketRequest[] = [];
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
    return inject(this.dispatcher, request);
  }

  /**
   * Listens on host:port alone. uWS opens its socket with SO_REUSEPORT unless told otherwise: a second azcd on the same
   * address would then listen too, and the kernel would split the connections between two daemons and two databases.
   */
  listen(host: string, port: number): Promise<number> {
    const uws = this.uws.module;
    return new Promise((resolve, reject) => {
      const listening = (socket: us_listen_socket | false) => {
        if (!socket) {
          const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
          reject(
            new Error(
              `cannot listen on ${address}: the address is in use (another azcd or another program listens there) or not an ` +
                'address of this machine; stop the other one, or give this azcd another --port or --host',
            ),
          );
          return;
        }
        this.listenSocket = socket;
        this.boundPort = uws.us_socket_local_port(socket);
        resolve(this.boundPort);
      };
      // The (host, port, options, callback) form is in every build, though missing from some type declarations.
      (this.app as unknown as ListenWithOptions).listen(host, port, EXCLUSIVE_PORT, listening);
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
    const dispatcher = this.dispatcher;
    // Each header is a native call: those only some routes use (ROUTE_HEADERS) are read when the request's route
    // names them (Route.headers) or no route answers it, exactly as inject() gives them (ARCHITECTURE.md, "Request
    // headers"). One object literal, so every request's headers have the same shape.
    const lookup = dispatcher.find(method, path);
    const reads = dispatcher.headersRead(lookup);
    const headers: RequestHeaders = {
      authorization: req.getHeader(NAME.authorization),
      'x-api-key': req.getHeader(NAME['x-api-key']),
      'content-type': req.getHeader(NAME['content-type']),
      'content-length': req.getHeader(NAME['content-length']),
      'x-request-id': req.getHeader(NAME['x-request-id']),
      'last-event-id': reads['last-event-id'] ? req.getHeader(NAME['last-event-id']) : '',
      'if-none-match': reads['if-none-match'] ? req.getHeader(NAME['if-none-match']) : '',
      'accept-encoding': reads['accept-encoding'] ? req.getHeader(NAME['accept-encoding']) : '',
      accept: reads.accept ? req.getHeader(NAME.accept) : '',
      host: req.getHeader(NAME.host),
    };
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY;
    const request = new SocketRequest(
      dispatcher,
      res,
      method,
      path,
      rawQuery,
      query,
      headers,
      dispatcher.requestId(headers['x-request-id']),
    );
    // uWS frames the body by the first Content-Length; a message whose lengths disagree is refused (RFC 9112
    // 6.3), not guessed at. Only requests that declare a length pay for the walk over their headers. The 400
    // (which closes the connection) waits like a write: whatever was sent behind it is never run.
    if (headers['content-length'] && contentLengthsDisagree(req)) {
      request.rejection = new HttpError(
        400,
        'the request has several Content-Length headers that disagree; send exactly one',
      );
      this.defer(request, 'rejecting');
      return;
    }
    try {
      const compiled = dispatcher.match(request, res, lookup);
      if (!compiled) {
        this.enter(request, 'answered');
        return;
      }
      if (compiled.route.kind === 'raw') {
        compiled.route.open(request, res);
        this.enter(request, 'answered');
        dispatcher.log(request, 200);
        return;
      }
      if (compiled.body) this.readBody(request);
      else if (method === 'GET' || method === 'HEAD') this.finish(request, dispatcher.run(request, undefined, false));
      else this.defer(request, 'waiting');
    } catch (err) {
      this.fail(request, err);
    }
  }

  /** Moves `request` to `next`, keeping the count of requests under way that shutdown waits for. */
  private enter(request: SocketRequest, next: RequestState): void {
    const wasUnderWay = isUnderWay(request.state);
    request.state = move(request.state, next);
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

  private abort(request: SocketRequest): void {
    const next = onAbort(request.state);
    if (next) this.enter(request, next);
    request.stopStream?.();
    // A body streaming into a sink whose handler will never run lets go of it (a handler running finishes it).
    if (next === 'aborted') request.sink?.abort();
  }

  /** Reads the whole body, copying every chunk (uWS neuters them) and enforcing the cap as bytes arrive. */
  private readBody(request: SocketRequest): void {
    this.dispatcher.checkDeclaredLength(request);
    const limit = this.dispatcher.bodyLimit(request);
    const sink = this.dispatcher.openBody(request);
    request.res.onAborted(() => this.abort(request));
    this.enter(request, 'reading');
    const chunks: Buffer[] = (request.chunks = []);
    request.res.onData((chunk, isLast) => {
      if (request.state !== 'reading') return;
      request.size += chunk.byteLength;
      if (request.size > limit) {
        this.fail(request, this.dispatcher.tooLarge(request));
        return;
      }
      const piece = Buffer.from(new Uint8Array(chunk));
      if (sink) {
        try {
          sink.write(piece);
        } catch (err) {
          // Answered before the rest of the body: the connection closes behind the answer.
          this.fail(request, err, true);
          return;
        }
      } else {
        chunks.push(piece);
      }
      if (isLast) this.schedule(request, 'waiting');
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
  private defer(request: SocketRequest, next: 'waiting' | 'rejecting'): void {
    request.res.onAborted(() => this.abort(request));
    this.schedule(request, next);
  }

  private schedule(request: SocketRequest, next: 'waiting' | 'rejecting'): void {
    this.enter(request, next);
    this.ready.push(request);
    this.readyTimer ??= setImmediate(this.takeUpReady);
    // Queued behind takeUpReady in the same turn: runs after it and after the microtasks that write its answers.
    this.holdTimer ??= setImmediate(this.hold);
  }

  private readonly takeUpReady = (): void => {
    this.readyTimer = undefined;
    const batch = this.ready;
    this.ready = [];
    for (const request of batch) this.takeUp(request);
    this.endOfTurn?.();
  };

  /** Pauses the socket of every request whose handler is still running at the end of the turn it went async in. */
  private readonly hold = (): void => {
    this.holdTimer = undefined;
    const batch = this.handling;
    this.handling = [];
    for (const request of batch) {
      if (request.state !== 'handling') continue;
      this.enter(request, 'held');
      request.res.pause();
    }
  };

  private takeUp(request: SocketRequest): void {
    if (request.state === 'rejecting') {
      this.fail(request, request.rejection, true);
      return;
    }
    if (request.state !== 'waiting') return;
    try {
      const chunks = request.chunks;
      let body: Buffer | undefined;
      if (chunks) {
        body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, request.size);
        request.chunks = undefined;
      }
      this.finish(request, this.dispatcher.run(request, body, true));
    } catch (err) {
      this.fail(request, err);
    }
  }

  private finish(request: SocketRequest, result: ApiResult | Promise<ApiResult>): void {
    if (!(result instanceof Promise)) {
      this.write(request, result);
      return;
    }
    // Registered before the response goes async, as uWS requires; the handler still finishes its writes.
    if (request.state === 'routing') request.res.onAborted(() => this.abort(request));
    this.enter(request, 'handling');
    this.handling.push(request);
    // Inside a uWS callback this runs before uWS reads again; inside takeUpReady one is already queued.
    this.holdTimer ??= setImmediate(this.hold);
    result.then(
      (value) => this.write(request, value),
      (err) => this.fail(request, err),
    );
  }

  private fail(request: SocketRequest, err: unknown, closeConnection = false): void {
    const result = this.dispatcher.failure(request, err);
    this.write(request, result, closeConnection || result.status === 413);
  }

  private write(request: SocketRequest, result: ApiResult, closeConnection = false): void {
    const from = request.state;
    if (from === 'orphaned') this.enter(request, 'aborted');
    if (from === 'orphaned' || from === 'answered' || from === 'aborted') {
      result.stream?.close();
      return;
    }
    if (result.stream && request.method !== 'HEAD') {
      this.stream(request, result, from);
      return;
    }
    this.enter(request, 'answered');
    const { res } = request;
    const dispatcher = this.dispatcher;
    res.cork(() => {
      // The next pipelined request is read once this answer is on its way.
      if (isPaused(from)) res.resume();
      dispatcher.respond(res, request, result, closeConnection);
    });
    dispatcher.log(request, result.status);
  }

  /**
   * A streamed body goes out while the request counts as under way (shutdown waits for it); its access-log line is
   * written once it ended, with the time the whole took.
   */
  private stream(request: SocketRequest, result: ApiResult, from: RequestState): void {
    const { res } = request;
    // A synchronous handler has not registered it yet, and uWS needs it before the body goes async.
    if (from === 'routing') res.onAborted(() => this.abort(request));
    this.enter(request, 'streaming');
    res.cork(() => {
      if (isPaused(from)) res.resume();
      this.dispatcher.respond(res, request, result, false);
    });
    request.stopStream = sendStreamed(
      res,
      result.stream!,
      () => request.state !== 'streaming',
      (whole, err) => {
        request.stopStream = undefined;
        if (err) this.dispatcher.streamFailed(request, err);
        if (request.state === 'streaming') this.enter(request, whole ? 'answered' : 'aborted');
        this.dispatcher.log(request, result.status);
      },
    ).stop;
  }
}

/** Whether the request carries Content-Length headers with different values (identical repeats are harmless). */
function contentLengthsDisagree(req: HttpRequest): boolean {
  let first: string | undefined;
  let differs = false;
  req.forEach((key, value) => {
    if (key !== 'content-length') return;
    const length = value.trim();
    if (first === undefined) first = length;
    else if (length !== first) differs = true;
  });
  return differs;
}

function remoteAddress(res: HttpResponse): string {
  try {
    return Buffer.from(res.getRemoteAddressAsText()).toString();
  } catch {
    return '';
  }
}
