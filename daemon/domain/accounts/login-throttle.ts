// Failed-password back-off per username and per client address (exponential after a few free failures).
//
// Policy (docs/security.md, Login throttling):
// - Every password check (a login, or the current password of a self-service password change) counts against two
//   keys: the username and the client address. Either key over its limit means 429 with Retry-After.
// - An attempt counts while it is in flight, so simultaneous guesses cannot all start before the back-off does.
// - A success clears only that username's failures, never the address's: an attacker who signs in to an account
//   of its own between guesses cannot reset its per-address budget (password spraying).
// - The username lock does not hold back an address the account is trusted from: loopback (the local console)
//   and the addresses it last signed in from successfully (authentication.ts keeps a few per user in the database,
//   so they survive restarts). Failing the admin's login from elsewhere therefore cannot lock the owner out.
//   The per-address limit applies to everyone, trusted or not.
// - The address is the TCP peer's; forwarding headers (X-Forwarded-For) are not trusted, since anyone can send them.
import type { BlockList } from 'node:net';

interface Entry {
  failures: number;
  /** Attempts started and not yet decided; they count towards the limit so parallel guesses queue up. */
  pending: number;
  blockedUntil: number;
  lastSeen: number;
}

export interface ThrottleOptions {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Cap on tracked keys so a flood of usernames cannot grow memory without bound. */
  maxEntries?: number;
}

/** One password check in flight: report how it ended exactly once. */
export interface LoginAttempt {
  succeeded(): void;
  failed(): void;
}

/** node's net module, loaded with the first sign-in rather than at start (ARCHITECTURE.md, "Memory"). */
const net = () => process.getBuiltinModule('node:net');

let loopback: BlockList | undefined;
function loopbackList(): BlockList {
  if (!loopback) {
    loopback = new (net().BlockList)();
    loopback.addSubnet('127.0.0.0', 8, 'ipv4');
    loopback.addAddress('::1', 'ipv6');
  }
  return loopback;
}

/** One spelling per address (IPv6 compressed, IPv4-mapped IPv6 as plain IPv4), so a key cannot be dodged by form. */
export function canonicalAddress(address: string): string {
  const { isIPv4, isIPv6, SocketAddress } = net();
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const compressed = new SocketAddress({ address, family: 'ipv6' }).address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(compressed);
  return mapped ? mapped[1]! : compressed;
}

export function isLoopback(address: string): boolean {
  const canonical = canonicalAddress(address);
  const { isIPv4, isIPv6 } = net();
  if (isIPv4(canonical)) return loopbackList().check(canonical, 'ipv4');
  return isIPv6(canonical) && loopbackList().check(canonical, 'ipv6');
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: ThrottleOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Milliseconds until a password check for `username` from `address` may run (0: now). `trusted` says the
   * address is one the account is trusted from, which lifts the username lock but not the address limit.
   */
  retryAfterMs(username: string, address: string, trusted = false): number {
    const wait = this.waitFor(addressKey(address));
    return trusted ? wait : Math.max(wait, this.waitFor(userKey(username)));
  }

  /** Starts a password check; call right after retryAfterMs() said 0, with no await in between. */
  begin(username: string, address: string): LoginAttempt {
    const now = this.now();
    this.prune(now);
    const keys = [userKey(username), addressKey(address)];
    for (const key of keys) this.entry(key, now).pending++;
    let settled = false;
    const settle = (outcome: 'success' | 'failure') => {
      if (settled) return;
      settled = true;
      const at = this.now();
      for (const key of keys) {
        const entry = this.entry(key, at);
        entry.pending = Math.max(0, entry.pending - 1);
        if (outcome === 'failure') {
          entry.failures++;
          entry.lastSeen = at;
          const over = entry.failures - this.options.freeFailures;
          if (over >= 0) entry.blockedUntil = at + this.delay(entry.failures);
          // Kept in order of last failure, so prune() can stop at the first recent entry.
          this.entries.delete(key);
          this.entries.set(key, entry);
        } else if (key === keys[0]) {
          entry.failures = 0;
          entry.blockedUntil = 0;
        }
        if (entry.failures === 0 && entry.pending === 0) this.entries.delete(key);
      }
    };
    return { succeeded: () => settle('success'), failed: () => settle('failure') };
  }

  private waitFor(key: string): number {
    const entry = this.entries.get(key);
    if (!entry) return 0;
    const now = this.now();
    let wait = Math.max(0, entry.blockedUntil - now);
    // Checks still running would start a back-off if they fail; until they are decided, nobody else may start.
    if (entry.pending > 0 && entry.failures + entry.pending >= this.options.freeFailures) {
      wait = Math.max(wait, this.delay(entry.failures + entry.pending));
    }
    return wait;
  }

  private delay(failures: number): number {
    const over = Math.max(0, failures - this.options.freeFailures);
    return Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** over);
  }

  private entry(key: string, now: number): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { failures: 0, pending: 0, blockedUntil: 0, lastSeen: now };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private prune(now: number): void {
    const max = this.options.maxEntries ?? 10_000;
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= max && now - entry.lastSeen < this.options.maxDelayMs * 2) break;
      if (entry.pending > 0) continue; // decided soon; its outcome must find it
      this.entries.delete(key);
    }
  }
}

const userKey = (username: string) => `user:${username.toLowerCase()}`;
const addressKey = (address: string) => `addr:${canonicalAddress(address)}`;
