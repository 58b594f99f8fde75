// HTTP's own errors, and the one place that turns any error (a domain error included) into RFC 9457 problem details;
// the status text both use.
import { STATUS_CODES } from 'node:http';
import { DomainError, type DomainErrorKind, type FieldErrors } from '../domain/shared/index.js';

export type { FieldErrors };

const WWW_AUTHENTICATE = 'Bearer realm="azcd"';

/**
 * "404 Not Found" for every status Node knows, from its own table (http.STATUS_CODES), the one source of status text:
 * the status line uWS is given and, without the number, each problem's title. An array, read once per response.
 */
const STATUS_LINES: string[] = [];
for (const [code, text] of Object.entries(STATUS_CODES)) STATUS_LINES[Number(code)] = `${code} ${text}`;

export const statusLine = (status: number): string => STATUS_LINES[status] ?? `${status} Status`;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly options: { errors?: FieldErrors; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string, errors?: FieldErrors) =>
  new HttpError(400, detail, errors ? { errors } : {});
export const unauthorized = (
  detail = 'a valid credential is required (X-API-Key, Authorization: Bearer, or ?apiKey=)',
) => new HttpError(401, detail, { headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } });

const STATUS_OF: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  conflict: 409,
  throttled: 429,
  unavailable: 503,
};

/** The HTTP form of a domain error: status by kind, `Retry-After` and `WWW-Authenticate` where they belong. */
export function fromDomainError(error: DomainError): HttpError {
  const headers: Record<string, string> = {};
  if (error.kind === 'unauthenticated') headers['WWW-Authenticate'] = WWW_AUTHENTICATE;
  if (error.options.retryAfterS !== undefined) headers['Retry-After'] = String(error.options.retryAfterS);
  return new HttpError(STATUS_OF[error.kind], error.detail, {
    ...(error.options.errors ? { errors: error.options.errors } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  });
}

/** An HttpError or DomainError as an HttpError; undefined for anything else (a bug: the caller answers 500). */
export function asHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError) return fromDomainError(err);
  return undefined;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  requestId: string;
  errors?: FieldErrors;
}

export function toProblem(error: HttpError, instance: string, requestId: string): Problem {
  const problem: Problem = {
    type: error.status === 500 ? 'about:blank' : `https://audio-zone-control.local/problems/${error.status}`,
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    instance,
    requestId,
  };
  if (error.options.errors) problem.errors = error.options.errors;
  return problem;
}
