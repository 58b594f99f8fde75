// A small HTTP client for black-box API tests: over loopback (client) or any other transport (clientOver).
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  token?: string;
  headers?: Record<string, string>;
  /** A JSON value (sent with Content-Type: application/json) or a raw string. */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
}

/** Sends one request with its headers and encoded body; the client builds both. */
export type Transport = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
) => Promise<Reply>;

export function clientOver(send: Transport, defaultKey?: string) {
  const call = async <T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key ?? (options.token ? undefined : defaultKey);
    if (key) headers['x-api-key'] = key;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    return send(method, path, headers, body);
  };
  return {
    call,
    get: <T = any>(path: string, options?: RequestOptions) => call<T>('GET', path, options),
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      call<T>('POST', path, { ...options, body }),
    put: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      call<T>('PUT', path, { ...options, body }),
    del: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      call<T>('DELETE', path, { ...options, body }),
  };
}

/** A client for a daemon listening at `base` (http://127.0.0.1:port). */
export function client(base: string, defaultKey?: string) {
  return clientOver(async (method, path, headers, body) => {
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    if (text && /json/.test(res.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed, text };
  }, defaultKey);
}

export type Client = ReturnType<typeof clientOver>;

/** Creates a user through the API and returns its id and full API key. */
export async function createUser(
  api: Client,
  username: string,
  role: 'Admin' | 'Operator' | 'Viewer',
  assignments?: { playerIds: string[]; zoneIds: string[] },
): Promise<{ id: string; apiKey: string; password: string }> {
  const password = `${username}-password`;
  const res = await api.post('/api/users', { username, password, role, assignments });
  if (res.status !== 201) throw new Error(`creating ${username} failed: ${res.status} ${res.text}`);
  return { id: res.body.id, apiKey: res.body.apiKey, password };
}
