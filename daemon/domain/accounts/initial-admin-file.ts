// <stateDir>/initial-admin.txt once its password was replaced: the password line goes, the API key line stays while that key works.
import { readFileSync, rmSync } from 'node:fs';
import type { UserRow } from '../../store/users-repo.js';
import { writePrivateFile, type DeviceSecrets } from './secrets.js';

/**
 * Called after `user`'s password changed. When the file is that account's (its `username=` line) and still holds a
 * password, the password no longer signs in and must not stay on disk: the file is rewritten with the API key alone
 * when that key still works (scripts and the README's tour read it from there), and removed otherwise.
 */
export function forgetInitialPassword(file: string, user: Readonly<UserRow>, secrets: DeviceSecrets, now: number): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const field = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1];
  if (field('password') === undefined || (field('username') ?? '').toLowerCase() !== user.username.toLowerCase()) return;
  const apiKey = field('apiKey');
  const keyWorks = apiKey !== undefined && user.key_digest !== null && secrets.digest(apiKey).equals(user.key_digest);
  if (!keyWorks) {
    rmSync(file, { force: true });
    return;
  }
  writePrivateFile(
    file,
    `# azcd first administrator; the password was changed (${new Date(now).toISOString()}): only the API key is kept.\n` +
      `username=${user.username}\napiKey=${apiKey}\n`,
  );
}
