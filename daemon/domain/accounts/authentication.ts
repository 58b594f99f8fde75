// Authentication: credentials to callers, login sessions, the throttled password check, re-checks of open streams.
import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/db.js';
import type { SessionRow, UserRow, UsersRepo } from '../../store/users-repo.js';
import type { AccountState, Caller, Credential, CredentialRef, EventBus } from '../shared/index.js';
import { invalid, throttled, unauthenticated } from '../shared/index.js';
import { canonicalAddress, isLoopback, LoginThrottle } from './login-throttle.js';
import {
  API_KEY_RE,
  type DeviceSecrets,
  generateSessionToken,
  hashPassword,
  hasPassword,
  SESSION_TOKEN_RE,
  sameDigest,
  verifyPassword,
} from './secrets.js';
import { type UserView, userView } from './user-account.js';

/** Password hashing, swappable so tests can hold a request inside the hash (where permissions may change). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export interface AuthenticationOptions {
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  loginFreeFailures: number;
  loginBaseDelayMs: number;
  loginMaxDelayMs: number;
}

/** Entries kept in each cache before it is emptied (a bound, not a working-set size). */
export const CACHE_LIMIT = 1000;
/** Touch a session's last-use time at most this often, so reads stay reads. */
const SESSION_TOUCH_MS = 60_000;
/** Addresses remembered per user as trusted for the login lock (login-throttle.ts): the most recent successes. */
export const TRUSTED_ADDRESSES_PER_USER = 8;

export class Authentication {
  private readonly throttle: LoginThrottle;
  /**
   * API-key callers as of the last account change. Reads dominate (every request resolves its key), writes are
   * rare, and every account change calls forgetCallers() (user-admin.ts).
   */
  private readonly keyCallers = new Map<string, Caller>();
  /** A digest computed once so unknown usernames cost the same scrypt time as known ones. */
  private dummyHash: Promise<string> | undefined;
  /** Production scrypt cost unless the composition root passes another (DaemonOptions.passwordHasher). */
  passwords: PasswordHasher = { hash: (password) => hashPassword(password), verify: verifyPassword };

  constructor(
    private readonly store: Store,
    private readonly users: UsersRepo,
    private readonly secrets: DeviceSecrets,
    private readonly bus: EventBus,
    private readonly options: AuthenticationOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.throttle = new LoginThrottle(
      {
        freeFailures: options.loginFreeFailures,
        baseDelayMs: options.loginBaseDelayMs,
        maxDelayMs: options.loginMaxDelayMs,
      },
      now,
    );
  }

  authenticate(credential: Credential): Caller | null {
    const value = credential.value;
    // Hits skip the format check, the digest and the query (only well-formed keys are ever cached). Like any
    // session store, the map is keyed by the secret itself; the database is searched only by keyed digest.
    const cached = this.keyCallers.get(value);
    if (cached) return cached;
    if (API_KEY_RE.test(value)) {
      const digest = this.secrets.digest(value);
      const row = this.users.byKeyDigest(digest);
      if (!row?.key_digest || !sameDigest(row.key_digest, digest) || !row.is_enabled) return null;
      const caller = this.callerFor(row, { kind: 'apiKey', keyDigest: digest.toString('hex') });
      if (this.keyCallers.size >= CACHE_LIMIT) this.keyCallers.clear();
      this.keyCallers.set(value, caller);
      return caller;
    }
    if (credential.source === 'bearer' && SESSION_TOKEN_RE.test(value)) {
      return this.sessionCaller(this.secrets.digest(value));
    }
    return null;
  }

  /**
   * Re-resolves a caller (of an open stream) from the reference its credential left in it; null when that
   * credential no longer works: the key was regenerated or revoked, the session ended or expired, the user
   * was disabled or deleted.
   */
  recheck(caller: Caller): Caller | null {
    const ref = caller.credential;
    if (ref.kind === 'session') {
      const session = this.users.sessionById(ref.sessionId);
      if (!session || !this.sessionAlive(session)) return null;
      const row = this.users.byId(session.user_id);
      return row?.is_enabled ? this.callerFor(row, ref) : null;
    }
    if (ref.kind === 'account') return this.callerOfAccount(caller.username);
    const row = this.users.byKeyDigest(Buffer.from(ref.keyDigest, 'hex'));
    return row && row.id === caller.userId && row.is_enabled ? this.callerFor(row, ref) : null;
  }

  /**
   * A named, enabled user as a caller for an in-process front door that holds no credential (the MQTT bridge acts
   * as --mqtt-account); null when there is no such user or it is disabled. Resolved from current state each time.
   */
  callerOfAccount(username: string): Caller | null {
    const row = this.users.byUsername(username);
    return row?.is_enabled ? this.callerFor(row, { kind: 'account' }) : null;
  }

  /** Whether a username names an enabled user, a disabled one or nobody (the MQTT bridge reports which). */
  accountState(username: string): AccountState {
    const row = this.users.byUsername(username);
    return !row ? 'missing' : row.is_enabled ? 'enabled' : 'disabled';
  }

  /** Drops cached callers; every account change calls it, so a cached caller never outlives its permissions. */
  forgetCallers(): void {
    this.keyCallers.clear();
  }

  async login(
    username: string,
    password: string,
    address: string,
  ): Promise<{ token: string; expiresAt: string; user: UserView }> {
    const client = canonicalAddress(address);
    const current = await this.checkPassword(username, password, client);
    if (!current) throw unauthenticated('wrong username or password, or the account is disabled');
    const token = generateSessionToken();
    const now = this.now();
    const expiresAt = now + this.options.sessionAbsoluteMs;
    this.store.transaction(() => {
      this.users.deleteExpiredSessions(now, this.options.sessionIdleMs);
      this.users.insertSession({
        id: randomUUID(),
        digest: this.secrets.digest(token),
        user_id: current.id,
        created_at: now,
        last_used_at: now,
        expires_at: expiresAt,
      });
      // Loopback is always trusted; remembering it would only push a real address out of the list.
      if (!isLoopback(client)) this.users.trustAddress(current.id, client, now, TRUSTED_ADDRESSES_PER_USER);
    });
    const user = userView(current, this.users.assignments(current.id), this.secrets);
    return { token, expiresAt: new Date(expiresAt).toISOString(), user };
  }

  logout(caller: Caller): void {
    if (caller.credential.kind !== 'session') {
      throw invalid('logout ends a login session; this request used an API key (revoke keys in the Users tab)');
    }
    const sessionId = caller.credential.sessionId;
    this.store.transaction(() => this.users.deleteSession(sessionId));
    // Not a change of the user (no user.changed), but streams opened with this session must end.
    this.bus.publish({ type: 'access.changed', payload: { userId: caller.userId } });
  }

  /**
   * One throttled password check (login-throttle.ts has the policy): throttled while blocked, otherwise the user
   * as it is after the check, or null when the password is wrong, the user unknown or disabled, or its password
   * changed while the check ran. A login and the current password of a password change both count here.
   */
  async checkPassword(username: string, password: string, address: string): Promise<UserRow | null> {
    const client = canonicalAddress(address);
    const row = this.users.byUsername(username);
    const trusted = isLoopback(client) || (row !== undefined && this.users.isTrustedAddress(row.id, client));
    const wait = this.throttle.retryAfterMs(username, client, trusted);
    if (wait > 0) {
      throw throttled(
        `too many failed password attempts; try again in ${Math.ceil(wait / 1000)} s`,
        Math.ceil(wait / 1000),
      );
    }
    const attempt = this.throttle.begin(username, client);
    try {
      // Hashed by the hasher in use, so an unknown username, or an account without a password, costs what a known
      // one does (and never matches, whatever is typed).
      this.dummyHash ??= this.passwords.hash('not a password of anyone');
      const stored = row && hasPassword(row.password_hash) ? row.password_hash : undefined;
      const matches = await this.passwords.verify(password, stored ?? (await this.dummyHash));
      // Re-read after the await: the user may have been disabled, deleted or given a new password meanwhile.
      const current = row && this.users.byId(row.id);
      if (!matches || !stored || !current?.is_enabled || current.password_hash !== stored) return null;
      attempt.succeeded();
      return current;
    } finally {
      attempt.failed(); // a no-op once it succeeded; an exception counts as a failure
    }
  }

  private sessionCaller(digest: Buffer): Caller | null {
    const session = this.users.sessionByDigest(digest);
    if (!session) return null;
    if (!this.sessionAlive(session)) {
      this.store.transaction(() => this.users.deleteSession(session.id));
      return null;
    }
    const row = this.users.byId(session.user_id);
    if (!row?.is_enabled) return null;
    const now = this.now();
    if (now - session.last_used_at > SESSION_TOUCH_MS)
      this.store.transaction(() => this.users.touchSession(session.id, now));
    return this.callerFor(row, { kind: 'session', sessionId: session.id });
  }

  private sessionAlive(session: Pick<SessionRow, 'last_used_at' | 'expires_at'>): boolean {
    const now = this.now();
    return session.expires_at > now && now - session.last_used_at < this.options.sessionIdleMs;
  }

  private callerFor(row: UserRow, credential: CredentialRef): Caller {
    const assignments = this.users.assignments(row.id);
    return {
      userId: row.id,
      username: row.username,
      role: row.role,
      playerIds: new Set(assignments.playerIds),
      zoneIds: new Set(assignments.zoneIds),
      credential,
    };
  }
}
