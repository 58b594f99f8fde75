// One user account as the API shows it, and the rules its username, password and assignments must meet.
import type { Assignments, UserRow } from '../../store/users-repo.js';
import type { Role } from '../shared/index.js';
import { invalid } from '../shared/index.js';
import { type DeviceSecrets, maskApiKey } from './secrets.js';

export interface UserView {
  id: string;
  username: string;
  role: Role;
  /** Masked key; an empty string once the key was revoked (the API types it as a string). */
  apiKey: string;
  isEnabled: boolean;
  createdAt: string;
  assignments: Assignments;
  /** True while the account still has the generated password of the first start; clients should ask for a new one. */
  passwordChangeRequired: boolean;
}

import { USERNAME_RE } from '../../names.js';

export { USERNAME_RE };

export function userView(row: UserRow, assignments: Assignments, secrets: DeviceSecrets): UserView {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    apiKey: openApiKey(row, secrets, true) ?? '',
    isEnabled: row.is_enabled === 1,
    createdAt: row.created_at,
    assignments,
    passwordChangeRequired: row.password_change_required === 1,
  };
}

/** The user's API key, in full or masked; null once it was revoked (or its box no longer opens). */
export function openApiKey(row: UserRow, secrets: DeviceSecrets, masked: boolean): string | null {
  if (!row.key_box || !row.key_nonce) return null;
  const key = secrets.open({ box: row.key_box, nonce: row.key_nonce });
  if (!key) return null;
  return masked ? maskApiKey(key) : key;
}

export function validateUsername(username: string): void {
  if (!USERNAME_RE.test(username)) {
    throw invalid(
      `"username" must be 3 to 64 characters of A-Z a-z 0-9 . _ -, got ${JSON.stringify(username).slice(0, 80)}`,
      {
        username: ['must be 3 to 64 characters of A-Z a-z 0-9 . _ -'],
      },
    );
  }
}

export function validatePassword(password: string, field: string): void {
  const length = [...password].length;
  if (length < 8 || length > 256) {
    throw invalid(`"${field}" must be 8 to 256 characters, got ${length}`, {
      [field]: ['must be 8 to 256 characters'],
    });
  }
}

/**
 * Assignment lists as stored: without repeats (ids arrive in their canonical form, daemon/ids.ts). Unknown ids are
 * refused with one message per list (`exists` says whether a player or zone id is known).
 */
export function checkAssignments(
  assignments: Assignments,
  exists: (kind: 'player' | 'zone', id: string) => boolean,
): Assignments {
  const playerIds = [...new Set(assignments.playerIds)];
  const zoneIds = [...new Set(assignments.zoneIds)];
  const unknownPlayers = playerIds.filter((id) => !exists('player', id));
  const unknownZones = zoneIds.filter((id) => !exists('zone', id));
  if (unknownPlayers.length || unknownZones.length) {
    const errors: Record<string, string[]> = {};
    if (unknownPlayers.length) errors.playerIds = [`unknown player ids: ${unknownPlayers.join(', ')}`];
    if (unknownZones.length) errors.zoneIds = [`unknown zone ids: ${unknownZones.join(', ')}`];
    throw invalid(Object.values(errors).flat().join('; '), errors);
  }
  return { playerIds, zoneIds };
}
