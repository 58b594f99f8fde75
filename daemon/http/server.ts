// The uWS adapter: routing, credentials, body reading, validation, problem details and access logs.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import { redactUrl } from '../log.js';
import type { Caller } from '../domain/access.js';
import { HttpError, toProblem, unauthorized } from './problem.js';
import { Router } from './router.js';
import { Validator } from './schema.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { CAPTURED_HEADERS, type ApiRequest, type ApiResult, type RequestHeaders, type Route } from './route.js';
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

/** Per-response bookkeeping: uWS forbids touching a response after it was aborted or ended. */
interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  started: number;
  requestId: string;
  method: string;
  url: string;
  /** Answered after the handler returned: counted as in flight until written or aborted. */
  async?: boolean;
  settled?: boolean;
  /** An async handler is running: shutdown waits for it even if the client went away. */
  handling?: boolean;
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

  private handle(res: HttpResponse, req: HttpRequest): void {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const url = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = {} as RequestHeaders;
    for (const name of CAPTURED_HEADERS) headers[name] = req.getHeader(name);
    const incomingId = headers['x-request-id'];
    const requestId = REQUEST_ID_RE.test(incomingId) ? incomingId : `${idPrefix}-${(++idCounter).toString(36)}`;
    const ex: Exchange = {
      res,
      aborted: false,
      done: false,
      started: performance.now(),
      requestId,
      method,
      url: rawQuery ? `${url}?${rawQuery}` : url,
    };
    const query = rawQuery ? new URLSearchParams(rawQuery) : EMPTY_QUERY;
    let ip: string | undefined;
    const apiRequest: ApiRequest<Record<string, string>, any> = {
      method,
      path: url,
      params: {},
      body: undefined,
      query,
      caller: null,
      requestId,
      // Read on demand (only login needs it); valid until the response is sent.
      get ip() {
        return (ip ??= remoteAddress(res));
      },
      headers,
    };
    try {
      const lookup = this.router.find(method === 'HEAD' ? 'GET' : method, url);
      if (lookup.kind !== 'found') {
        if ((method === 'GET' || method === 'HEAD') && this.options.fallback) {
          if (this.options.fallback(apiRequest, res)) {
            this.log(ex, 200);
            return;
          }
        }
        if (lookup.kind === 'method-not-allowed') {
          throw new HttpError(405, `${method} is not allowed on ${url}; use ${lookup.allow.join(', ')}`, {
            headers: { Allow: lookup.allow.join(', ') },
          });
        }
        throw new HttpError(404, `no resource at ${url}`);
      }
      const { route: compiled, params } = lookup.match;
      const route = compiled.route;
      if (route.access !== 'public') {
        const caller = this.resolveCaller(headers, query);
        apiRequest.caller = caller;
        if (route.access === 'admin' && caller.role !== 'Admin') {
          throw new HttpError(403, `${method} ${route.path} is for administrators only`);
        }
        if (route.access === 'writer' && caller.role === 'Viewer') {
          throw new HttpError(403, 'a Viewer can read but not change anything');
        }
      }
      apiRequest.params = compiled.params ? normaliseIds(compiled.params.parse(params, 'path')) : params;
      if (compiled.query) compiled.query.parse(Object.fromEntries(query), 'query');
      if (route.kind === 'raw') {
        route.open(apiRequest as ApiRequest<any, undefined>, res);
        ex.done = true;
        this.log(ex, 200);
        return;
      }
      if (!compiled.body) {
        this.finish(ex, route.handle(apiRequest as ApiRequest<any, any> & { caller: Caller }));
        return;
      }
      const bodyValidator = compiled.body;
      const contentLength = headers['content-length'];
      if (contentLength && Number(contentLength) > this.options.maxBodyBytes) {
        throw new HttpError(413, `the request body is ${contentLength} bytes; the limit is ${this.options.maxBodyBytes}`);
      }
      res.onAborted(() => {
        ex.aborted = true;
        if (!ex.handling) this.end(ex);
      });
      this.begin(ex);
      readBody(res, this.options.maxBodyBytes).then(
        (buffer) => {
          if (ex.aborted) return;
          try {
            apiRequest.body = bodyValidator.parse(parseJsonBody(buffer, headers['content-type']), 'body');
            this.finish(ex, route.handle(apiRequest as ApiRequest<any, any> & { caller: Caller }));
          } catch (err) {
            this.fail(ex, err);
          }
        },
        (err) => this.fail(ex, err),
      );
    } catch (err) {
      this.fail(ex, err);
    }
  }

  private resolveCaller(headers: RequestHeaders, query: URLSearchParams): Caller {
    const credential = extractCredential(headers, query);
    if (credential === null) throw unauthorized();
    if (credential === 'malformed') throw unauthorized('the Authorization header must be "Bearer <API key or session token>"');
    const caller = this.options.authenticate(credential);
    if (!caller) throw unauthorized('the credential is invalid, revoked, or belongs to a disabled user');
    return caller;
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
      result.then(
        (value) => this.write(ex, value),
        (err) => this.fail(ex, err),
      );
      return;
    }
    this.write(ex, result);
  }

  private fail(ex: Exchange, err: unknown): void {
    let error: HttpError;
    if (err instanceof HttpError) error = err;
    else {
      this.options.logger.error({ err, reqId: ex.requestId }, 'unhandled error in request');
      error = new HttpError(500, `internal error; quote request id ${ex.requestId} when reporting it`);
    }
    const problem = toProblem(error, redactUrl(ex.url).split('?')[0]!, ex.requestId);
    this.write(ex, {
      status: error.status,
      raw: JSON.stringify(problem),
      contentType: 'application/problem+json',
      headers: error.options.headers,
    }, error.status === 413);
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
      res.writeStatus(statusLine(result.status));
      res.writeHeader('X-Request-Id', ex.requestId);
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

function parseJsonBody(buffer: Buffer, contentType: string): unknown {
  if (buffer.length === 0 && !contentType) throw new HttpError(400, 'a JSON request body is required');
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new HttpError(415, `send the body as Content-Type: application/json (got ${contentType ? `"${contentType.slice(0, 80)}"` : 'none'})`);
  }
  if (buffer.length === 0) throw new HttpError(400, 'a JSON request body is required');
  try {
    return JSON.parse(buffer.toString('utf8'));
  } catch (err) {
    // Only the position: the parser's message quotes the body, which may hold a password.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError(400, `the request body is not valid JSON${position ? ` (error at byte ${position})` : ''}`);
  }
}

/** Reads the whole body, copying every chunk (uWS neuters them) and enforcing the cap as bytes arrive. */
function readBody(res: HttpResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(new HttpError(413, `the request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}
