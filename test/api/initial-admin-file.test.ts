// <stateDir>/initial-admin.txt after the first administrator replaced the generated password: the password is gone
// from the disk, the API key line stays while that key works.

import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWithGeneratedAdmin } from '../browser/first-start.js';
import { client } from '../helpers/client.js';

/** Signs in as `admin` with the generated password and replaces it, as the dashboard's forced change does. */
async function forcedChange(base: string, password: string): Promise<void> {
  const anon = client(base);
  const login = await anon.post('/api/auth/login', { username: 'admin', password });
  if (login.status !== 200) throw new Error(`signing in failed: ${login.status} ${login.text}`);
  const { token, user } = login.body;
  const changed = await anon.put(`/api/users/${user.id}/password`, { newPassword: 'a-password-of-my-own' }, { token });
  if (changed.status !== 200) throw new Error(`the password change failed: ${changed.status} ${changed.text}`);
}

t.test(
  'the forced password change removes the password from initial-admin.txt and keeps the working API key',
  async (t) => {
    const first = await startWithGeneratedAdmin(t);
    const file = path.join(first.stateDir, 'initial-admin.txt');
    t.match(
      readFileSync(file, 'utf8'),
      `password=${first.password}\n`,
      'the file holds the generated password at first',
    );

    await forcedChange(first.base, first.password);
    const text = readFileSync(file, 'utf8');
    t.notMatch(text, first.password, 'the old password is no longer in the file');
    t.notMatch(text, /^password=/m, 'nor any password line');
    t.match(text, /^username=admin$/m);
    t.match(text, `\napiKey=${first.adminKey}\n`, 'the API key line stays');
    t.equal(statSync(file).mode & 0o777, 0o600, 'the file stays private');
    t.equal(
      (await client(first.base, first.adminKey).get('/api/users/me')).status,
      200,
      'the key it keeps still signs in',
    );
  },
);

t.test('when the first API key was revoked before the forced change, the file goes altogether', async (t) => {
  const first = await startWithGeneratedAdmin(t);
  const file = path.join(first.stateDir, 'initial-admin.txt');
  const admin = client(first.base, first.adminKey);
  const me = (await admin.get('/api/users/me')).body;
  // Another admin revokes it: the first key cannot revoke itself and then go on.
  const other = await admin.post('/api/users', {
    username: 'second-admin',
    password: 'second-admin-pass',
    role: 'Admin',
  });
  t.equal(
    (await client(first.base, other.body.apiKey).del(`/api/users/${me.id}/api-key`)).status,
    204,
    'the first key is revoked',
  );

  await forcedChange(first.base, first.password);
  t.notOk(existsSync(file), 'nothing in the file works any more: it is removed');
});
