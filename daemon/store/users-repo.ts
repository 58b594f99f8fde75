// Users, API-key material, login sessions and assignment lists.

import type { Role } from '../domain/shared/index.js';
import type { Db } from './db.js';
import { preparedOnUse } from './statements.js';

export interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
  is_enabled: number;
  created_at: string;
  key_digest: Buffer | null;
  key_nonce: Buffer | null;
  key_box: Buffer | null;
  /** 1 while the password is the generated one of the first start (it should be replaced). */
  password_change_required: number;
}

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
}

export interface Assignments {
  playerIds: string[];
  zoneIds: string[];
}

export class UsersRepo {
  private readonly s;

  constructor(db: Db) {
    this.s = preparedOnUse({
      insert: () =>
        db.prepare(
          `INSERT INTO users (id, username, role, password_hash, is_enabled, created_at, key_digest, key_nonce, key_box,
                            password_change_required)
         VALUES (@id, @username, @role, @password_hash, @is_enabled, @created_at, @key_digest, @key_nonce, @key_box,
                 @password_change_required)`,
        ),
      byId: () => db.prepare('SELECT * FROM users WHERE id = ?'),
      byUsername: () => db.prepare('SELECT * FROM users WHERE username = ?'),
      byKeyDigest: () => db.prepare('SELECT * FROM users WHERE key_digest = ?'),
      list: () => db.prepare('SELECT * FROM users ORDER BY created_at, username'),
      count: () => db.prepare('SELECT COUNT(*) AS n FROM users'),
      update: () => db.prepare('UPDATE users SET role = @role, is_enabled = @is_enabled WHERE id = @id'),
      remove: () => db.prepare('DELETE FROM users WHERE id = ?'),
      setKey: () => db.prepare('UPDATE users SET key_digest = ?, key_nonce = ?, key_box = ? WHERE id = ?'),
      setPassword: () => db.prepare('UPDATE users SET password_hash = ?, password_change_required = 0 WHERE id = ?'),
      enabledAdmins: () => db.prepare(`SELECT COUNT(*) AS n FROM users WHERE role = 'Admin' AND is_enabled = 1`),
      assignments: () => db.prepare('SELECT kind, target_id FROM assignments WHERE user_id = ?'),
      clearAssignments: () => db.prepare('DELETE FROM assignments WHERE user_id = ?'),
      addAssignment: () => db.prepare('INSERT OR IGNORE INTO assignments (user_id, kind, target_id) VALUES (?, ?, ?)'),
      dropTarget: () => db.prepare('DELETE FROM assignments WHERE kind = ? AND target_id = ?'),
      usersAssigned: () => db.prepare('SELECT DISTINCT user_id FROM assignments WHERE kind = ? AND target_id = ?'),
      insertSession: () =>
        db.prepare(
          `INSERT INTO sessions (id, digest, user_id, created_at, last_used_at, expires_at)
         VALUES (@id, @digest, @user_id, @created_at, @last_used_at, @expires_at)`,
        ),
      sessionByDigest: () =>
        db.prepare('SELECT id, user_id, created_at, last_used_at, expires_at FROM sessions WHERE digest = ?'),
      sessionById: () =>
        db.prepare('SELECT id, user_id, created_at, last_used_at, expires_at FROM sessions WHERE id = ?'),
      touchSession: () => db.prepare('UPDATE sessions SET last_used_at = ? WHERE id = ?'),
      deleteSession: () => db.prepare('DELETE FROM sessions WHERE id = ?'),
      deleteUserSessions: () => db.prepare('DELETE FROM sessions WHERE user_id = ?'),
      deleteExpiredSessions: () => db.prepare('DELETE FROM sessions WHERE expires_at <= ? OR last_used_at <= ?'),
      isTrusted: () => db.prepare('SELECT 1 AS ok FROM trusted_addresses WHERE user_id = ? AND address = ?'),
      trust: () =>
        db.prepare(
          `INSERT INTO trusted_addresses (user_id, address, last_success) VALUES (?, ?, ?)
         ON CONFLICT (user_id, address) DO UPDATE SET last_success = excluded.last_success`,
        ),
      trimTrusted: () =>
        db.prepare(
          `DELETE FROM trusted_addresses WHERE user_id = @user_id AND address NOT IN (
           SELECT address FROM trusted_addresses WHERE user_id = @user_id ORDER BY last_success DESC, address LIMIT @keep)`,
        ),
      trustedAddresses: () =>
        db.prepare('SELECT address FROM trusted_addresses WHERE user_id = ? ORDER BY last_success DESC, address'),
    });
  }

  insert(row: UserRow): void {
    this.s.insert.run(row);
  }
  byId(id: string): UserRow | undefined {
    return this.s.byId.get(id) as UserRow | undefined;
  }
  byUsername(username: string): UserRow | undefined {
    return this.s.byUsername.get(username) as UserRow | undefined;
  }
  byKeyDigest(digest: Buffer): UserRow | undefined {
    return this.s.byKeyDigest.get(digest) as UserRow | undefined;
  }
  list(): UserRow[] {
    return this.s.list.all() as UserRow[];
  }
  count(): number {
    return (this.s.count.get() as { n: number }).n;
  }
  update(id: string, role: Role, isEnabled: boolean): void {
    this.s.update.run({ id, role, is_enabled: isEnabled ? 1 : 0 });
  }
  remove(id: string): void {
    this.s.remove.run(id);
  }
  setKey(id: string, key: { digest: Buffer; nonce: Buffer; box: Buffer } | null): void {
    this.s.setKey.run(key?.digest ?? null, key?.nonce ?? null, key?.box ?? null, id);
  }
  /** Also clears password_change_required: whoever set this password chose it. */
  setPassword(id: string, hash: string): void {
    this.s.setPassword.run(hash, id);
  }
  enabledAdminCount(): number {
    return (this.s.enabledAdmins.get() as { n: number }).n;
  }

  assignments(userId: string): Assignments {
    const result: Assignments = { playerIds: [], zoneIds: [] };
    for (const row of this.s.assignments.all(userId) as Array<{ kind: string; target_id: string }>) {
      (row.kind === 'player' ? result.playerIds : result.zoneIds).push(row.target_id);
    }
    return result;
  }
  replaceAssignments(userId: string, assignments: Assignments): void {
    this.s.clearAssignments.run(userId);
    for (const id of assignments.playerIds) this.s.addAssignment.run(userId, 'player', id);
    for (const id of assignments.zoneIds) this.s.addAssignment.run(userId, 'zone', id);
  }
  /** Removes a deleted player or zone from every assignment list; returns the users affected. */
  dropAssignmentTarget(kind: 'player' | 'zone', targetId: string): string[] {
    const users = (this.s.usersAssigned.all(kind, targetId) as Array<{ user_id: string }>).map((r) => r.user_id);
    this.s.dropTarget.run(kind, targetId);
    return users;
  }

  insertSession(row: SessionRow & { digest: Buffer }): void {
    this.s.insertSession.run(row);
  }
  sessionByDigest(digest: Buffer): SessionRow | undefined {
    return this.s.sessionByDigest.get(digest) as SessionRow | undefined;
  }
  sessionById(id: string): SessionRow | undefined {
    return this.s.sessionById.get(id) as SessionRow | undefined;
  }
  touchSession(id: string, now: number): void {
    this.s.touchSession.run(now, id);
  }
  deleteSession(id: string): void {
    this.s.deleteSession.run(id);
  }
  deleteUserSessions(userId: string): void {
    this.s.deleteUserSessions.run(userId);
  }
  deleteExpiredSessions(now: number, idleMs: number): number {
    return this.s.deleteExpiredSessions.run(now, now - idleMs).changes;
  }

  isTrustedAddress(userId: string, address: string): boolean {
    return this.s.isTrusted.get(userId, address) !== undefined;
  }
  /** Records a successful sign-in from `address`, keeping only the user's `keep` most recent addresses. */
  trustAddress(userId: string, address: string, now: number, keep: number): void {
    this.s.trust.run(userId, address, now);
    this.s.trimTrusted.run({ user_id: userId, keep });
  }
  trustedAddresses(userId: string): string[] {
    return (this.s.trustedAddresses.all(userId) as Array<{ address: string }>).map((row) => row.address);
  }
}
