// Failed-login back-off per username and per client address (exponential after a few free failures).

interface Entry {
  failures: number;
  blockedUntil: number;
  lastFailure: number;
}

export interface ThrottleOptions {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Cap on tracked keys so a flood of usernames cannot grow memory without bound. */
  maxEntries?: number;
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: ThrottleOptions, private readonly now: () => number = Date.now) {}

  /** Milliseconds until any of the keys may try again (0 when none is blocked). */
  retryAfterMs(keys: string[]): number {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry && entry.blockedUntil > now) wait = Math.max(wait, entry.blockedUntil - now);
    }
    return wait;
  }

  recordFailure(keys: string[]): void {
    const now = this.now();
    this.prune(now);
    for (const key of keys) {
      const entry = this.entries.get(key) ?? { failures: 0, blockedUntil: 0, lastFailure: now };
      entry.failures++;
      entry.lastFailure = now;
      const over = entry.failures - this.options.freeFailures;
      if (over >= 0) {
        entry.blockedUntil = now + Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** over);
      }
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
  }

  recordSuccess(keys: string[]): void {
    for (const key of keys) this.entries.delete(key);
  }

  private prune(now: number): void {
    const max = this.options.maxEntries ?? 10_000;
    for (const [key, entry] of this.entries) {
      // Entries are kept in insertion order of their last failure: stop at the first recent one.
      if (this.entries.size <= max && now - entry.lastFailure < this.options.maxDelayMs * 2) break;
      this.entries.delete(key);
    }
  }
}
