// The one error type the domain throws; each front door (REST, the event stream, MQTT) maps its kind its own way.

export type FieldErrors = Record<string, string[]>;

/**
 * invalid: the input is wrong (REST 400); unauthenticated: no valid credential (401); forbidden: the caller may not
 * (403); not-found: no such thing, or not visible to the caller (404); conflict: the current state forbids it (409);
 * throttled: too many attempts, retry later (429); unavailable: a capacity or dependency limit (503).
 */
export type DomainErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'throttled'
  | 'unavailable';

export interface DomainErrorOptions {
  /** Per-field messages for `invalid`. */
  errors?: FieldErrors;
  /** Seconds after which a `throttled` or `unavailable` operation may be tried again. */
  retryAfterS?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly detail: string,
    readonly options: DomainErrorOptions = {},
  ) {
    super(detail);
  }
}

export const invalid = (detail: string, errors?: FieldErrors) =>
  new DomainError('invalid', detail, errors ? { errors } : {});
export const notFound = (detail: string) => new DomainError('not-found', detail);
export const forbidden = (detail: string) => new DomainError('forbidden', detail);
export const conflict = (detail: string) => new DomainError('conflict', detail);
export const unauthenticated = (
  detail = 'a valid credential is required (X-API-Key, Authorization: Bearer, or ?apiKey=)',
) => new DomainError('unauthenticated', detail);
export const throttled = (detail: string, retryAfterS: number) => new DomainError('throttled', detail, { retryAfterS });
/** Always with a time to retry: the OpenAPI document promises Retry-After on every 503. */
export const unavailable = (detail: string, retryAfterS: number) =>
  new DomainError('unavailable', detail, { retryAfterS });
