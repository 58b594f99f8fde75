// Pages of a long list: the limit and offset of a query, and the headers that tell the total and the next page.
import { badRequest } from '../http/problem.js';
import type { ApiResult } from '../http/route.js';

/** Nine digits, as the query schemas allow. */
const MAX_OFFSET = 999_999_999;

/** The page a query asks for: `limit` from 1 to `max` (`fallback` when absent), `offset` from 0. */
export function pageOf(query: URLSearchParams, fallback: number, max: number): { limit: number; offset: number } {
  return {
    limit: wholeNumber(query, 'limit', fallback, 1, max),
    offset: wholeNumber(query, 'offset', 0, 0, MAX_OFFSET),
  };
}

/** A 200 with one page of a list: X-Total-Count, and Link to the next page (`next` builds its path) when there is one. */
export function pageResult(
  items: unknown[],
  page: { limit: number; offset: number },
  total: number,
  next: (offset: number, limit: number) => string,
): ApiResult {
  const headers: Record<string, string> = { 'X-Total-Count': String(total) };
  if (page.offset + page.limit < total) headers.Link = `<${next(page.offset + page.limit, page.limit)}>; rel="next"`;
  return { status: 200, body: items, headers };
}

/** A query parameter given at most once as a whole number in [min, max]; absent gives the fallback. */
function wholeNumber(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const values = query.getAll(name);
  if (values.length === 0) return fallback;
  const value = values.length === 1 && /^[0-9]{1,9}$/.test(values[0]!) ? Number(values[0]) : NaN;
  if (value >= min && value <= max) return value;
  const rule = `must be given once, as a whole number from ${min} to ${max}`;
  throw badRequest(`invalid query parameter: "${name}" ${rule}, got ${JSON.stringify(values.join(',').slice(0, 40))}`, {
    [name]: [rule],
  });
}
