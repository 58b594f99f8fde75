// Who is calling: roles, credentials and assignment lists, evaluated from current state (policy.ts decides with them).

export const ROLES = ['Admin', 'Operator', 'Viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Accepts any letter case (`admin`, `OPERATOR`); returns the canonical spelling or undefined. */
export function parseRole(value: string): Role | undefined {
  const lower = value.toLowerCase();
  return ROLES.find((role) => role.toLowerCase() === lower);
}

/** A credential as presented, whichever way the front door received it. */
export interface Credential {
  source: 'x-api-key' | 'bearer' | 'query';
  value: string;
}

/**
 * Which credential a caller used, by a reference that is no secret: the key's keyed digest (hex, as stored) or
 * the session's id. Enough to notice later that the credential was revoked, useless for signing in.
 */
export type CredentialRef =
  | { kind: 'apiKey'; keyDigest: string }
  | { kind: 'session'; sessionId: string }
  /** An in-process front door acting as a named user without a credential (the MQTT bridge's --mqtt-account). */
  | { kind: 'account' };

export interface Caller {
  userId: string;
  username: string;
  role: Role;
  playerIds: ReadonlySet<string>;
  zoneIds: ReadonlySet<string>;
  credential: CredentialRef;
}

export const isAdmin = (caller: Caller): boolean => caller.role === 'Admin';

/** Whether a username names an enabled user, a disabled one or nobody (the MQTT bridge reports which). */
export type AccountState = 'enabled' | 'disabled' | 'missing';
