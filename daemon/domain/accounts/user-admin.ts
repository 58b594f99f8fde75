// User administration: accounts, roles, API keys, passwords and assignment lists, each checking its permission here.
import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/db.js';
import type { Assignments, UserRow, UsersRepo } from '../../store/users-repo.js';
import type { Caller, EventBus, Role } from '../shared/index.js';
import { conflict, forbidden, invalid, notFound, requireAdmin, requireAdminOrSelf } from '../shared/index.js';
import { type Authentication, CACHE_LIMIT } from './authentication.js';
import { reconcileInitialAdminFile } from './initial-admin-file.js';
import { type DeviceSecrets, generateApiKey, generateSessionToken, NO_PASSWORD } from './secrets.js';
import {
  checkAssignments,
  openApiKey,
  type UserView,
  userView,
  validatePassword,
  validateUsername,
} from './user-account.js';

export interface NewUser {
  username: string;
  /** Left out: the account signs in with its API key only (a hub, the MQTT bridge) until an admin sets one. */
  password?: string;
  role: Role;
  assignments?: Assignments;
}

export class UserAdmin {
  /** User views as of the last account change; every write path calls changed(), which empties it. */
  private readonly views = new Map<string, UserView>();

  constructor(
    private readonly store: Store,
    private readonly users: UsersRepo,
    private readonly secrets: DeviceSecrets,
    private readonly bus: EventBus,
    /** Checks current passwords (with the login throttle), hashes new ones, and caches callers to forget. */
    private readonly auth: Authentication,
    /** Whether a player/zone id exists (for assignment validation). */
    private readonly targetExists: (kind: 'player' | 'zone', id: string) => boolean,
    private readonly now: () => number = Date.now,
    /** <stateDir>/initial-admin.txt: its password line goes when that account's password changes. */
    private readonly initialAdminFile?: string,
  ) {
    // Among the last to hear a restore: the callers cached until then are forgotten once every service reloaded.
    bus.subscribe(
      'user-admin',
      (event) => {
        if (event.type === 'assignments.dropped') this.assignmentsDropped(event.payload.userIds);
        else if (event.type === 'configuration.replaced') this.accountsReplaced();
      },
      { internal: true, stage: 'clients' },
    );
  }

  list(caller: Caller): UserView[] {
    requireAdmin(caller, 'listing users');
    return this.users.list().map((row) => this.view(row));
  }

  get(caller: Caller, id: string): UserView {
    requireAdminOrSelf(caller, id, 'reading a user');
    return this.current(id);
  }

  /**
   * Creates a user with a new API key (returned in full, this once). `recheck` re-resolves the caller after the
   * password hash, right before the commit (ApiRequest.revalidate): it may have been demoted or removed meanwhile.
   */
  async create(
    caller: Caller,
    input: NewUser,
    context: { recheck?: () => Caller } = {},
  ): Promise<UserView & { apiKey: string }> {
    requireAdmin(caller, 'creating users');
    const recheck = context.recheck;
    return this.insert(input, {}, () => recheck && requireAdmin(recheck(), 'creating users'));
  }

  update(caller: Caller, id: string, change: { role?: Role; isEnabled?: boolean }): UserView {
    requireAdmin(caller, "changing a user's role or enabled state");
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
    return this.current(id);
  }

  remove(caller: Caller, id: string): void {
    requireAdmin(caller, 'deleting users');
    this.store.transaction(() => {
      const row = this.row(id);
      if (row.role === 'Admin' && row.is_enabled === 1 && this.users.enabledAdminCount() <= 1) {
        throw invalid(`"${row.username}" is the last enabled Admin and cannot be deleted`);
      }
      this.users.remove(id);
    });
    this.changed(id);
  }

  getApiKey(caller: Caller, id: string): string {
    requireAdmin(caller, "reading a user's API key");
    const key = openApiKey(this.row(id), this.secrets, false);
    if (!key) throw notFound('this user has no API key (it was revoked); regenerate one with POST');
    return key;
  }

  regenerateApiKey(caller: Caller, id: string): string {
    requireAdmin(caller, 'regenerating API keys');
    const apiKey = generateApiKey();
    this.store.transaction(() => {
      this.row(id);
      this.users.setKey(id, this.secrets.sealKey(apiKey));
    });
    this.changed(id);
    return apiKey;
  }

  revokeApiKey(caller: Caller, id: string): void {
    requireAdmin(caller, 'revoking API keys');
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
   * One exception: while the account still has the password the daemon generated at first start (nobody chose it;
   * the owner copied it from a file), a session may replace it without retyping it: the session was opened with
   * that very password. An API key still needs it.
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
    requireAdminOrSelf(caller, id, "changing a user's password");
    const self = caller.userId === id;
    const row = this.row(id);
    validatePassword(input.newPassword, 'newPassword');
    const generated = row.password_change_required === 1 && caller.credential.kind === 'session';
    if (self && !(generated && input.currentPassword === undefined)) {
      if (input.currentPassword === undefined) {
        throw forbidden(
          'changing your own password needs "currentPassword" (your present password) as well as "newPassword"',
        );
      }
      const checked = await this.auth.checkPassword(row.username, input.currentPassword, context.address);
      if (!checked)
        throw forbidden('"currentPassword" is not the present password of this account; nothing was changed');
    }
    const hash = await this.auth.passwords.hash(input.newPassword);
    requireAdminOrSelf(context.recheck(), id, "changing a user's password");
    this.store.transaction(() => {
      const current = this.row(id);
      // Two changes with the same current password: only the first may win.
      if (self && current.password_hash !== row.password_hash) {
        throw conflict('the password was changed by another request meanwhile; sign in again with the new one');
      }
      this.users.setPassword(id, hash);
      this.users.deleteUserSessions(id);
    });
    if (this.initialAdminFile)
      await reconcileInitialAdminFile(
        this.initialAdminFile,
        this.users.list(),
        this.secrets,
        'a password was changed',
        this.now(),
      );
    this.changed(id);
  }

  setAssignments(caller: Caller, id: string, assignments: Assignments): UserView {
    requireAdmin(caller, 'assigning players and zones');
    const checked = checkAssignments(assignments, this.targetExists);
    this.store.transaction(() => {
      this.row(id);
      this.users.replaceAssignments(id, checked);
    });
    this.changed(id);
    return this.current(id);
  }

  /** After every account was replaced at once (a restore): no cached view or caller may outlive it. */
  accountsReplaced(): void {
    this.views.clear();
    this.auth.forgetCallers();
  }

  /** Tells streams and admins that a player or zone left some users' assignment lists (the deletion was checked). */
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
    const credentials = {
      username: 'admin',
      password: password ?? generateSessionToken().slice(4, 24),
      apiKey: generateApiKey(),
    };
    save(credentials);
    await this.insert(
      { username: credentials.username, password: credentials.password, role: 'Admin' },
      { presetKey: credentials.apiKey, passwordChangeRequired: password === undefined },
      () => {
        // The first administrator has no condition to recheck after the hash.
      },
    );
    return credentials;
  }

  private async insert(
    input: NewUser,
    options: {
      /** A key chosen in advance (the first admin's, saved before the account exists). */
      presetKey?: string;
      /** The password was generated, not chosen: its owner should replace it. */
      passwordChangeRequired?: boolean;
    },
    /** Runs after the hash, right before the commit; throws to abort. */
    beforeCommit: () => void,
  ): Promise<UserView & { apiKey: string }> {
    validateUsername(input.username);
    if (input.password !== undefined) validatePassword(input.password, 'password');
    checkAssignments(input.assignments ?? { playerIds: [], zoneIds: [] }, this.targetExists);
    if (this.users.byUsername(input.username)) throw conflict(`a user named "${input.username}" already exists`);
    const passwordHash = input.password === undefined ? NO_PASSWORD : await this.auth.passwords.hash(input.password);
    beforeCommit();
    // Checked again after the hash: a player or zone may have been deleted meanwhile.
    const assignments = checkAssignments(input.assignments ?? { playerIds: [], zoneIds: [] }, this.targetExists);
    const apiKey = options.presetKey ?? generateApiKey();
    const sealed = this.secrets.sealKey(apiKey);
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
        key_digest: sealed.digest,
        key_nonce: sealed.nonce,
        key_box: sealed.box,
      });
      this.users.replaceAssignments(id, assignments);
    });
    this.changed(id);
    return { ...this.view(this.row(id)), apiKey };
  }

  /** A user as it is now, from the cache of views (emptied by every account change). */
  private current(id: string): UserView {
    const cached = this.views.get(id);
    if (cached) return cached;
    const view = this.view(this.row(id));
    if (this.views.size >= CACHE_LIMIT) this.views.clear();
    this.views.set(id, view);
    return view;
  }

  private view(row: UserRow): UserView {
    return userView(row, this.users.assignments(row.id), this.secrets);
  }

  private row(id: string): UserRow {
    const row = this.users.byId(id);
    if (!row) throw notFound(`no user with id ${id}`);
    return row;
  }

  /** Every account change ends here: caches are dropped, admins told (user.changed), streams re-checked. */
  private changed(userId: string): void {
    this.views.clear();
    this.auth.forgetCallers();
    this.bus.publish({ type: 'user.changed', payload: { userId } });
    this.bus.publish({ type: 'access.changed', payload: { userId } });
  }
}
