// @ts-check
// HTTP access to the azcd API: the session token (sessionStorage only), JSON bodies, problem details as errors.
import { problemText } from './problem-text.js';

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

/** @type {(error: ApiError) => void} */
let onUnauthorized = () => {
  // Replaced by the app at start (setUnauthorizedHandler); a 401 before that has no session to end.
};

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
    return problemText(problem) ?? `Too many attempts. Try again${wait ? ` in ${wait} s` : ' later'}.`;
  }
  const words = problemText(problem);
  if (words) return words;
  if (status === 403) return 'Your role does not allow this.';
  if (status === 404) return 'That item no longer exists.';
  if (status >= 500) return 'The appliance hit an internal error. Try again.';
  return problem?.title ?? `The request failed (HTTP ${status}).`;
}

/**
 * Sends one request; a failure to connect becomes an ApiError in words.
 * @param {string} method
 * @param {string} path
 * @param {unknown} body
 * @param {{ auth?: boolean, signal?: AbortSignal, accept?: string }} [options]
 */
async function send(
  method,
  path,
  body,
  { auth = true, signal, accept = 'application/json, application/problem+json' } = {},
) {
  const headers = { Accept: accept, ...(auth ? authHeaders() : {}) };
  /** @type {RequestInit} */
  const init = { method, headers, signal, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(path, init);
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiError(0, 'The appliance cannot be reached. Check the network connection and try again.');
  }
}

async function parseJson(res) {
  const raw = await res.text();
  if (!raw) return null;
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

/** Turns a non-2xx answer into an ApiError (and tells the app about a 401 on an authenticated call). */
async function failure(res, auth) {
  const data = await parseJson(res);
  const error = new ApiError(res.status, describe(res.status, data, res.headers), data);
  if (res.status === 401 && auth) onUnauthorized(error);
  return error;
}

/**
 * One API call. Resolves with the parsed JSON body (or null for 204); rejects with ApiError carrying the
 * problem+json `detail`. `auth: false` is for sign-in, where a 401 means "wrong password", not "signed out".
 */
export async function api(method, path, body, options = {}) {
  return (await apiResponse(method, path, body, options)).data;
}

/** Like api(), but also gives the response headers (paging: X-Total-Count, Link). */
export async function apiResponse(method, path, body, options = {}) {
  const res = await send(method, path, body, options);
  if (!res.ok) throw await failure(res, options.auth ?? true);
  return { data: await parseJson(res), headers: res.headers };
}

/** The URL of the `rel="next"` entry of a Link header, or null. */
export function nextLink(headers) {
  for (const part of (headers.get('link') ?? '').split(',')) {
    const match = /<([^>]*)>\s*;(?:[^;]*;)*\s*rel="?([^";]*)"?/.exec(part.trim());
    if (match?.[2].split(/\s+/).includes('next')) return match[1];
  }
  return null;
}

/**
 * Fetches a file the API offers as an attachment. The token travels in the Authorization header (a plain
 * link cannot send it), so the bytes come back here and become a Blob the browser saves. With a `body` the
 * request is a POST (a backup sealed under a passphrase, which must not travel in a URL).
 */
export async function download(path, fallbackName, body) {
  const res = await send(body === undefined ? 'GET' : 'POST', path, body, { accept: '*/*' });
  if (!res.ok) throw await failure(res, true);
  return { blob: await res.blob(), filename: attachmentName(res.headers.get('content-disposition')) ?? fallbackName };
}

/** The file name of a Content-Disposition header (RFC 6266: filename* wins over filename). */
function attachmentName(header) {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // fall through to the plain filename
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(header);
  const name = plain ? (plain[1]?.replace(/\\(.)/g, '$1') ?? plain[2]) : null;
  // Only a bare name: the browser would strip folders anyway, but say so here rather than trust the header.
  return name ? name.split(/[\\/]/).pop() || null : null;
}

/**
 * An image the API serves (a cast's cover), as a data: URL for an <img>: the token travels in the Authorization
 * header, which an <img> cannot send, and the page's CSP takes data: images.
 */
export async function imageUrl(path) {
  const res = await send('GET', path, undefined, { accept: 'image/jpeg, image/png' });
  if (!res.ok) throw await failure(res, true);
  const blob = await res.blob();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
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
