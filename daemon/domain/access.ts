// Who is calling and what they may see: roles and assignment lists, evaluated from current state.

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

export type CredentialRef = { kind: 'apiKey' } | { kind: 'session'; sessionId: string };

export interface Caller {
  userId: string;
  username: string;
  role: Role;
  playerIds: ReadonlySet<string>;
  zoneIds: ReadonlySet<string>;
  credential: CredentialRef;
}

export const isAdmin = (caller: Caller): boolean => caller.role === 'Admin';
export const canSeePlayer = (caller: Caller, playerId: string): boolean =>
  caller.role === 'Admin' || caller.playerIds.has(playerId);
export const canSeeZone = (caller: Caller, zoneId: string): boolean =>
  caller.role === 'Admin' || caller.zoneIds.has(zoneId);
