// HTTP access to the azcd API: the session token (sessionStorage only), JSON bodies, problem details as errors.
const STORAGE_KEY = 'azc.session';

export class ApiError extends Error {
  constructor(status, message, problem) {
    super(message);
    this.status = status;
    this.problem = problem;
  }
}

export const session = {
  get() {
    try {
      return JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
    } catch {
      return null;
    }
  },
  save(token, expiresAt) {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token, expiresAt }));
  },
  clear() {
    sessionStorage.removeItem(STORAGE_KEY);
  },
  get token() {
    return this.get()?.token ?? null;
  },
};

let onUnauthorized = () => {};

/** Called once when any authenticated request gets a 401 (expired, revoked, user disabled). */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

export function authHeaders() {
  const token = session.token;
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Turns a failed response into words a person can act on. */
function describe(status, problem, headers) {
  if (status === 429) {
    const wait = headers.get('retry-after');
    return problem?.detail ?? `Too many attempts. Try again${wait ? ` in ${wait} s` : ' later'}.`;
  }
  if (problem?.detail) return problem.detail;
  if (status === 403) return 'Your role does not allow this.';
  if (status === 404) return 'That item no longer exists.';
  if (status >= 500) return 'The appliance hit an internal error. Try again.';
  return problem?.title ?? `The request failed (HTTP ${status}).`;
}

/**
 * One API call. Resolves with the parsed JSON body (or null for 204); rejects with ApiError carrying the
 * problem+json `detail`. `auth: false` is for sign-in, where a 401 means "wrong password", not "signed out".
 */
export async function api(method, path, body, { auth = true, signal } = {}) {
  const headers = { Accept: 'application/json, application/problem+json', ...(auth ? authHeaders() : {}) };
  const init = { method, headers, signal, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiError(0, 'The appliance cannot be reached. Check the network connection and try again.');
  }
  const raw = await res.text();
  let data = null;
  if (raw) {
    try {
      data = JSON.parse(raw);
    } catch {
      data = null;
    }
  }
  if (res.ok) return data;
  const error = new ApiError(res.status, describe(res.status, data, res.headers), data);
  if (res.status === 401 && auth) onUnauthorized(error);
  throw error;
}

export const get = (path, options) => api('GET', path, undefined, options);
export const put = (path, body) => api('PUT', path, body);
export const post = (path, body) => api('POST', path, body);
export const del = (path, body) => api('DELETE', path, body);

/** The appliance's friendly name from its public UPnP description (no credentials needed). */
export async function applianceName() {
  try {
    const res = await fetch('/description.xml', { cache: 'no-store', credentials: 'omit' });
    if (!res.ok) return null;
    const xml = new DOMParser().parseFromString(await res.text(), 'application/xml');
    return xml.getElementsByTagName('friendlyName')[0]?.textContent?.trim() || null;
  } catch {
    return null;
  }
}
