// <stateDir>/initial-admin.txt keeps only what still signs in: after the first password is changed, and after a restore.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { UserRow } from '../../store/users-repo.js';
import { type DeviceSecrets, verifyPassword, writePrivateFile } from './secrets.js';

/** What became of the file. */
export type InitialAdminFileOutcome = 'kept' | 'rewritten' | 'removed' | 'absent';

/**
 * Keeps the file only for what still signs in: its password (checked against the enabled account of its username
 * among `users`) and its API key. Both work: kept; one: rewritten with that one and a note saying `why`; none:
 * removed. Called after a password change (the first password then no longer works and must not stay on disk, while
 * the key scripts and the README's tour read from there stays as long as it works) and after a restore.
 */
export async function reconcileInitialAdminFile(
  file: string,
  users: readonly UserRow[],
  secrets: DeviceSecrets,
  why: string,
  now: number,
): Promise<InitialAdminFileOutcome> {
  if (!existsSync(file)) return 'absent';
  const text = readFileSync(file, 'utf8');
  const field = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1];
  const username = field('username') ?? '';
  const password = field('password');
  const apiKey = field('apiKey');
  const user = users.find((u) => u.username.toLowerCase() === username.toLowerCase() && u.is_enabled === 1);
  const passwordWorks =
    user !== undefined && password !== undefined && (await verifyPassword(password, user.password_hash));
  const keyWorks =
    user !== undefined &&
    apiKey !== undefined &&
    user.key_digest !== null &&
    secrets.digest(apiKey).equals(user.key_digest);
  if (passwordWorks && keyWorks) return 'kept';
  if (!passwordWorks && !keyWorks) {
    rmSync(file, { force: true });
    return 'removed';
  }
  writePrivateFile(
    file,
    `# azcd first administrator; ${why} (${new Date(now).toISOString()}): only what still works is left.\n` +
      `username=${user!.username}\n${passwordWorks ? `password=${password}\n` : ''}${keyWorks ? `apiKey=${apiKey}\n` : ''}`,
  );
  return 'rewritten';
}
