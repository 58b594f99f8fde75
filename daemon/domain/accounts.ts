// Accounts: users, roles, API keys, login sessions, passwords and assignment lists.
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/db.js';
import type { UsersRepo, UserRow, Assignments } from '../store/users-repo.js';
import { isAdmin, type Caller, type Role } from './access.js';
import type { EventBus } from './events.js';
import {
  API_KEY_RE,
  SESSION_TOKEN_RE,
  DeviceSecrets,
  generateApiKey,
  generateSessionToken,
  hashPassword,
  maskApiKey,
  sameDigest,
  verifyPassword,
} from './secrets.js';
import { LoginThrottle, canonicalAddress, isLoopback } from './login-throttle.js';
import { conflict, forbidden, invalid, notFound, throttled, unauthenticated } from './errors.js';
import type { Credential } from './access.js';

export interface UserView {
  id: string;
  username: string;
  role: Role;
  /** Masked key; an empty string once the key was revoked (the interface spec types it as a string). */
  apiKey: string;
  isEnabled: boolean;
  createdAt: string;
  assignments: Assignments;
  /** True while the account still has the generated password of the first start; clients should ask for a new one. */
  passwordChangeRequired: boolean;
}

/** Password hashing, swappable so tests can hold a request inside the hash (where permissions may change). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export interface AccountsOptions {
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  loginFreeFailures: number;
  loginBaseDelayMs: number;
  loginMaxDelayMs: number;
}

/** Why open streams of a user must be re-checked. */
export type AccessChange = { userId: string };

export const USERNAME_RE = /^[A-Za-z0-9._-]{3,64}$/;
/** Entries kept in each cache before it is emptied (a bound, not a working-set size). */
const CACHE_LIMIT = 1000;
/** Touch a session's last-use time at most this often, so reads stay reads. */
const SESSION_TOUCH_MS = 60_000;
/** Addresses remembered per user as trusted for the login lock (login-throttle.ts): the most recent successes. */
export const TRUSTED_ADDRESSES_PER_USER = 8;

export class AccountsService {
  private readonly throttle: LoginThrottle;
  private readonly accessListeners = new Set<(change: AccessChange) => void>();
  /**
   * API-key callers and user views as of the last account change. Reads dominate (every request resolves its
   * key), writes are rare, and every write path calls changed(), which empties both.
   */
  private readonly keyCallers = new Map<string, Caller>();
  private readonly views = new Map<string, UserView>();
  /** A digest computed once so unknown usernames cost the same scrypt time as known ones. */
  private dummyHash: Promise<string> | undefined;
  passwords: PasswordHasher = { hash: hashPassword, verify: verifyPassword };

  constructor(
    private readonly store: Store,
    private readonly users: UsersRepo,
    private readonly secrets: DeviceSecrets,
    private readonly bus: EventBus,
    private readonly options: AccountsOptions,
    /** Whether a player/zone id exists (for assignment validation). */
    private readonly targetExists: (kind: 'player' | 'zone', id: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.throttle = new LoginThrottle({
      freeFailures: options.loginFreeFailures,
      baseDelayMs: options.loginBaseDelayMs,
      maxDelayMs: options.loginMaxDelayMs,
    }, now);
  }

  /** Called whenever a user's role, assignments, enabled state or credentials change. */
  onAccessChange(listener: (change: AccessChange) => void): () => void {
    this.accessListeners.add(listener);
    return () => this.accessListeners.delete(listener);
  }

  // ---- authentication -------------------------------------------------------------------------

  authenticate(credential: Credential): Caller | null {
    const value = credential.value;
    if (API_KEY_RE.test(value)) {
      // Hits skip the digest and the query. Like any session store, the map is keyed by the secret itself;
      // the database is searched only by keyed digest.
      const cached = this.keyCallers.get(value);
      if (cached) return cached;
      const digest = this.secrets.digest(value);
      const row = this.users.byKeyDigest(digest);
      if (!row || !row.key_digest || !sameDigest(row.key_digest, digest) || !row.is_enabled) return null;
      const caller = this.callerFor(row, { kind: 'apiKey' });
      if (this.keyCallers.size >= CACHE_LIMIT) this.keyCallers.clear();
      this.keyCallers.set(value, caller);
      return caller;
    }
    if (credential.source === 'bearer' && SESSION_TOKEN_RE.test(value)) {
      return this.sessionCaller(this.secrets.digest(value));
    }
    return null;
  }

  /** Re-resolves a caller for an open stream; null when its credential no longer works. */
  recheck(caller: Caller, apiKeyDigest: Buffer | null): Caller | null {
    if (caller.credential.kind === 'session') {
      const session = this.users.sessionById(caller.credential.sessionId);
      if (!session || !this.sessionAlive(session)) return null;
      const row = this.users.byId(session.user_id);
      return row && row.is_enabled ? this.callerFor(row, caller.credential) : null;
    }
    if (!apiKeyDigest) return null;
    const row = this.users.byKeyDigest(apiKeyDigest);
    return row && row.id === caller.userId && row.is_enabled ? this.callerFor(row, caller.credential) : null;
  }

  digestOf(secret: string): Buffer {
    return this.secrets.digest(secret);
  }

  private sessionCaller(digest: Buffer): Caller | null {
    const session = this.users.sessionByDigest(digest);
    if (!session) return null;
    if (!this.sessionAlive(session)) {
      this.users.deleteSession(session.id);
      return null;
    }
    const row = this.users.byId(session.user_id);
    if (!row || !row.is_enabled) return null;
    const now = this.now();
    if (now - session.last_used_at > SESSION_TOUCH_MS) this.users.touchSession(session.id, now);
    return this.callerFor(row, { kind: 'session', sessionId: session.id });
  }

  private sessionAlive(session: { last_used_at: number; expires_at: number }): boolean {
    const now = this.now();
    return session.expires_at > now && now - session.last_used_at < this.options.sessionIdleMs;
  }

  private callerFor(row: UserRow, credential: Caller['credential']): Caller {
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

  async login(username: string, password: string, address: string): Promise<{ token: string; expiresAt: string; user: UserView }> {
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
    return { token, expiresAt: new Date(expiresAt).toISOString(), user: this.view(current) };
  }

  /**
   * One throttled password check (login-throttle.ts has the policy): 429 while blocked, otherwise the user as it
   * is after the check, or null when the password is wrong, the user unknown or disabled, or its password
   * changed while the check ran.
   */
  private async checkPassword(username: string, password: string, client: string): Promise<UserRow | null> {
    const row = this.users.byUsername(username);
    const trusted = isLoopback(client) || (row !== undefined && this.users.isTrustedAddress(row.id, client));
    const wait = this.throttle.retryAfterMs(username, client, trusted);
    if (wait > 0) {
      throw throttled(`too many failed password attempts; try again in ${Math.ceil(wait / 1000)} s`, Math.ceil(wait / 1000));
    }
    const attempt = this.throttle.begin(username, client);
    try {
      this.dummyHash ??= hashPassword('not a password of anyone');
      const matches = await this.passwords.verify(password, row?.password_hash ?? (await this.dummyHash));
      // Re-read after the await: the user may have been disabled, deleted or given a new password meanwhile.
      const current = row && this.users.byId(row.id);
      if (!matches || !current || !current.is_enabled || current.password_hash !== row.password_hash) return null;
      attempt.succeeded();
      return current;
    } finally {
      attempt.failed(); // a no-op once it succeeded; an exception counts as a failure
    }
  }

  logout(caller: Caller): void {
    if (caller.credential.kind !== 'session') {
      throw invalid('logout ends a login session; this request used an API key (revoke keys in the Users tab)');
    }
    this.users.deleteSession(caller.credential.sessionId);
    this.changed(caller.userId, false);
  }

  // ---- users ----------------------------------------------------------------------------------

  view(row: UserRow): UserView {
    return {
      id: row.id,
      username: row.username,
      role: row.role,
      apiKey: this.keyOf(row, true) ?? '',
      isEnabled: row.is_enabled === 1,
      createdAt: row.created_at,
      assignments: this.users.assignments(row.id),
      passwordChangeRequired: row.password_change_required === 1,
    };
  }

  list(): UserView[] {
    return this.users.list().map((row) => this.view(row));
  }

  get(id: string): UserView {
    const cached = this.views.get(id);
    if (cached) return cached;
    const view = this.view(this.row(id));
    if (this.views.size >= CACHE_LIMIT) this.views.clear();
    this.views.set(id, view);
    return view;
  }

  async create(
    input: { username: string; password: string; role: Role; assignments?: Assignments },
    options: {
      /** A key chosen in advance (the first admin's, saved before the account exists). */
      presetKey?: string;
      /** The password was generated, not chosen: its owner should replace it. */
      passwordChangeRequired?: boolean;
      /** Re-checks the caller after the hash, right before the commit; throws to abort (see ApiRequest.revalidate). */
      beforeCommit?: () => void;
    } = {},
  ): Promise<UserView & { apiKey: string }> {
    validateUsername(input.username);
    validatePassword(input.password, 'password');
    this.checkAssignments(input.assignments ?? { playerIds: [], zoneIds: [] });
    if (this.users.byUsername(input.username)) throw conflict(`a user named "${input.username}" already exists`);
    const passwordHash = await this.passwords.hash(input.password);
    options.beforeCommit?.();
    // Checked again after the hash: a player or zone may have been deleted meanwhile.
    const assignments = this.checkAssignments(input.assignments ?? { playerIds: [], zoneIds: [] });
    const apiKey = options.presetKey ?? generateApiKey();
    const id = randomUUID();
    this.store.transaction(() => {
      if (this.users.byUsername(input.username)) throw conflict(`a user named "${input.username}" already exists`);
      this.users.insert({
        id,
        username: input.username,
        role: input.role,
        password_hash: passwordHash,
        is_enabled: 1,
        created_at: new Date(this.now()).toISOString(),
        password_change_required: options.passwordChangeRequired ? 1 : 0,
        ...this.sealedKey(apiKey),
      });
      this.users.replaceAssignments(id, assignments);
    });
    this.changed(id);
    return { ...this.get(id), apiKey };
  }

  update(id: string, change: { role?: Role; isEnabled?: boolean }): UserView {
    this.store.transaction(() => {
      const row = this.row(id);
      const role = change.role ?? row.role;
      const isEnabled = change.isEnabled ?? row.is_enabled === 1;
      const wasActiveAdmin = row.role === 'Admin' && row.is_enabled === 1;
      if (wasActiveAdmin && !(role === 'Admin' && isEnabled) && this.users.enabledAdminCount() <= 1) {
        throw invalid(`"${row.username}" is the last enabled Admin; make another user an enabled Admin first`);
      }
      this.users.update(id, role, isEnabled);
      if (!isEnabled) this.users.deleteUserSessions(id);
    });
    this.changed(id);
    return this.get(id);
  }

  remove(id: string): void {
    this.store.transaction(() => {
      const row = this.row(id);
      if (row.role === 'Admin' && row.is_enabled === 1 && this.users.enabledAdminCount() <= 1) {
        throw invalid(`"${row.username}" is the last enabled Admin and cannot be deleted`);
      }
      this.users.remove(id);
    });
    this.changed(id);
  }

  getApiKey(id: string): string {
    const key = this.keyOf(this.row(id), false);
    if (!key) throw notFound('this user has no API key (it was revoked); regenerate one with POST');
    return key;
  }

  regenerateApiKey(id: string): string {
    const apiKey = generateApiKey();
    this.store.transaction(() => {
      this.row(id);
      this.users.setKey(id, this.sealedKeyParts(apiKey));
    });
    this.changed(id);
    return apiKey;
  }

  revokeApiKey(id: string): void {
    this.store.transaction(() => {
      this.row(id);
      this.users.setKey(id, null);
    });
    this.changed(id);
  }

  /**
   * Sets a user's password and ends its sessions. An Admin may reset another user's password outright; changing
   * one's own (Admin or not) needs the current password (OWASP ASVS 2.1.6), so a stolen session or key cannot
   * take over the account. A wrong current password counts as a failed login of that username from `address`.
   */
  async changePassword(
    caller: Caller,
    id: string,
    input: { newPassword: string; currentPassword?: string },
    context: {
      address: string;
      /** Re-resolves the caller after the awaits (ApiRequest.revalidate); throws when its credential is gone. */
      recheck: () => Caller;
    },
  ): Promise<void> {
    const self = caller.userId === id;
    if (!self && !isAdmin(caller)) throw forbidden("only an Admin can change another user's password");
    const row = this.row(id);
    validatePassword(input.newPassword, 'newPassword');
    if (self) {
      if (input.currentPassword === undefined) {
        throw forbidden('changing your own password needs "currentPassword" (your present password) as well as "newPassword"');
      }
      const checked = await this.checkPassword(row.username, input.currentPassword, canonicalAddress(context.address));
      if (!checked) throw forbidden('"currentPassword" is not the present password of this account; nothing was changed');
    }
    const hash = await this.passwords.hash(input.newPassword);
    const recheckedCaller = context.recheck();
    if (recheckedCaller.userId !== id && !isAdmin(recheckedCaller)) throw forbidden("only an Admin can change another user's password");
    this.store.transaction(() => {
      const current = this.row(id);
      // Two changes with the same current password: only the first may win.
      if (self && current.password_hash !== row.password_hash) {
        throw conflict('the password was changed by another request meanwhile; sign in again with the new one');
      }
      this.users.setPassword(id, hash);
      this.users.deleteUserSessions(id);
    });
    this.changed(id);
  }

  setAssignments(id: string, assignments: Assignments): UserView {
    const checked = this.checkAssignments(assignments);
    this.store.transaction(() => {
      this.row(id);
      this.users.replaceAssignments(id, checked);
    });
    this.changed(id);
    return this.get(id);
  }

  /** Tells streams and admins that a player or zone left some users' assignment lists. */
  assignmentsDropped(userIds: string[]): void {
    for (const userId of userIds) this.changed(userId);
  }

  /**
   * First start: creates `admin` with the given or a random password. `save` runs before the account exists,
   * so a crash in between can never leave an administrator whose password nobody was shown.
   */
  async ensureInitialAdmin(
    password: string | undefined,
    save: (credentials: { username: string; password: string; apiKey: string }) => void,
  ): Promise<{ username: string; password: string; apiKey: string } | null> {
    if (this.users.count() > 0) return null;
    const credentials = { username: 'admin', password: password ?? generateSessionToken().slice(4, 24), apiKey: generateApiKey() };
    save(credentials);
    await this.create(
      { username: credentials.username, password: credentials.password, role: 'Admin' },
      { presetKey: credentials.apiKey, passwordChangeRequired: password === undefined },
    );
    return credentials;
  }

  private row(id: string): UserRow {
    const row = this.users.byId(id);
    if (!row) throw notFound(`no user with id ${id}`);
    return row;
  }

  private keyOf(row: UserRow, masked: boolean): string | null {
    if (!row.key_box || !row.key_nonce) return null;
    const key = this.secrets.open({ box: row.key_box, nonce: row.key_nonce });
    if (!key) return null;
    return masked ? maskApiKey(key) : key;
  }

  private sealedKeyParts(apiKey: string): { digest: Buffer; nonce: Buffer; box: Buffer } {
    const sealed = this.secrets.seal(apiKey);
    return { digest: this.secrets.digest(apiKey), nonce: sealed.nonce, box: sealed.box };
  }

  private sealedKey(apiKey: string): Pick<UserRow, 'key_digest' | 'key_nonce' | 'key_box'> {
    const parts = this.sealedKeyParts(apiKey);
    return { key_digest: parts.digest, key_nonce: parts.nonce, key_box: parts.box };
  }

  private checkAssignments(assignments: Assignments): Assignments {
    const playerIds = [...new Set(assignments.playerIds.map((id) => id.toLowerCase()))];
    const zoneIds = [...new Set(assignments.zoneIds.map((id) => id.toLowerCase()))];
    const unknownPlayers = playerIds.filter((id) => !this.targetExists('player', id));
    const unknownZones = zoneIds.filter((id) => !this.targetExists('zone', id));
    if (unknownPlayers.length || unknownZones.length) {
      const errors: Record<string, string[]> = {};
      if (unknownPlayers.length) errors.playerIds = [`unknown player ids: ${unknownPlayers.join(', ')}`];
      if (unknownZones.length) errors.zoneIds = [`unknown zone ids: ${unknownZones.join(', ')}`];
      throw invalid(Object.values(errors).flat().join('; '), errors);
    }
    return { playerIds, zoneIds };
  }

  private changed(userId: string, announce = true): void {
    // Every account change goes through here, so dropping the caches keeps permissions current.
    this.keyCallers.clear();
    this.views.clear();
    if (announce) this.bus.publish({ type: 'user.changed', payload: { userId } });
    for (const listener of this.accessListeners) listener({ userId });
  }
}

export function validateUsername(username: string): void {
  if (!USERNAME_RE.test(username)) {
    throw invalid(`"username" must be 3 to 64 characters of A-Z a-z 0-9 . _ -, got ${JSON.stringify(username).slice(0, 80)}`, {
      username: ['must be 3 to 64 characters of A-Z a-z 0-9 . _ -'],
    });
  }
}

export function validatePassword(password: string, field: string): void {
  const length = [...password].length;
  if (length < 8 || length > 256) {
    throw invalid(`"${field}" must be 8 to 256 characters, got ${length}`, { [field]: ['must be 8 to 256 characters'] });
  }
}
