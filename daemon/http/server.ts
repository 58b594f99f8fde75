// The uWS adapter: routing, credentials, body reading, validation, problem details and access logs.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { Caller } from '../domain/access.js';
import { HttpError, asHttpError, toProblem, unauthorized } from './problem.js';
import { Router } from './router.js';
import { parseJsonBody, Validator } from './schema.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { CAPTURED_HEADERS, type ApiRequest, type ApiResult, type JsonRoute, type RequestHeaders, type Route } from './route.js';
import { extractCredential, type Credential } from './credentials.js';
import { createAccessLog, type AccessLog } from './access-log.js';

export interface ServerOptions {
  logger: Logger;
  maxBodyBytes: number;
  /** Resolves a credential to a caller from current state; null means 401. */
  authenticate(credential: Credential): Caller | null;
  /** Serves anything that no API route matched (the dashboard); returns false when it has nothing. */
  fallback?: (req: ApiRequest<Record<string, string>, undefined>, res: HttpResponse) => boolean;
}

interface Compiled {
  route: Route;
  params?: Validator<any>;
  body?: Validator<any>;
  query?: Validator<any>;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  204: '204 No Content',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  413: '413 Content Too Large',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export const statusLine = (status: number): string => STATUS_TEXT[status] ?? `${status} Status`;

/**
 * One request and its response. Handlers see it as their ApiRequest; the other fields are the bookkeeping uWS
 * needs, since it forbids touching a response after it was aborted or ended.
 */
class Exchange implements ApiRequest<Record<string, string>, any> {
  params: Record<string, string> = {};
  body: any = undefined;
  caller: Caller | null = null;
  compiled: Compiled | undefined;
  readonly started = performance.now();
  aborted = false;
  done = false;
  /** Answered after handle() returned: counted as in flight until written or aborted. */
  async = false;
  settled = false;
  /** An async handler is running: shutdown waits for it even if the client went away. */
  handling = false;
  /** The socket is not read until this request is answered (see HttpServer.defer). */
  paused = false;
  /** Sent instead of running the route once the request is taken up (a framing error). */
  rejection: HttpError | undefined;
  /** The body as it arrives (requests with a body only). */
  chunks: Buffer[] | undefined;
  size = 0;
  private address: string | undefined;

  constructor(
    private readonly server: HttpServer,
    readonly res: HttpResponse,
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly query: URLSearchParams,
    readonly headers: RequestHeaders,
    readonly requestId: string,
  ) {}

  /** Read on demand (only login needs it); valid until the response is sent. */
  get ip(): string {
    return (this.address ??= remoteAddress(this.res));
  }

  /** The request target as sent; logged only through redactUrl. */
  get url(): string {
    return this.rawQuery ? `${this.path}?${this.rawQuery}` : this.path;
  }

  revalidate(): Caller {
    return this.server.authorize(this);
  }
}

const EMPTY_QUERY = new URLSearchParams();
const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const idPrefix = randomBytes(3).toString('hex');
let idCounter = 0;

export class HttpServer {
  readonly routes: Route[] = [];
  private readonly router = new Router<Compiled>();
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | undefined;
  /** Async requests (bodies being read, handlers awaiting) not yet answered; shutdown waits for them. */
  private inflight = 0;
  private drained: Array<() => void> = [];
  /** Requests taken up at the end of this event-loop turn (see defer), and the pending immediate. */
  private ready: Exchange[] = [];
  private readyTimer: NodeJS.Immediate | undefined;
  private readonly uws = loadUws();
  boundPort = 0;

  private readonly accessLog: AccessLog;

  constructor(private readonly options: ServerOptions) {
    this.accessLog = createAccessLog(options.logger);
    this.app = this.uws.module.App();
    this.app.any('/*', (res, req) => this.handle(res, req));
  }

  get uwsSource(): string {
    return this.uws.source;
  }

  add(routes: Route[]): void {
    for (const route of routes) {
      const compiled: Compiled = { route };
      if (route.params) compiled.params = new Validator(route.params);
      if (route.body) compiled.body = new Validator(route.body);
      if (route.query) compiled.query = new Validator(route.query);
      this.router.add(route.method, route.path, compiled);
      this.routes.push(route);
    }
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

  /**
   * Resolves the request's caller from its credential as things are now and applies the route's access rule:
   * at authentication, again once the body is in (revocation is final for requests in flight), and whenever a
   * handler calls ApiRequest.revalidate().
   */
  authorize(ex: Exchange): Caller {
    const route = ex.compiled?.route;
    if (!route || route.access === 'public') throw new Error('revalidate() is only available on authenticated routes');
    const credential = extractCredential(ex.headers, ex.query);
    if (credential === null) throw unauthorized();
    if (credential === 'malformed') throw unauthorized('the Authorization header must be "Bearer <API key or session token>"');
    const caller = this.options.authenticate(credential);
    if (!caller) throw unauthorized('the credential is invalid, revoked, or belongs to a disabled user');
    ex.caller = caller;
    if (route.access === 'admin' && caller.role !== 'Admin') {
      throw new HttpError(403, `${ex.method} ${route.path} is for administrators only`);
    }
    if (route.access === 'writer' && caller.role === 'Viewer') {
      throw new HttpError(403, 'a Viewer can read but not change anything');
    }
    return caller;
  }

  private handle(res: HttpResponse, req: HttpRequest): void {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = {} as RequestHeaders;
    for (const name of CAPTURED_HEADERS) headers[name] = req.getHeader(name);
    const incomingId = headers['x-request-id'];
    const requestId = REQUEST_ID_RE.test(incomingId) ? incomingId : `${idPrefix}-${(++idCounter).toString(36)}`;
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY;
    const ex = new Exchange(this, res, method, path, rawQuery, query, headers, requestId);
    // uWS frames the body by the first Content-Length; a message whose lengths disagree is refused (RFC 9112
    // 6.3), not guessed at. Only requests that declare a length pay for the walk over their headers. The 400
    // (which closes the connection) waits like a write: whatever was sent behind it is never run.
    if (headers['content-length'] && contentLengthsDisagree(req)) {
      this.defer(ex, new HttpError(400, 'the request has several Content-Length headers that disagree; send exactly one'));
      return;
    }
    try {
      const lookup = this.router.find(method === 'HEAD' ? 'GET' : method, path);
      if (lookup.kind !== 'found') {
        if ((method === 'GET' || method === 'HEAD') && this.options.fallback?.(ex, res)) {
          ex.done = true;
          this.log(ex, 200);
          return;
        }
        if (lookup.kind === 'method-not-allowed') {
          throw new HttpError(405, `${method} is not allowed on ${path}; use ${lookup.allow.join(', ')}`, {
            headers: { Allow: lookup.allow.join(', ') },
          });
        }
        throw new HttpError(404, `no resource at ${path}`);
      }
      const compiled = lookup.match.route;
      const route = compiled.route;
      ex.compiled = compiled;
      if (route.access !== 'public') this.authorize(ex);
      const params = lookup.match.params;
      ex.params = compiled.params ? normaliseIds(compiled.params.parse(params, 'path')) : params;
      if (compiled.query) compiled.query.parse(Object.fromEntries(query), 'query');
      if (route.kind === 'raw') {
        route.open(ex, res);
        ex.done = true;
        this.log(ex, 200);
        return;
      }
      if (compiled.body) this.readBody(ex);
      else if (method === 'GET' || method === 'HEAD') this.finish(ex, route.handle(ex as Exchange & { caller: Caller }));
      else this.defer(ex);
    } catch (err) {
      this.fail(ex, err);
    }
  }

  /** Reads the whole body, copying every chunk (uWS neuters them) and enforcing the cap as bytes arrive. */
  private readBody(ex: Exchange): void {
    const contentLength = ex.headers['content-length'];
    const limit = this.options.maxBodyBytes;
    if (contentLength && Number(contentLength) > limit) {
      throw new HttpError(413, `the request body is ${contentLength} bytes; the limit is ${limit}`);
    }
    ex.res.onAborted(() => this.aborted(ex));
    this.begin(ex);
    const chunks: Buffer[] = (ex.chunks = []);
    ex.res.onData((chunk, isLast) => {
      if (ex.done || ex.aborted) return;
      ex.size += chunk.byteLength;
      if (ex.size > limit) {
        this.fail(ex, new HttpError(413, `the request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) this.schedule(ex);
    });
  }

  /**
   * Takes a request up at the end of this event-loop turn instead of now. uWS parses every request that came
   * in the same read before that turn ends, and closes the connection when one arrives while an earlier answer
   * is still pending; a change applied before that would lose its answer. So a request that may change
   * something runs only once the parser is done with its bytes (if the connection is gone by then, nothing
   * happens), and its socket is not read again until it is answered: pipelined requests then wait their turn.
   */
  private defer(ex: Exchange, rejection?: HttpError): void {
    ex.rejection = rejection;
    ex.res.onAborted(() => this.aborted(ex));
    this.begin(ex);
    this.schedule(ex);
  }

  private schedule(ex: Exchange): void {
    if (!ex.rejection) this.pause(ex);
    this.ready.push(ex);
    this.readyTimer ??= setImmediate(this.takeUpReady);
  }

  private readonly takeUpReady = (): void => {
    this.readyTimer = undefined;
    const batch = this.ready;
    this.ready = [];
    for (const ex of batch) this.takeUp(ex);
  };

  private takeUp(ex: Exchange): void {
    if (ex.aborted) return;
    if (ex.rejection) {
      this.fail(ex, ex.rejection, true);
      return;
    }
    const compiled = ex.compiled!;
    try {
      // The caller may have been deleted, disabled, demoted or unassigned while the body was on its way.
      if (compiled.route.access !== 'public') this.authorize(ex);
      if (compiled.body) {
        const chunks = ex.chunks ?? [];
        const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, ex.size);
        ex.chunks = undefined;
        ex.body = compiled.body.parse(parseJsonBody(buffer, ex.headers['content-type']), 'body');
      }
      this.finish(ex, (compiled.route as JsonRoute).handle(ex as Exchange & { caller: Caller }));
    } catch (err) {
      this.fail(ex, err);
    }
  }

  private pause(ex: Exchange): void {
    if (ex.paused || ex.aborted) return;
    ex.paused = true;
    ex.res.pause();
  }

  private aborted(ex: Exchange): void {
    ex.aborted = true;
    if (!ex.handling) this.end(ex);
  }

  private finish(ex: Exchange, result: ApiResult | Promise<ApiResult>): void {
    if (result instanceof Promise) {
      ex.handling = true;
      if (!ex.async) {
        // Registered before the response goes async, as uWS requires; the handler still finishes its writes.
        ex.res.onAborted(() => {
          ex.aborted = true;
        });
        this.begin(ex);
      }
      this.pause(ex);
      result.then(
        (value) => this.write(ex, value),
        (err) => this.fail(ex, err),
      );
      return;
    }
    this.write(ex, result);
  }

  private fail(ex: Exchange, err: unknown, closeConnection = false): void {
    let error = asHttpError(err);
    if (!error) {
      this.options.logger.error({ err, reqId: ex.requestId }, 'unhandled error in request');
      error = new HttpError(500, `internal error; quote request id ${ex.requestId} when reporting it`);
    }
    // The path only: the query may carry an API key.
    const problem = toProblem(error, ex.path, ex.requestId);
    this.write(ex, {
      status: error.status,
      raw: JSON.stringify(problem),
      contentType: 'application/problem+json',
      headers: error.options.headers,
    }, closeConnection || error.status === 413);
  }

  private begin(ex: Exchange): void {
    if (ex.async) return;
    ex.async = true;
    this.inflight++;
  }

  private end(ex: Exchange): void {
    if (!ex.async || ex.settled) return;
    ex.settled = true;
    if (--this.inflight === 0) {
      const waiters = this.drained;
      this.drained = [];
      for (const resolve of waiters) resolve();
    }
  }

  private write(ex: Exchange, result: ApiResult, closeConnection = false): void {
    this.end(ex);
    if (ex.aborted || ex.done) return;
    ex.done = true;
    const { res } = ex;
    res.cork(() => {
      // The next pipelined request is read once this answer is on its way.
      if (ex.paused) res.resume();
      res.writeStatus(statusLine(result.status));
      res.writeHeader('X-Request-Id', ex.requestId);
      res.writeHeader('X-Content-Type-Options', 'nosniff');
      if (ex.compiled?.route.sensitive) res.writeHeader('Cache-Control', 'no-store');
      if (result.headers) for (const [key, value] of Object.entries(result.headers)) res.writeHeader(key, value);
      if (result.status === 204 || result.status === 304) {
        // This uWS build aborts the process if endWithoutBody gets explicit undefined arguments.
        res.endWithoutBody();
        return;
      }
      if (result.raw !== undefined) {
        res.writeHeader('Content-Type', result.contentType ?? 'application/json');
        res.end(ex.method === 'HEAD' ? '' : result.raw, closeConnection);
      } else if (result.body !== undefined) {
        res.writeHeader('Content-Type', 'application/json');
        res.end(ex.method === 'HEAD' ? '' : JSON.stringify(result.body), closeConnection);
      } else {
        res.end('', closeConnection);
      }
    });
    this.log(ex, result.status);
  }

  private log(ex: Exchange, status: number): void {
    this.accessLog({
      requestId: ex.requestId,
      method: ex.method,
      url: ex.url,
      status,
      ms: Math.round((performance.now() - ex.started) * 100) / 100,
    });
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

/** Lower-cases UUID path parameters so lookups match the stored form. */
function normaliseIds<T>(params: T): T {
  const out = params as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    const value = out[key];
    if (typeof value === 'string') out[key] = value.toLowerCase();
  }
  return params;
}

function remoteAddress(res: HttpResponse): string {
  try {
    return Buffer.from(res.getRemoteAddressAsText()).toString();
  } catch {
    return '';
  }
}
