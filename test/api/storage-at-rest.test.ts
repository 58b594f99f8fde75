// Secrets at rest: the database and its WAL never hold a key, token or password in clear; key files are 0600.

import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import t from 'tap';
import { Daemon } from '../../daemon/app.js';
import { defaultConfig } from '../../daemon/config.js';
import { createLogger } from '../../daemon/log.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';

/** The raw bytes of azc.db and azc.db-wal, as one buffer per file that exists. */
function databaseFiles(stateDir: string): Array<{ name: string; bytes: Buffer }> {
  return ['azc.db', 'azc.db-wal']
    .map((name) => path.join(stateDir, name))
    .filter((file) => existsSync(file))
    .map((file) => ({ name: path.basename(file), bytes: readFileSync(file) }));
}

/** Which of `needles` occur in any of the files (as UTF-8 text). */
function foundIn(files: Array<{ bytes: Buffer }>, needles: string[]): string[] {
  return needles.filter((needle) => files.some((file) => file.bytes.includes(Buffer.from(needle, 'utf8'))));
}

function parseAdminFile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^\w+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

t.test('secrets in the database files', async (t) => {
  const d = await startTestDaemon(t, { adminPassword: 'chosen-admin-password-7' });
  const api = client(d.base, d.adminKey);
  const anon = client(d.base);
  const secrets: string[] = [d.adminKey, d.adminPassword];

  const users = [];
  for (const name of ['rest-alice', 'rest-bob', 'rest-carol']) {
    const user = await createUser(api, name, 'Operator');
    users.push(user);
    secrets.push(user.apiKey, user.password);
  }
  for (const user of users.slice(0, 2)) {
    const fresh = (await api.post(`/api/users/${user.id}/api-key`)).body.apiKey as string;
    secrets.push(fresh);
  }
  await api.put(`/api/users/${users[2]!.id}/password`, { newPassword: 'carol-second-password' });
  secrets.push('carol-second-password');
  for (const [username, password] of [
    ['admin', d.adminPassword],
    ['rest-alice', users[0]!.password],
    ['rest-carol', 'carol-second-password'],
  ]) {
    const res = await anon.post('/api/auth/login', { username, password });
    t.equal(res.status, 200, `control: ${username} logs in`);
    secrets.push(res.body.token);
  }
  // The hex body of each key and token alone must not appear either.
  const needles = [...secrets, ...secrets.filter((s) => /^s(vc|st)_/.test(s)).map((s) => s.slice(4))];

  t.test('the database and WAL hold no key, token or password before a checkpoint', async (t) => {
    const files = databaseFiles(d.stateDir);
    t.ok(
      files.some((f) => f.name === 'azc.db-wal' && f.bytes.length > 0),
      'the WAL has content',
    );
    t.same(
      foundIn(files, ['rest-alice', 'rest-carol']),
      ['rest-alice', 'rest-carol'],
      'control: plain user data is found by the scan',
    );
    t.same(foundIn(files, needles), []);
  });

  t.test('the database and WAL hold no key, token or password after a checkpoint', async (t) => {
    d.daemon.services.store.db.pragma('wal_checkpoint(TRUNCATE)');
    const files = databaseFiles(d.stateDir);
    t.same(
      foundIn(files, ['rest-alice', 'rest-carol']),
      ['rest-alice', 'rest-carol'],
      'control: plain user data is found by the scan',
    );
    t.same(foundIn(files, needles), []);
  });

  t.test('the device key file is mode 0600', async (t) => {
    const stat = statSync(path.join(d.stateDir, 'device.key'));
    t.equal(stat.mode & 0o777, 0o600);
    t.equal(stat.size, 32);
  });

  t.test('the initial admin file is mode 0600', async (t) => {
    t.equal(statSync(path.join(d.stateDir, 'initial-admin.txt')).mode & 0o777, 0o600);
  });

  t.test('the initial admin file holds the chosen admin password and the working admin key', async (t) => {
    const fields = parseAdminFile(readFileSync(path.join(d.stateDir, 'initial-admin.txt'), 'utf8'));
    t.same(fields, { username: 'admin', password: 'chosen-admin-password-7', apiKey: fields.apiKey });
    t.match(fields.apiKey, /^svc_[0-9a-f]{48}$/);
    t.equal((await anon.get('/api/users/me', { key: fields.apiKey })).body.username, 'admin');
  });

  t.test('the chosen admin password logs in', async (t) => {
    const res = await anon.post('/api/auth/login', { username: 'admin', password: 'chosen-admin-password-7' });
    t.equal(res.status, 200);
  });
});

t.test('without a chosen admin password a random one is generated and saved', async (t) => {
  const stateDir = tempDir();
  const logs: string[] = [];
  const config = {
    ...defaultConfig(),
    host: '127.0.0.1',
    port: 0,
    stateDir,
    exportDir: path.join(stateDir, 'exports'),
    logLevel: 'warn' as const,
  };
  const sink = new Writable({
    write: (chunk, _enc, done) => {
      logs.push(String(chunk));
      done();
    },
  });
  const daemon = new Daemon({
    config,
    logger: createLogger('warn', sink),
    driver: new SimulatedDriver({ applyDelayMs: 1 }),
  });
  t.teardown(async () => {
    await daemon.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const { port, initialAdmin } = await daemon.start(undefined);
  const fields = parseAdminFile(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'));
  t.equal(fields.password, initialAdmin?.password, 'the file holds the password that start() reported');
  t.ok((fields.password ?? '').length >= 16, 'the random password is long');
  const anon = client(`http://127.0.0.1:${port}`);
  t.equal((await anon.post('/api/auth/login', { username: 'admin', password: fields.password })).status, 200);
  t.equal(statSync(path.join(stateDir, 'initial-admin.txt')).mode & 0o777, 0o600);
  t.notOk(logs.join('').includes(fields.password!), 'the password is not logged');
});

t.test('a restart on the same state directory keeps keys working and creates no second admin', async (t) => {
  const first = await startTestDaemon(t);
  const user = await createUser(client(first.base, first.adminKey), 'survivor', 'Viewer');
  await first.stop();
  const adminFile = readFileSync(path.join(first.stateDir, 'initial-admin.txt'), 'utf8');
  const second = await startTestDaemon(t, { stateDir: first.stateDir, adminPassword: 'a-different-password' });
  const anon = client(second.base);
  t.equal(
    (await anon.get('/api/users/me', { key: user.apiKey })).body.username,
    'survivor',
    'the sealed key still matches',
  );
  t.equal(
    (await anon.get(`/api/users/${user.id}/api-key`, { key: first.adminKey })).body.apiKey,
    user.apiKey,
    'and still opens for an admin',
  );
  t.equal(
    readFileSync(path.join(first.stateDir, 'initial-admin.txt'), 'utf8'),
    adminFile,
    'the initial admin file is untouched',
  );
  t.equal(
    (await anon.post('/api/auth/login', { username: 'admin', password: 'a-different-password' })).status,
    401,
    'the new password option is ignored',
  );
});

// The suite's daemons hash with a cheaper scrypt (test/helpers/passwords.ts); a daemon left to its defaults must not.
t.test('a daemon with its default hasher stores passwords as scrypt at N=16384, r=8, p=1', async (t) => {
  const d = await startTestDaemon(t, { productionPasswords: true });
  const user = await createUser(client(d.base, d.adminKey), 'costly', 'Viewer');
  const users = new UsersRepo(d.daemon.services.store.db);
  for (const name of ['admin', 'costly'])
    t.match(users.byUsername(name)?.password_hash, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/, name);
  t.equal(
    (await client(d.base).post('/api/auth/login', { username: 'costly', password: user.password })).status,
    200,
    'and it verifies',
  );
});
