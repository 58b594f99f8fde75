// HTTP's own errors, and the one place that turns any error (a domain error included) into RFC 9457 problem details;
// the status text both use.
import { DomainError, type DomainErrorKind, type FieldErrors } from '../domain/shared/index.js';

export type { FieldErrors };

const WWW_AUTHENTICATE = 'Bearer realm="azcd"';

/**
 * The text of each status, the one source of status text: the status line uWS is given and each problem's title.
 * The same table as node's `http.STATUS_CODES` (test/unit/status-text.test.ts holds them equal), kept here so that
 * start-up does not load node's HTTP client and server modules (~1 MB of RSS) for a table.
 */
export const STATUS_CODES: Readonly<Record<number, string>> = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a Teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  509: 'Bandwidth Limit Exceeded',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

/** "404 Not Found" for every status in STATUS_CODES. An array, read once per response. */
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
