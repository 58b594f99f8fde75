// Finds the request's credential: X-API-Key, then Authorization: Bearer, then ?apiKey= (first present wins).

import type { Credential } from '../domain/shared/index.js';
import type { RequestHeaders } from './route.js';

export type { Credential };

/** null when no credential is sent; 'malformed' when the first one present cannot be a credential. */
export function extractCredential(
  headers: Pick<RequestHeaders, 'x-api-key' | 'authorization'>,
  query: URLSearchParams,
): Credential | null | 'malformed' {
  const headerKey = headers['x-api-key'];
  if (headerKey) return { source: 'x-api-key', value: headerKey.trim() };
  const authorization = headers.authorization;
  if (authorization) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match ? { source: 'bearer', value: match[1]! } : 'malformed';
  }
  const queryKey = query.get('apiKey');
  if (queryKey !== null && queryKey !== '') return { source: 'query', value: queryKey };
  return null;
}
