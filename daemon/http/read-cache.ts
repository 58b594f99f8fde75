// Encoded answers of the hottest read routes, kept per user and path until anything they show changes: every bus
// event (domain or access) but a playing player's position, a rolled-back write and a restore empty it, so no answer
// outlives the state it shows.
import type { BusEvent, Caller } from '../domain/shared/index.js';
import type { ApiResult, Route } from './route.js';

/** Entries kept before the cache is emptied (a bound against many users and paths, not a working-set size). */
export const READ_CACHE_LIMIT = 1000;

/** The routes whose answers are kept: answered from state the bus announces every change of. */
export const CACHED_ROUTES = ['GET /api/players', 'GET /api/zones', 'GET /api/users/me'];

/**
 * Events that change nothing the cached routes answer: a playing stream player's position, published about once a
 * second per player, is only in the playback routes, which are not cached. test/api/read-cache.test.ts checks, from
 * the OpenAPI document, that no cached route's answer has a field such an event carries (its ids aside).
 */
export const UNSEEN_EVENTS: ReadonlySet<string> = new Set(['player.position']);

export class ReadCache {
  private readonly routes: ReadonlySet<string>;
  private readonly entries = new Map<string, ApiResult>();

  /** `routes`: "GET /api/players" and the like (CACHED_ROUTES). */
  constructor(routes: readonly string[]) {
    this.routes = new Set(routes);
  }

  /** Whether answers of this route may be kept. */
  covers(route: Route): boolean {
    return this.routes.has(`${route.method} ${route.path}`);
  }

  /**
   * The entry key of a request, or undefined when it must not be cached: only authenticated requests without a
   * query. The answer depends on who asks, so the user is part of the key; a change of its role or assignments
   * publishes access.changed, which empties the cache.
   */
  keyOf(caller: Caller | null, path: string, rawQuery: string): string | undefined {
    if (!caller || rawQuery !== '') return undefined;
    return `${caller.userId} ${path}`;
  }

  get(key: string): ApiResult | undefined {
    return this.entries.get(key);
  }

  /** Encodes a 200 JSON answer once and keeps it; any other answer is passed through untouched. */
  keep(key: string, result: ApiResult): ApiResult {
    if (result.status !== 200 || result.body === undefined || result.headers || result.raw !== undefined) return result;
    const encoded: ApiResult = { status: 200, raw: JSON.stringify(result.body), contentType: 'application/json' };
    if (this.entries.size >= READ_CACHE_LIMIT) this.entries.clear();
    this.entries.set(key, encoded);
    return encoded;
  }

  clear(): void {
    if (this.entries.size > 0) this.entries.clear();
  }

  /** Told of every bus event: empties the cache unless the event changes nothing its routes answer. */
  changed(event: BusEvent): void {
    if (!UNSEEN_EVENTS.has(event.type)) this.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
