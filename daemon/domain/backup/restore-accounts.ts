// After a restore, the admin who ran it is told which credentials now apply (the backup's accounts replaced this
// appliance's); the first-admin file is kept only for what still works (accounts' reconcileInitialAdminFile).
import type { UserRow } from '../../store/users-repo.js';
import type { InitialAdminFileOutcome } from '../accounts/index.js';
import type { Caller } from '../shared/index.js';

/** Where a credential of the restoring admin's account comes from after the restore. */
export type CredentialSource = 'unchanged' | 'backup' | 'none' | 'new';

export interface AccountsAfterRestore {
  /** In plain words: whose accounts apply now and how to sign in. */
  message: string;
  /** The restoring admin's account, as the backup left it; null when the backup does not hold it (it is gone). */
  yourAccount: { username: string; password: CredentialSource; apiKey: CredentialSource } | null;
  /** Enabled Admins of the restored configuration who can sign in. */
  admins: string[];
  /** What became of <stateDir>/initial-admin.txt: kept (its credentials work), rewritten (only those that do), removed. */
  initialAdminFile: InitialAdminFileOutcome;
}

type Material = Pick<UserRow, 'password_hash' | 'key_digest'>;
const same = (a: Buffer | Uint8Array | null, b: Buffer | Uint8Array | null) =>
  a === null || b === null ? a === b : Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/**
 * The restoring admin's account after the restore: `before` is its key material before, `after` the restored users
 * (with theirs), `withoutPassword` the users the restore left without one, `usable` the enabled Admins one can sign in as.
 */
export function accountsAfterRestore(
  caller: Caller,
  before: Material | undefined,
  after: readonly UserRow[],
  admins: string[],
  backupCreatedAt: string,
): Omit<AccountsAfterRestore, 'initialAdminFile'> {
  const mine = after.find((u) => u.id === caller.userId);
  const replaced = `The backup's accounts replaced the ones on this appliance; every session ended.`;
  if (!mine) {
    return {
      message: `${replaced} Your account "${caller.username}" is not in the backup and is gone: sign in as ${admins.map((a) => `"${a}"`).join(' or ')} with the password that account had when the backup was made (${backupCreatedAt}).`,
      yourAccount: null,
      admins,
    };
  }
  const password: CredentialSource = mine.password_hash.startsWith('scrypt$')
    ? before && mine.password_hash === before.password_hash
      ? 'unchanged'
      : 'backup'
    : 'none';
  const apiKey: CredentialSource =
    mine.key_digest === null ? 'none' : before && same(mine.key_digest, before.key_digest) ? 'unchanged' : 'backup';
  const words: Record<CredentialSource, string> = {
    unchanged: 'is unchanged',
    backup: `is the one "${mine.username}" had when the backup was made (${backupCreatedAt}); the one you used until now no longer works`,
    none: 'is not set: an admin sets one (PUT /api/users/{id}/password)',
    new: 'is new',
  };
  return {
    message: `${replaced} Sign in again as "${mine.username}": your password ${words[password]}; your API key ${words[apiKey]}.`,
    yourAccount: { username: mine.username, password, apiKey },
    admins,
  };
}
