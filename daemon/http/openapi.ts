// Builds the OpenAPI 3.1 document from the same route schemas that validate requests, and from what each route is:
// its access, body, parameters and paging decide which errors and headers it can answer with.

import { NAME_PATTERN } from '../names.js';
import type { HeaderDoc, ResponseDoc, Route } from './route.js';
import type { TSchema } from './schema.js';

const SECURITY = [{ ApiKeyHeader: [] }, { Bearer: [] }, { ApiKeyQuery: [] }];

/** What every error means when the route says nothing more specific. */
const STANDARD_ERRORS: Record<number, string> = {
  400: 'invalid request (problem details with per-field errors); nothing changed',
  401: 'missing or invalid credential, or a disabled user',
  403: 'authenticated but not permitted',
  404: 'not found (or not in your assignments)',
  405: 'this path has no operation for the method sent (HEAD, OPTIONS, PATCH, …); Allow lists the methods it has',
  409: 'the current state does not allow it; nothing changed',
  413: 'the request body is larger than the limit (64 KiB unless the route says otherwise)',
  415: 'the request body is not sent as Content-Type: application/json',
  421: 'the Host header names something else than this appliance; add the name with --allowed-host (allowedHosts)',
  429: 'too many at once or too many attempts; retry after Retry-After seconds',
  500: 'internal error; quote the requestId when reporting it (details are in the log, never here)',
  503: 'a restore is writing the configuration, or the appliance is at a capacity limit; retry after Retry-After seconds',
};

const string = { type: 'string' };

/** Headers an answer of any status has, and those of particular statuses. */
const HEADERS = {
  requestId: {
    description: 'the request id: the X-Request-Id sent (if safe to echo) or a new one; also in the access log',
    required: true,
    schema: string,
  },
  wwwAuthenticate: { description: 'Bearer realm="azcd": how to authenticate', required: true, schema: string },
  allow: { description: 'the methods this path has, comma-separated', required: true, schema: string },
  retryAfter: {
    description: 'seconds to wait before trying again',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  noStore: {
    description: 'no-store: the answer may carry a secret',
    required: true,
    schema: { type: 'string', const: 'no-store' },
  },
  totalCount: {
    description: 'how many items the whole list has',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  link: { description: '<…>; rel="next": the next page, when there is one', required: false, schema: string },
};

export interface OpenApiInfo {
  version: string;
  problemSchema: TSchema;
  /** The event union carried in each SSE message's data. */
  eventSchema?: TSchema;
}

/** The error statuses a route can answer with because of what it is; its own `responses` add the rest (409, 429, …). */
function derivedErrors(route: Route): number[] {
  // 421: a Host outside the allow-list, checked before the route.
  const statuses = new Set([405, 421, 500]);
  // While a restore writes the configuration, everything but the public reads waits (dispatch.ts).
  if (route.access !== 'public' || route.method !== 'GET') statuses.add(503);
  if (route.body || route.params || route.query) statuses.add(400);
  if (route.body) {
    statuses.add(413);
    statuses.add(415);
  }
  if (route.access !== 'public') statuses.add(401);
  // Admin and writer routes refuse other roles; a user route on one resource may refuse who it is not for.
  if (route.access === 'admin' || route.access === 'writer' || (route.access === 'user' && route.params))
    statuses.add(403);
  if (route.params) statuses.add(404);
  return [...statuses];
}

export function buildOpenApi(routes: Route[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    const parameters = route.params
      ? Object.entries((route.params as { properties: Record<string, TSchema> }).properties).map(([name, schema]) => ({
          name,
          in: 'path',
          required: true,
          schema: plain(schema),
        }))
      : [];
    if (route.query) {
      const { properties, required = [] } = route.query as unknown as {
        properties: Record<string, TSchema>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(properties)) {
        parameters.push({ name, in: 'query', required: required.includes(name), schema: plain(schema) });
      }
    }
    const statuses = new Set([...Object.keys(route.responses).map(Number), ...derivedErrors(route)]);
    const responses: Record<string, unknown> = {};
    for (const status of [...statuses].sort((a, b) => a - b)) {
      const doc: ResponseDoc | undefined = route.responses[status];
      const headers: Record<string, unknown> = { 'X-Request-Id': HEADERS.requestId };
      if (route.sensitive) headers['Cache-Control'] = HEADERS.noStore;
      if (status === 401) headers['WWW-Authenticate'] = HEADERS.wwwAuthenticate;
      if (status === 405) headers['Allow'] = HEADERS.allow;
      if (status === 429 || status === 503) headers['Retry-After'] = HEADERS.retryAfter;
      if (status === 200 && route.paged)
        Object.assign(headers, { 'X-Total-Count': HEADERS.totalCount, Link: HEADERS.link });
      for (const [name, header] of Object.entries(doc?.headers ?? {})) headers[name] = headerObject(header);
      const description = doc?.description ?? STANDARD_ERRORS[status] ?? `status ${status}`;
      let content: unknown;
      if (status >= 400) content = problem;
      else if (doc?.schema) content = { [doc.contentType ?? 'application/json']: { schema: plain(doc.schema) } };
      responses[status] = { description, headers, ...(content ? { content } : {}) };
    }
    item[route.method.toLowerCase()] = {
      operationId: operationId(route.method, route.path),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(route.body) } } } }
        : {}),
      responses,
      security: route.access === 'public' ? [] : SECURITY,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'audio-zone-control (azcd)',
      version: info.version,
      description:
        'REST API of the azcd multi-room audio controller. Send a credential as X-API-Key, Authorization: Bearer ' +
        '(API key or session token) or ?apiKey= (discouraged: URLs get logged). Precedence: X-API-Key, then ' +
        'Authorization, then apiKey; the first present one is used and an invalid one is 401. Every answer carries ' +
        'X-Request-Id; every error is application/problem+json (RFC 9457).',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'svc_ + 48 hex characters' },
        Bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'an API key or a session token (sst_…) from /api/auth/login',
        },
        ApiKeyQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'apiKey',
          description: 'for EventSource clients; URL-encode it',
        },
      },
      schemas: { Problem: plain(info.problemSchema), ...(info.eventSchema ? { Event: plain(info.eventSchema) } : {}) },
    },
  };
}

function headerObject(header: HeaderDoc): Record<string, unknown> {
  return { description: header.description, required: true, schema: header.schema ? plain(header.schema) : string };
}

/**
 * TypeBox schemas are JSON Schema already; this drops symbol keys and our private error texts, and says what the
 * validator's own keywords mean in standard words: the `name` format as its pattern, a whole-number query string as an
 * integer with its bounds (a query value is text on the wire; OpenAPI describes the value it serialises).
 */
function plain(schema: TSchema): unknown {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) => {
      if (key === 'errorMessage') return undefined;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const object = value as Record<string, unknown>;
      if (object.format === 'name') {
        const { format: _format, ...rest } = object;
        return { ...rest, pattern: NAME_PATTERN };
      }
      if (object[QUERY_INTEGER] !== undefined) {
        const { [QUERY_INTEGER]: bounds, pattern: _pattern, type: _type, ...rest } = object;
        return { ...rest, type: 'integer', ...(bounds as object) };
      }
      return value;
    }),
  );
}

/** The key a whole-number query parameter keeps its bounds under (`QueryInteger` in daemon/api/schemas.ts). */
export const QUERY_INTEGER = 'x-integer';

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, '')
    .split('/')
    .map((segment) => (segment.startsWith('{') ? 'ById' : segment))
    .join('-')
    .split(/[-_]/)
    .map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)));
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}
