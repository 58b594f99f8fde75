// After a restore the admin who ran it is told which credentials apply (the backup's accounts replaced this
// appliance's), and the first-admin file keeps only the credentials that still sign in.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

const PASSPHRASE = 'a passphrase for the new appliance';

t.test(
  'restored on a new appliance, the admin is told its password is now the backup one, and the dead first-admin file goes',
  async (t) => {
    const old = await startTestDaemon(t);
    const sealed = await injectClient(old.daemon, old.adminKey).post('/api/backup', { passphrase: PASSPHRASE });
    // The new appliance: its admin set a password of its own, then restores.
    const fresh = await startTestDaemon(t, { adminPassword: 'new-appliance-password' });
    const api = injectClient(fresh.daemon, fresh.adminKey);
    const file = path.join(fresh.stateDir, 'initial-admin.txt');
    t.ok(existsSync(file), 'control: the first-admin file is there');
    const res = await api.post('/api/restore', { backup: sealed.body, passphrase: PASSPHRASE });
    t.equal(res.status, 200, res.text);
    t.match(res.body.accounts, {
      yourAccount: null,
      admins: ['admin'],
      initialAdminFile: 'removed',
      message:
        /The backup's accounts replaced the ones on this appliance.*Your account "admin" is not in the backup.*sign in as "admin" with the password that account had when the backup was made/,
    });
    t.notOk(existsSync(file), 'its credentials sign in no more: the file is removed');
    const login = (password: string) =>
      injectClient(fresh.daemon).post('/api/auth/login', { username: 'admin', password });
    t.equal(
      (await login('new-appliance-password')).status,
      401,
      'the password just set no longer works, as the answer said',
    );
    t.equal((await login(old.adminPassword)).status, 200, "the backup's password does");
  },
);

t.test('restoring its own backup, the admin keeps its credentials, is told so, and the file stays', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const file = path.join(d.stateDir, 'initial-admin.txt');
  const before = readFileSync(file, 'utf8');
  const res = await api.post('/api/restore', { backup: (await api.get('/api/backup')).body });
  t.equal(res.status, 200, res.text);
  t.match(res.body.accounts, {
    yourAccount: { username: 'admin', password: 'unchanged', apiKey: 'unchanged' },
    initialAdminFile: 'kept',
    message: /Sign in again as "admin": your password is unchanged; your API key is unchanged/,
  });
  t.equal(readFileSync(file, 'utf8'), before);
});

t.test(
  'a backup sealed before a password change gives the old password back; the file keeps only what works',
  async (t) => {
    const d = await startTestDaemon(t);
    const api = injectClient(d.daemon, d.adminKey);
    const me = (await api.get('/api/users/me')).body as { id: string };
    // The backup holds the first password; the key is regenerated afterwards, so the file's key dies with the restore.
    const sealed = await api.post('/api/backup', { passphrase: PASSPHRASE });
    t.equal(
      (
        await api.put(`/api/users/${me.id}/password`, {
          newPassword: 'changed-password-2',
          currentPassword: d.adminPassword,
        })
      ).status,
      200,
    );
    const regenerated = await api.post(`/api/users/${me.id}/api-key`);
    const admin = injectClient(d.daemon, regenerated.body.apiKey as string);
    const res = await admin.post('/api/restore', { backup: sealed.body, passphrase: PASSPHRASE });
    t.equal(res.status, 200, res.text);
    t.match(res.body.accounts.yourAccount, { username: 'admin', password: 'backup', apiKey: 'backup' });
    t.match(
      res.body.accounts.message,
      /your password is the one "admin" had when the backup was made .*; the one you used until now no longer works/,
    );
    // The password left the file when it was changed; the key the file kept works again.
    t.equal(res.body.accounts.initialAdminFile, 'rewritten', 'the file keeps only the key, which works again');
    t.notMatch(readFileSync(path.join(d.stateDir, 'initial-admin.txt'), 'utf8'), /^password=/m, 'and no password');
  },
);

t.test('a first-admin file whose key died but whose password works is rewritten with the password alone', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const me = (await api.get('/api/users/me')).body as { id: string };
  const fresh = await api.post(`/api/users/${me.id}/api-key`);
  const admin = injectClient(d.daemon, fresh.body.apiKey as string);
  const res = await admin.post('/api/restore', { backup: (await admin.get('/api/backup')).body });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.accounts.initialAdminFile, 'rewritten');
  const text = readFileSync(path.join(d.stateDir, 'initial-admin.txt'), 'utf8');
  t.match(text, new RegExp(`^password=${d.adminPassword}$`, 'm'));
  t.notMatch(text, /apiKey=/, 'the dead key is gone from it');
});
