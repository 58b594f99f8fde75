// The request pipeline without a socket: route, credential → caller, route access, validation, handler, problem details,
// access log. Its two front doors are the uWS adapter (server.ts) and inject (inject.ts).

import { randomBytes } from 'node:crypto';
import type { Caller } from '../domain/shared/index.js';
import type { Logger } from '../log.js';
import { redactUrl } from '../log.js';
import { monotonicMs } from '../runtime.js';
import { type AccessLog, createAccessLog } from './access-log.js';
import { type Credential, extractCredential } from './credentials.js';
import { HostAllowList, type HostNames, Misdirected, misdirectedPage, prefersHtml } from './host-check.js';
import { asHttpError, HttpError, statusLine, toProblem, unauthorized } from './problem.js';
import type { ReadCache } from './read-cache.js';
import {
  type ApiRequest,
  type ApiResult,
  type BodySink,
  CAPTURED_HEADERS,
  type JsonRoute,
  type RequestHeaders,
  ROUTE_HEADERS,
  type Route,
} from './route.js';
import { type RouteLookup, Router } from './router.js';
import { checkJsonMediaType, parseJsonBody, Validator } from './schema.js';

/** Where a response is written: the uWS response itself, or the recorder of inject.ts. */
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
  // biome-ignore lint/suspicious/noExplicitAny: one compiled entry per route, whatever its schemas; the route types them
  params?: Validator<any>;
  // biome-ignore lint/suspicious/noExplicitAny: as params
  body?: Validator<any>;
  // biome-ignore lint/suspicious/noExplicitAny: as params
  query?: Validator<any>;
  /** Its answers may come from the read cache. */
  cached?: boolean;
  /** The request headers read for it (HeaderReads). */
  reads: HeaderReads;
}

/**
 * Which captured headers a request gets, decided before any is read: the pipeline's own always, of the others those
 * its route names (Route.headers); a header not read is ''. Both doors read by it, so a handler sees the same headers
 * over a socket and through inject().
 */
export type HeaderReads = Readonly<Record<keyof RequestHeaders, boolean>>;

/** A request no route answers gets every header: the dashboard's files and the Host refusal's page read them. */
const READ_ALL: HeaderReads = Object.fromEntries(CAPTURED_HEADERS.map((name) => [name, true])) as Record<
  keyof RequestHeaders,
  boolean
>;

/** A browser refused by the Host check outside the API gets a page (a person typed the name); the API answers JSON. */
const servesRefusalPage = (path: string): boolean => !path.startsWith('/api/');

function readsOf(route: Route): HeaderReads {
  const reads = { ...READ_ALL };
  for (const name of ROUTE_HEADERS) reads[name] = route.headers?.includes(name) === true;
  if (servesRefusalPage(route.path)) reads.accept = true;
  return reads;
}

/**
 * One request on its way through the pipeline. Handlers see it as their ApiRequest; each front door (the uWS
 * adapter, inject) extends it with how it reaches its client.
 */
// biome-ignore lint/suspicious/noExplicitAny: the request of any route; each handler sees it typed by its route's schemas
export abstract class PipelineRequest implements ApiRequest<Record<string, string>, any> {
  params: Record<string, string> = {};
  // biome-ignore lint/suspicious/noExplicitAny: as the class
  body: any = undefined;
  /** The route's body sink while its body streams in (JsonRoute.streamBody). */
  sink: BodySink | undefined;
  caller: Caller | null = null;
  compiled: Compiled | undefined;
  readonly started = monotonicMs();

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
  private readonly hosts: HostAllowList | undefined;

  constructor(private readonly options: PipelineOptions) {
    this.accessLog = createAccessLog(options.logger);
    this.hosts = options.hostNames && new HostAllowList(options.hostNames);
  }

  /** The body cap of the request's route: its own, or the configured default. */
  bodyLimit(request: PipelineRequest): number {
    return request.compiled?.route.maxBodyBytes ?? this.options.maxBodyBytes;
  }

  add(routes: Route[]): void {
    for (const route of routes) {
      const compiled: Compiled = { route, reads: readsOf(route) };
      if (route.params) compiled.params = new Validator(route.params);
      if (route.body) compiled.body = new Validator(route.body);
      if (route.query) compiled.query = new Validator(route.query);
      if (route.method === 'GET' && route.access !== 'public' && this.options.readCache?.covers(route))
        compiled.cached = true;
      this.router.add(route.method, route.path, compiled);
      this.routes.push(route);
    }
  }

  /** The client's X-Request-Id when it is safe to echo and log, else a fresh one. */
  requestId(incoming: string): string {
    return incoming !== '' && REQUEST_ID_RE.test(incoming) ? incoming : `${idPrefix}-${(++idCounter).toString(36)}`;
  }

  /** The route of a request, looked up before its headers are read (headersRead) and given to match(). */
  find(method: string, path: string): RouteLookup<Compiled> {
    return this.router.find(method === 'HEAD' ? 'GET' : method, path);
  }

  /** The headers both doors read for a request whose route is `lookup` (HeaderReads). */
  headersRead(lookup: RouteLookup<Compiled>): HeaderReads {
    return lookup.kind === 'found' ? lookup.match.route.reads : READ_ALL;
  }

  /**
   * Everything before the body, on the route find() looked up: lets the fallback answer when there is none (then
   * undefined), resolves and checks the caller, validates path and query. Throws an HttpError for the client.
   */
  match(request: PipelineRequest, sink: ResponseSink, lookup: RouteLookup<Compiled>): Compiled | undefined {
    const { method, path } = request;
    // Before anything else, the dashboard's files and public routes included: a rebinding page reads those too.
    if (this.hosts && !this.hosts.allows(request.headers.host)) throw this.hosts.refusal(request.headers.host);
    if (lookup.kind !== 'found') {
      if ((method === 'GET' || method === 'HEAD') && this.options.fallback?.(request, sink)) {
        this.log(request, 200);
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
    request.compiled = compiled;
    const busy = this.options.unavailable?.();
    if (busy !== undefined && !(compiled.route.access === 'public' && (method === 'GET' || method === 'HEAD'))) {
      throw new HttpError(503, busy, { headers: { 'Retry-After': '5' } });
    }
    if (compiled.route.access !== 'public') this.authorize(request);
    const params = lookup.match.params;
    // The path's ids come out of the check lower-cased (daemon/ids.ts).
    request.params = compiled.params ? compiled.params.parse(params, 'path') : params;
    if (compiled.query) compiled.query.parse(Object.fromEntries(request.query), 'query');
    return compiled;
  }

  /** The route's sink when its body is streamed (JsonRoute.streamBody), after the media type is checked. */
  openBody(request: PipelineRequest): BodySink | undefined {
    const route = request.compiled?.route as JsonRoute | undefined;
    if (!route?.streamBody) return undefined;
    checkJsonMediaType(request.headers['content-type']);
    request.sink = route.streamBody(request as PipelineRequest & { caller: Caller });
    return request.sink;
  }

  /** Refuses a body whose declared length is over the cap before any of it is read. */
  checkDeclaredLength(request: PipelineRequest): void {
    const contentLength = request.headers['content-length'];
    const limit = this.bodyLimit(request);
    if (contentLength && Number(contentLength) > limit) {
      throw new HttpError(413, `the request body is ${contentLength} bytes; the limit is ${limit}`);
    }
  }

  tooLarge(request: PipelineRequest): HttpError {
    return new HttpError(413, `the request body exceeds the limit of ${this.bodyLimit(request)} bytes`);
  }

  /**
   * Resolves the request's caller from its credential as things are now: at authentication, again once the body is
   * in (revocation is final for requests in flight), and whenever a handler calls ApiRequest.revalidate(). What the
   * caller may do is checked once, by the service the handler calls, where it loads what it acts on; the route's
   * `access` documents that check.
   */
  authorize(request: PipelineRequest): Caller {
    const route = request.compiled?.route;
    if (!route || route.access === 'public') throw new Error('revalidate() is only available on authenticated routes');
    const credential = extractCredential(request.headers, request.query);
    if (credential === null) throw unauthorized();
    if (credential === 'malformed')
      throw unauthorized('the Authorization header must be "Bearer <API key or session token>"');
    const caller = this.options.authenticate(credential);
    if (!caller) throw unauthorized('the credential is invalid, revoked, or belongs to a disabled user');
    request.caller = caller;
    return caller;
  }

  /**
   * Everything after the body: re-checks the caller when time has passed since match() (`recheck`), parses and
   * validates the body, and runs the handler.
   */
  run(request: PipelineRequest, body: Buffer | undefined, recheck: boolean): ApiResult | Promise<ApiResult> {
    const compiled = request.compiled!;
    // The caller may have been deleted, disabled, demoted or unassigned while the body was on its way.
    if (recheck && compiled.route.access !== 'public') this.authorize(request);
    if (request.sink) request.body = request.sink;
    else if (compiled.body)
      request.body = compiled.body.parse(parseJsonBody(body ?? EMPTY_BODY, request.headers['content-type']), 'body');
    const handle = (compiled.route as JsonRoute).handle;
    if (compiled.cached) {
      // The caller was resolved and checked above, as for every request; only the answer is reused.
      const cache = this.options.readCache!;
      const key = cache.keyOf(request.caller, request.path, request.rawQuery);
      if (key !== undefined) {
        const hit = cache.get(key);
        if (hit) return hit;
        const result = handle(request as PipelineRequest & { caller: Caller });
        return result instanceof Promise ? result : cache.keep(key, result);
      }
    }
    return handle(request as PipelineRequest & { caller: Caller });
  }

  /** The problem-details answer for any error; anything not an HttpError or DomainError is a logged 500. */
  failure(request: PipelineRequest, err: unknown): ApiResult {
    // A streamed body that never reached its handler lets go of what it holds (a sink is finished only once).
    request.sink?.abort();
    let error = asHttpError(err);
    if (!error) {
      this.options.logger.error({ err, reqId: request.requestId }, 'unhandled error in request');
      error = new HttpError(500, `internal error; quote request id ${request.requestId} when reporting it`);
    }
    if (error instanceof Misdirected && servesRefusalPage(request.path) && prefersHtml(request.headers.accept)) {
      // A person typed the name into a browser: a page saying which name to use. It is never kept, and runs nothing.
      const headers = {
        'Cache-Control': 'no-store',
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      };
      return { status: 421, raw: misdirectedPage(error), contentType: 'text/html; charset=utf-8', headers };
    }
    // The path only (the query may carry an API key), and redacted: a key may be sent as a path segment too.
    const problem = toProblem(error, redactUrl(request.path), request.requestId);
    return {
      status: error.status,
      raw: JSON.stringify(problem),
      contentType: 'application/problem+json',
      headers: error.options.headers,
    };
  }

  /** A streamed body that failed after its status went out: the client sees a cut transfer, the log says why. */
  streamFailed(request: PipelineRequest, err: unknown): void {
    this.options.logger.error(
      { err, reqId: request.requestId },
      'a streamed answer failed after its status was sent; the connection was closed',
    );
  }

  /** Writes status, headers and body; HEAD gets the headers of the GET without its body. */
  respond(sink: ResponseSink, request: PipelineRequest, result: ApiResult, closeConnection: boolean): void {
    sink.writeStatus(statusLine(result.status));
    sink.writeHeader('X-Request-Id', request.requestId);
    sink.writeHeader('X-Content-Type-Options', 'nosniff');
    if (request.compiled?.route.sensitive) sink.writeHeader('Cache-Control', 'no-store');
    if (result.headers) {
      for (const [key, value] of Object.entries(result.headers)) {
        // A line break would start a header of its own: never sent as one.
        sink.writeHeader(key.replace(LINE_BREAKS, ''), value.replace(LINE_BREAKS, ' '));
      }
    }
    if (result.status === 204 || result.status === 304) {
      // This uWS build aborts the process if endWithoutBody gets explicit undefined arguments.
      sink.endWithoutBody();
      return;
    }
    if (result.stream !== undefined) {
      // The body follows a piece at a time (the socket adapter pumps it; inject reads it whole).
      sink.writeHeader('Content-Type', result.contentType ?? 'application/json');
      if (request.method === 'HEAD') {
        result.stream.close();
        sink.end('', closeConnection);
      }
      return;
    }
    if (result.raw !== undefined) {
      sink.writeHeader('Content-Type', result.contentType ?? 'application/json');
      sink.end(request.method === 'HEAD' ? '' : result.raw, closeConnection);
    } else if (result.body !== undefined) {
      sink.writeHeader('Content-Type', 'application/json');
      sink.end(request.method === 'HEAD' ? '' : JSON.stringify(result.body), closeConnection);
    } else {
      sink.end('', closeConnection);
    }
  }

  log(request: PipelineRequest, status: number): void {
    this.accessLog({
      requestId: request.requestId,
      method: request.method,
      url: request.url,
      status,
      ms: Math.round((monotonicMs() - request.started) * 100) / 100,
    });
  }
}

const EMPTY_BODY = Buffer.alloc(0);
