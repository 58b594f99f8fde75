// Builds the OpenAPI 3.1 document from the same route schemas that validate requests.
import type { Route } from './route.js';
import type { TSchema } from './schema.js';

const SECURITY = [{ ApiKeyHeader: [] }, { Bearer: [] }, { ApiKeyQuery: [] }];

const STANDARD_ERRORS: Record<number, string> = {
  400: 'invalid request (problem details with per-field errors)',
  401: 'missing or invalid credential, or a disabled user',
  403: 'authenticated but not permitted',
  404: 'not found (or not in your assignments)',
  421: 'the Host header names something else than this appliance (add the name to allowedHosts)',
};

export interface OpenApiInfo {
  version: string;
  problemSchema: TSchema;
  /** The event union carried in each SSE message's data. */
  eventSchema?: TSchema;
  /** Extra path items documented by hand (the event stream). */
  extraPaths?: Record<string, unknown>;
}

export function buildOpenApi(routes: Route[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
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
      const { properties, required = [] } = route.query as unknown as { properties: Record<string, TSchema>; required?: string[] };
      for (const [name, schema] of Object.entries(properties)) {
        parameters.push({ name, in: 'query', required: required.includes(name), schema: plain(schema) });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      responses[status] = doc.schema
        ? { description: doc.description, content: { [doc.contentType ?? 'application/json']: { schema: plain(doc.schema) } } }
        : { description: doc.description };
    }
    const errorStatuses = [400, 401, 403, 404, 421].filter((status) => {
      if (status === 421) return true;
      if (route.access === 'public') return status === 400 && route.body !== undefined;
      if (status === 403) return route.access !== 'user' || route.path.includes('{id}');
      if (status === 404) return route.params !== undefined;
      if (status === 400) return route.body !== undefined || route.params !== undefined || route.query !== undefined;
      return true;
    });
    for (const status of errorStatuses) {
      const existing = responses[status] as { description?: string } | undefined;
      responses[status] = {
        description: existing?.description ?? STANDARD_ERRORS[status],
        content: { 'application/problem+json': { schema: plain(info.problemSchema) } },
      };
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
        'Authorization, then apiKey; the first present one is used and an invalid one is 401.',
    },
    servers: [{ url: '/' }],
    paths: { ...paths, ...(info.extraPaths ?? {}) },
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'svc_ + 48 hex characters' },
        Bearer: { type: 'http', scheme: 'bearer', description: 'an API key or a session token (sst_…) from /api/auth/login' },
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey', description: 'for EventSource clients; URL-encode it' },
      },
      schemas: { Problem: plain(info.problemSchema), ...(info.eventSchema ? { Event: plain(info.eventSchema) } : {}) },
    },
  };
}

/** TypeBox schemas are JSON Schema already; this drops symbol keys and our private error texts. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === 'errorMessage' ? undefined : value)));
}

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
