// HTTP's own errors, and the one place that turns any error (a domain error included) into RFC 9457 problem details.
import { DomainError, type DomainErrorKind, type FieldErrors } from '../domain/shared/index.js';

export type { FieldErrors };

const WWW_AUTHENTICATE = 'Bearer realm="azcd"';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly options: { errors?: FieldErrors; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string, errors?: FieldErrors) => new HttpError(400, detail, errors ? { errors } : {});
export const notFound = (detail: string) => new HttpError(404, detail);
export const forbidden = (detail: string) => new HttpError(403, detail);
export const conflict = (detail: string) => new HttpError(409, detail);
export const unauthorized = (detail = 'a valid credential is required (X-API-Key, Authorization: Bearer, or ?apiKey=)') =>
  new HttpError(401, detail, { headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } });

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
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    instance,
    requestId,
  };
  if (error.options.errors) problem.errors = error.options.errors;
  return problem;
}
