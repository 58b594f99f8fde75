// The request pipeline without a socket: route, credential → caller, route access, validation, handler, problem details, access log.
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { redactUrl } from '../log.js';
import type { Logger } from '../log.js';
import type { Caller } from '../domain/shared/index.js';
import { HttpError, asHttpError, toProblem, unauthorized } from './problem.js';
import { Router } from './router.js';
import { checkJsonMediaType, parseJsonBody, Validator } from './schema.js';
import { CAPTURED_HEADERS, type ApiRequest, type ApiResult, type BodySink, type JsonRoute, type RequestHeaders, type Route } from './route.js';
import { extractCredential, type Credential } from './credentials.js';
import { createAccessLog, type AccessLog } from './access-log.js';
import type { ReadCache } from './read-cache.js';
import { hostAllowed, misdirected, type HostNames } from './host-check.js';
import { readAll } from './streamed-body.js';

/** Where a response is written: the uWS response itself, or a recorder for inject(). */
export interface ResponseSink {
  writeStatus(status: string): unknown;
  writeHeader(key: string, value: string): unknown;
  end(body?: string | Buffer, closeConnection?: boolean): unknown;
  endWithoutBody(): unknown;
}

/** Serves a GET or HEAD no API route matched (the dashboard); returns false when it has nothing. */
export type Fallback = (req: ApiRequest<Record<string, string>, undefined>, res: ResponseSink) => boolean;

export interface PipelineOptions {
  logger: Logger;
  maxBodyBytes: number;
  /** Resolves a credential to a caller from current state; null means 401. */
  authenticate(credential: Credential): Caller | null;
  fallback?: Fallback;
  /** Keeps encoded answers of the read routes it covers until the state changes (read-cache.ts). */
  readCache?: ReadCache;
  /** The names requests may reach the appliance under (host-check.ts); every Host is answered without it. */
  hostNames?: HostNames;
  /**
   * Why the API cannot serve now (a restore is writing the configuration), or undefined: then every route but the
   * public reads (health, the OpenAPI document) is a 503 with Retry-After.
   */
  unavailable?: () => string | undefined;
}

export interface Compiled {
  route: Route;
  params?: Validator<any>;
  body?: Validator<any>;
  query?: Validator<any>;
  /** Its answers may come from the read cache. */
  cached?: boolean;
}

/** A request sent with inject(): `path` may carry a query; a body that is not a string or Buffer is sent as JSON. */
export interface InjectRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The client address the request appears to come from (login throttling keys on it). */
  remoteAddress?: string;
}

export interface InjectResponse<T = any> {
  status: number;
  headers: Headers;
  /** The parsed body when the response is JSON (problem details included); otherwise undefined. */
  body: T;
  text: string;
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
  421: '421 Misdirected Request',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export const statusLine = (status: number): string => STATUS_TEXT[status] ?? `${status} Status`;

/**
 * One request on its way through the pipeline. Handlers see it as their ApiRequest; each front door (the uWS
 * adapter, inject) extends it with how it reaches its client.
 */
export abstract class Exchange implements ApiRequest<Record<string, string>, any> {
  params: Record<string, string> = {};
  body: any = undefined;
  /** The route's body sink while its body streams in (JsonRoute.streamBody). */
  sink: BodySink | undefined;
  caller: Caller | null = null;
  compiled: Compiled | undefined;
  readonly started = performance.now();

  constructor(
    private readonly dispatcher: Dispatcher,
    readonly method: string,
    readonly path: string,
    readonly rawQuery: string,
    readonly query: URLSearchParams,
    readonly headers: RequestHeaders,
    readonly requestId: string,
  ) {}

  abstract get ip(): string;

  /** The request target as sent; logged only through redactUrl. */
  get url(): string {
    return this.rawQuery ? `${this.path}?${this.rawQuery}` : this.path;
  }

  revalidate(): Caller {
    return this.dispatcher.authorize(this);
  }
}

export const EMPTY_QUERY = new URLSearchParams();
const LINE_BREAKS = /[\r\n]+/g;
const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const idPrefix = randomBytes(3).toString('hex');
let idCounter = 0;

export class Dispatcher {
  readonly routes: Route[] = [];
  private readonly router = new Router<Compiled>();
  private readonly accessLog: AccessLog;

  constructor(private readonly options: PipelineOptions) {
    this.accessLog = createAccessLog(options.logger);
  }

  /** The body cap of the request's route: its own, or the configured default. */
  bodyLimit(ex: Exchange): number {
    return ex.compiled?.route.maxBodyBytes ?? this.options.maxBodyBytes;
  }

  add(routes: Route[]): void {
    for (const route of routes) {
      const compiled: Compiled = { route };
      if (route.params) compiled.params = new Validator(route.params);
      if (route.body) compiled.body = new Validator(route.body);
      if (route.query) compiled.query = new Validator(route.query);
      if (route.method === 'GET' && route.access !== 'public' && this.options.readCache?.covers(route)) compiled.cached = true;
      this.router.add(route.method, route.path, compiled);
      this.routes.push(route);
    }
  }

  /** The client's X-Request-Id when it is safe to echo and log, else a fresh one. */
  requestId(incoming: string): string {
    return incoming !== '' && REQUEST_ID_RE.test(incoming) ? incoming : `${idPrefix}-${(++idCounter).toString(36)}`;
  }

  /**
   * Everything before the body: finds the route (or lets the fallback answer: then undefined), resolves and
   * checks the caller, validates path and query. Throws an HttpError for the client.
   */
  match(ex: Exchange, sink: ResponseSink): Compiled | undefined {
    const { method, path } = ex;
    const names = this.options.hostNames;
    // Before anything else, the dashboard's files and public routes included: a rebinding page reads those too.
    if (names && !hostAllowed(ex.headers.host, names)) throw misdirected(ex.headers.host, names);
    const lookup = this.router.find(method === 'HEAD' ? 'GET' : method, path);
    if (lookup.kind !== 'found') {
      if ((method === 'GET' || method === 'HEAD') && this.options.fallback?.(ex, sink)) {
        this.log(ex, 200);
        return undefined;
      }
      if (lookup.kind === 'method-not-allowed') {
        throw new HttpError(405, `${method} is not allowed on ${path}; use ${lookup.allow.join(', ')}`, {
          headers: { Allow: lookup.allow.join(', ') },
        });
      }
      throw new HttpError(404, `no resource at ${path}`);
    }
    const compiled = lookup.match.route;
    ex.compiled = compiled;
    const busy = this.options.unavailable?.();
    if (busy !== undefined && !(compiled.route.access === 'public' && (method === 'GET' || method === 'HEAD'))) {
      throw new HttpError(503, busy, { headers: { 'Retry-After': '5' } });
    }
    if (compiled.route.access !== 'public') this.authorize(ex);
    const params = lookup.match.params;
    ex.params = compiled.params ? normaliseIds(compiled.params.parse(params, 'path')) : params;
    if (compiled.query) compiled.query.parse(Object.fromEntries(ex.query), 'query');
    return compiled;
  }

  /** The route's sink when its body is streamed (JsonRoute.streamBody), after the media type is checked. */
  openBody(ex: Exchange): BodySink | undefined {
    const route = ex.compiled?.route as JsonRoute | undefined;
    if (!route?.streamBody) return undefined;
    checkJsonMediaType(ex.headers['content-type']);
    ex.sink = route.streamBody(ex as Exchange & { caller: Caller });
    return ex.sink;
  }

  /** Refuses a body whose declared length is over the cap before any of it is read. */
  checkDeclaredLength(ex: Exchange): void {
    const contentLength = ex.headers['content-length'];
    const limit = this.bodyLimit(ex);
    if (contentLength && Number(contentLength) > limit) {
      throw new HttpError(413, `the request body is ${contentLength} bytes; the limit is ${limit}`);
    }
  }

  tooLarge(ex: Exchange): HttpError {
    return new HttpError(413, `the request body exceeds the limit of ${this.bodyLimit(ex)} bytes`);
  }

  /**
   * Resolves the request's caller from its credential as things are now: at authentication, again once the body is
   * in (revocation is final for requests in flight), and whenever a handler calls ApiRequest.revalidate(). What the
   * caller may do is checked once, by the service the handler calls, where it loads what it acts on; the route's
   * `access` documents that check.
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
    return caller;
  }

  /**
   * Everything after the body: re-checks the caller when time has passed since match() (`recheck`), parses and
   * validates the body, and runs the handler.
   */
  run(ex: Exchange, body: Buffer | undefined, recheck: boolean): ApiResult | Promise<ApiResult> {
    const compiled = ex.compiled!;
    // The caller may have been deleted, disabled, demoted or unassigned while the body was on its way.
    if (recheck && compiled.route.access !== 'public') this.authorize(ex);
    if (ex.sink) ex.body = ex.sink;
    else if (compiled.body) ex.body = compiled.body.parse(parseJsonBody(body ?? EMPTY_BODY, ex.headers['content-type']), 'body');
    const handle = (compiled.route as JsonRoute).handle;
    if (compiled.cached) {
      // The caller was resolved and checked above, as for every request; only the answer is reused.
      const cache = this.options.readCache!;
      const key = cache.keyOf(ex.caller, ex.path, ex.rawQuery);
      if (key !== undefined) {
        const hit = cache.get(key);
        if (hit) return hit;
        const result = handle(ex as Exchange & { caller: Caller });
        return result instanceof Promise ? result : cache.keep(key, result);
      }
    }
    return handle(ex as Exchange & { caller: Caller });
  }

  /** The problem-details answer for any error; anything not an HttpError or DomainError is a logged 500. */
  failure(ex: Exchange, err: unknown): ApiResult {
    // A streamed body that never reached its handler lets go of what it holds (a sink is finished only once).
    ex.sink?.abort();
    let error = asHttpError(err);
    if (!error) {
      this.options.logger.error({ err, reqId: ex.requestId }, 'unhandled error in request');
      error = new HttpError(500, `internal error; quote request id ${ex.requestId} when reporting it`);
    }
    // The path only (the query may carry an API key), and redacted: a key may be sent as a path segment too.
    const problem = toProblem(error, redactUrl(ex.path), ex.requestId);
    return { status: error.status, raw: JSON.stringify(problem), contentType: 'application/problem+json', headers: error.options.headers };
  }

  /** A streamed body that failed after its status went out: the client sees a cut transfer, the log says why. */
  streamFailed(ex: Exchange, err: unknown): void {
    this.options.logger.error({ err, reqId: ex.requestId }, 'a streamed answer failed after its status was sent; the connection was closed');
  }

  /** Writes status, headers and body; HEAD gets the headers of the GET without its body. */
  respond(sink: ResponseSink, ex: Exchange, result: ApiResult, closeConnection: boolean): void {
    // The status line and every header go to uWS in one call (it writes the status text as given, and each
    // native call costs more than the bytes).
    let head = `${statusLine(result.status)}\r\nX-Request-Id: ${ex.requestId}\r\nX-Content-Type-Options: nosniff`;
    if (ex.compiled?.route.sensitive) head += '\r\nCache-Control: no-store';
    if (result.headers) {
      for (const [key, value] of Object.entries(result.headers)) {
        // A line break would start a header of its own: never sent as one.
        head += `\r\n${key.replace(LINE_BREAKS, '')}: ${value.replace(LINE_BREAKS, ' ')}`;
      }
    }
    if (result.status === 204 || result.status === 304) {
      sink.writeStatus(head);
      // This uWS build aborts the process if endWithoutBody gets explicit undefined arguments.
      sink.endWithoutBody();
      return;
    }
    if (result.stream !== undefined) {
      // The body follows a piece at a time (the socket adapter pumps it; inject reads it whole).
      sink.writeStatus(`${head}\r\nContent-Type: ${result.contentType ?? 'application/json'}`);
      if (ex.method === 'HEAD') {
        result.stream.close();
        sink.end('', closeConnection);
      }
      return;
    }
    if (result.raw !== undefined) {
      sink.writeStatus(`${head}\r\nContent-Type: ${result.contentType ?? 'application/json'}`);
      sink.end(ex.method === 'HEAD' ? '' : result.raw, closeConnection);
    } else if (result.body !== undefined) {
      sink.writeStatus(`${head}\r\nContent-Type: application/json`);
      sink.end(ex.method === 'HEAD' ? '' : JSON.stringify(result.body), closeConnection);
    } else {
      sink.writeStatus(head);
      sink.end('', closeConnection);
    }
  }

  log(ex: Exchange, status: number): void {
    this.accessLog({
      requestId: ex.requestId,
      method: ex.method,
      url: ex.url,
      status,
      ms: Math.round((performance.now() - ex.started) * 100) / 100,
    });
  }

  /**
   * The whole pipeline in one call, with no socket: for tests and in-process callers. Routes that write to a
   * socket themselves (the event stream) are refused with an Error rather than answered.
   */
  async dispatch(request: InjectRequest): Promise<InjectResponse> {
    const method = request.method.toUpperCase();
    const queryAt = request.path.indexOf('?');
    const path = queryAt === -1 ? request.path : request.path.slice(0, queryAt);
    const rawQuery = queryAt === -1 ? '' : request.path.slice(queryAt + 1);
    const body = encodeBody(request.body);
    const given: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) given[name.toLowerCase()] = value;
    if (body) {
      given['content-length'] ??= String(body.length);
      if (!Buffer.isBuffer(request.body) && typeof request.body !== 'string') given['content-type'] ??= 'application/json';
    }
    const headers = {} as RequestHeaders;
    for (const name of CAPTURED_HEADERS) headers[name] = given[name] ?? '';
    const ex = new InjectedExchange(
      this,
      method,
      path,
      rawQuery,
      rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY,
      headers,
      this.requestId(headers['x-request-id']),
      request.remoteAddress ?? '127.0.0.1',
    );
    const sink = new RecordedResponse();
    let compiled: Compiled | undefined;
    try {
      compiled = this.match(ex, sink);
    } catch (err) {
      return this.answer(sink, ex, this.failure(ex, err));
    }
    if (!compiled) return sink.reply();
    if (compiled.route.kind === 'raw') {
      throw new Error(`inject() cannot open ${method} ${compiled.route.path}: it writes to a socket; use the daemon's HTTP address`);
    }
    let result: ApiResult;
    try {
      if (compiled.body) {
        this.checkDeclaredLength(ex);
        if (body && body.length > this.bodyLimit(ex)) throw this.tooLarge(ex);
      }
      const sink = this.openBody(ex);
      // In pieces, as a socket would bring it.
      for (let at = 0; sink && body && at < body.length; at += INJECT_PIECE_BYTES) sink.write(body.subarray(at, at + INJECT_PIECE_BYTES));
      result = await this.run(ex, sink ? undefined : body, false);
    } catch (err) {
      result = this.failure(ex, err);
    }
    return this.answer(sink, ex, result);
  }

  private answer(sink: RecordedResponse, ex: Exchange, result: ApiResult): InjectResponse {
    this.respond(sink, ex, result, false);
    if (result.stream && ex.method !== 'HEAD') sink.end(readAll(result.stream));
    this.log(ex, result.status);
    return sink.reply();
  }
}

const EMPTY_BODY = Buffer.alloc(0);
/** inject() hands a streamed body to its sink in pieces of this size. */
const INJECT_PIECE_BYTES = 64 * 1024;

class InjectedExchange extends Exchange {
  constructor(
    dispatcher: Dispatcher,
    method: string,
    path: string,
    rawQuery: string,
    query: URLSearchParams,
    headers: RequestHeaders,
    requestId: string,
    private readonly address: string,
  ) {
    super(dispatcher, method, path, rawQuery, query, headers, requestId);
  }

  get ip(): string {
    return this.address;
  }
}

/** Collects what the pipeline writes, as the wire would carry it (uWS adds Content-Length the same way). */
class RecordedResponse implements ResponseSink {
  private status = 0;
  private readonly headers = new Headers();
  private body: Buffer = EMPTY_BODY;

  /** Takes a bare status ("200 OK") or a status followed by header lines, as respond() sends them. */
  writeStatus(status: string): this {
    const lines = status.split('\r\n');
    this.status = Number.parseInt(lines[0]!, 10);
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      this.headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    return this;
  }

  writeHeader(key: string, value: string): this {
    this.headers.append(key, value);
    return this;
  }

  end(body: string | Buffer = ''): this {
    this.body = Buffer.isBuffer(body) ? body : Buffer.from(body);
    this.headers.set('Content-Length', String(this.body.length));
    return this;
  }

  endWithoutBody(): this {
    return this;
  }

  reply(): InjectResponse {
    const text = (this.headers.get('content-encoding') === 'gzip' ? gunzipSync(this.body) : this.body).toString('utf8');
    const json = text !== '' && /json/.test(this.headers.get('content-type') ?? '');
    return { status: this.status, headers: this.headers, body: json ? JSON.parse(text) : undefined, text };
  }
}

function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
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
