// What a route is: method, path template, who may call it, its schemas, and a plain handler.

import type { Caller } from '../domain/shared/index.js';
import type { Static, TSchema } from './schema.js';
import type { HttpResponse } from './uws.js';

/**
 * public: no credential; user: any signed-in user; writer: Operator or Admin (Viewer 403); admin: Admin only. The
 * pipeline authenticates every route but public ones; the role is checked by the service the handler calls (once,
 * where it loads what it acts on), and `access` documents that check (OpenAPI: security, 401, 403).
 */
export type Access = 'public' | 'user' | 'writer' | 'admin';

export interface RequestHeaders {
  authorization: string;
  'x-api-key': string;
  'content-type': string;
  'content-length': string;
  'x-request-id': string;
  'last-event-id': string;
  'if-none-match': string;
  'accept-encoding': string;
  /** Outside /api/, a browser refused by the Host check gets a page instead of JSON. */
  accept: string;
  host: string;
}

/** Read for every request: the credential, the body's length and type, the request id, the Host allow-list. */
export const PIPELINE_HEADERS = [
  'authorization',
  'x-api-key',
  'content-type',
  'content-length',
  'x-request-id',
  'host',
] as const;

/**
 * Read only for the requests that use them, as each is a native call per request: a route names those its handler
 * reads (RouteBase.headers); a request no route answers (the dashboard's files, a 404) gets them all.
 */
export const ROUTE_HEADERS = ['last-event-id', 'if-none-match', 'accept-encoding', 'accept'] as const;
export type RouteHeader = (typeof ROUTE_HEADERS)[number];

export const CAPTURED_HEADERS = [...PIPELINE_HEADERS, ...ROUTE_HEADERS] as const satisfies ReadonlyArray<
  keyof RequestHeaders
>;

export interface ApiRequest<P = Record<string, string>, B = unknown> {
  method: string;
  path: string;
  params: P;
  body: B;
  query: URLSearchParams;
  caller: Caller | null;
  /**
   * Re-resolves the request's credential against current state, for handlers that await before they commit: a
   * caller disabled, deleted or revoked meanwhile gets a 401 here. Also updates `caller`; the service checks what the
   * caller returned may do (a caller demoted meanwhile gets its 403 there).
   */
  revalidate(): Caller;
  requestId: string;
  readonly ip: string;
  headers: RequestHeaders;
}

/**
 * A body made a piece at a time while it is sent (a backup): the socket adapter asks for the next piece only when
 * the client has taken the last ones, and for a few milliseconds at a time, so neither memory nor the event loop
 * holds the whole. `read` returns null at the end; `close` is called once, at the end or when the client left.
 */
export interface BodySource {
  read(): string | null;
  close(): void;
}

export interface ApiResult {
  status: number;
  body?: unknown;
  /** A pre-encoded body (bypasses JSON encoding); `contentType` then says what it is. */
  raw?: string | Buffer;
  /** A body sent as it is made (chunked); `contentType` says what it is. */
  stream?: BodySource;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface ResponseDoc {
  description: string;
  schema?: TSchema;
  contentType?: string;
  /** Headers of this answer beyond those every answer of its kind has (X-Request-Id, and the ones route properties imply). */
  headers?: Record<string, HeaderDoc>;
}

export interface HeaderDoc {
  description: string;
  /** A string unless given. */
  schema?: TSchema;
}

/** The header of an answer offered as a file to save. */
export const DOWNLOAD_HEADERS: Record<string, HeaderDoc> = {
  'Content-Disposition': {
    description: 'attachment; filename="…": the answer is a file, and the name to save it under',
  },
};

interface RouteBase<P extends TSchema, B extends TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  access: Access;
  summary: string;
  tags: string[];
  params?: P;
  body?: B;
  query?: TSchema;
  responses: Record<number, ResponseDoc>;
  /** OpenAPI security override (e.g. the event stream documents the query key). */
  description?: string;
  /** Its answers can carry a secret (a session token, a full API key): sent with Cache-Control: no-store. */
  sensitive?: boolean;
  /** Its own request body cap in bytes (a restore carries a whole backup); others keep config.maxBodyBytes. */
  maxBodyBytes?: number;
  /** Its 200 is one page of a list: X-Total-Count counts the whole list, Link (rel="next") names the next page. */
  paged?: boolean;
  /**
   * The headers its handler reads beyond the pipeline's own (PIPELINE_HEADERS): only these are read for it, over a
   * socket and through inject() alike; the others are ''.
   */
  headers?: readonly RouteHeader[];
}

/**
 * Takes a request body as it arrives (a restore), instead of the pipeline collecting it whole first: `write` gets
 * each piece (and may throw an error for the client: the request is answered at once and the connection closed);
 * `abort` is called when the request ends without reaching the handler. The handler receives the sink as its body.
 */
export interface BodySink {
  write(piece: Buffer): void;
  abort(): void;
}

export interface JsonRoute<P extends TSchema = TSchema, B extends TSchema = TSchema> extends RouteBase<P, B> {
  kind?: 'json';
  /** Streams the body into a sink (see BodySink); `body` then only documents it. */
  streamBody?(req: ApiRequest<Static<P>, undefined> & { caller: Caller }): BodySink;
  /** Public routes receive no caller; every other route's caller is the authenticated user. */
  handle(req: ApiRequest<Static<P>, Static<B>> & { caller: Caller }): ApiResult | Promise<ApiResult>;
}

/** A route that writes to the uWS response itself (the event stream): only the socket adapter opens it; inject() refuses it. */
export interface RawRoute<P extends TSchema = TSchema> extends RouteBase<P, TSchema> {
  kind: 'raw';
  open(req: ApiRequest<Static<P>, undefined>, res: HttpResponse): void;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of routes of every schema; route() keeps each handler typed by its own
export type Route = JsonRoute<any, any> | RawRoute<any>;

/** Identity helper that keeps the handler's types tied to its schemas. */
export function route<P extends TSchema, B extends TSchema>(definition: JsonRoute<P, B>): JsonRoute<P, B> {
  return definition;
}

export const noContent = (): ApiResult => ({ status: 204 });
export const ok = (body: unknown): ApiResult => ({ status: 200, body });
export const created = (body: unknown): ApiResult => ({ status: 201, body });
