// The one error type handlers throw, and its RFC 9457 problem-details form.

export type FieldErrors = Record<string, string[]>;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
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
  new HttpError(401, detail, { headers: { 'WWW-Authenticate': 'Bearer realm="azcd"' } });

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
