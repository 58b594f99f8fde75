// A restore trusts nothing it has not checked: sealed secrets with a hash at a cost azcd would not use, or one API key
// for two users, are refused with a 400 naming the field before any file is written (no copy of the database).

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { verifyPassword } from '../../daemon/domain/accounts/secrets.js';
import { sealSecrets } from '../../daemon/domain/backup/backup-crypto.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

const PASSPHRASE = 'a passphrase kept apart';
const salt = Buffer.alloc(16, 7).toString('base64url');
const digest = Buffer.alloc(32, 9).toString('base64url');

t.test('sealed secrets a restore would trust are checked before anything is written', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  t.equal(
    (await api.post('/api/users', { username: 'second', password: 'second-password', role: 'Admin' })).status,
    201,
  );
  const doc = (await api.get('/api/backup')).body as { users: Array<{ id: string; username: string }> };
  const [first, second] = doc.users;
  const key = `svc_${'cd'.repeat(24)}`;
  const copies = () =>
    existsSync(path.join(d.stateDir, 'backups')) ? readdirSync(path.join(d.stateDir, 'backups')) : [];
  const before = copies();

  const cases: Array<[string, object, string, RegExp]> = [
    [
      'two users with one API key',
      {
        users: [
          { id: first!.id, passwordHash: null, apiKey: key },
          { id: second!.id, passwordHash: null, apiKey: key },
        ],
      },
      'backup.secrets.users.1.apiKey',
      /same API key as entry 0/,
    ],
    [
      'a hash at N=3',
      { users: [{ id: first!.id, passwordHash: `scrypt$3$8$1$${salt}$${digest}`, apiKey: null }] },
      'backup.secrets.users.0.passwordHash',
      /cost N=3/,
    ],
    [
      'a hash at N=2^30',
      { users: [{ id: first!.id, passwordHash: `scrypt$1073741824$8$1$${salt}$${digest}`, apiKey: null }] },
      'backup.secrets.users.0.passwordHash',
      /cost N=1073741824/,
    ],
    [
      'a hash at p=400',
      { users: [{ id: first!.id, passwordHash: `scrypt$16384$8$400$${salt}$${digest}`, apiKey: null }] },
      'backup.secrets.users.0.passwordHash',
      /p=400/,
    ],
  ];
  for (const [what, plain, field, why] of cases) {
    const secrets = await sealSecrets(PASSPHRASE, JSON.stringify(plain), { N: 2 ** 14, r: 8, p: 1 });
    const res = await api.post('/api/restore', { backup: { ...doc, secrets }, passphrase: PASSPHRASE });
    t.equal(res.status, 400, `${what}: ${res.text.slice(0, 300)}`);
    t.match(res.body.errors?.[field], [why], `${what}: the field is named`);
  }
  t.same(copies(), before, 'no copy of the database was made for any of them');
  t.equal((await api.get('/api/users/me')).status, 200, 'nothing changed: the admin still signs in');
});

t.test('a stored hash at a cost azcd does not use is never handed to scrypt', async (t) => {
  // p=400 would hold a worker thread for most of a minute per attempt; N=3 makes scrypt throw.
  t.equal(await verifyPassword('anything', `scrypt$16384$8$400$${salt}$${digest}`), false);
  t.equal(await verifyPassword('anything', `scrypt$3$8$1$${salt}$${digest}`), false);
});
