// Account hardening: permissions re-checked after the password hash, the current password for self-service changes,
// the login lock that cannot be turned against the owner, and the first admin's generated password.

import { rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Daemon } from '../../daemon/app.js';
import { defaultConfig } from '../../daemon/config.js';
import {
  Authentication,
  type PasswordHasher,
  TRUSTED_ADDRESSES_PER_USER,
} from '../../daemon/domain/accounts/authentication.js';
import { DeviceSecrets } from '../../daemon/domain/accounts/secrets.js';
import { UserAdmin } from '../../daemon/domain/accounts/user-admin.js';
import type { Caller } from '../../daemon/domain/shared/access.js';
import { asHttpError } from '../../daemon/http/problem.js';
import { createLogger } from '../../daemon/log.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon, type TestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { TEST_PASSWORDS } from '../helpers/passwords.js';

/**
 * Holds the next password hash of `accounts` until released, so a test can change the caller's permissions
 * while its request sits inside scrypt. Later hashes pass straight through.
 */
function holdNextHash(accounts: Authentication) {
  const real: PasswordHasher = accounts.passwords;
  let entered!: () => void;
  let release!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  accounts.passwords = {
    verify: real.verify,
    hash: async (password) => {
      if (!held) {
        held = true;
        entered();
        await released;
      }
      return real.hash(password);
    },
  };
  return { inside, release, restore: () => (accounts.passwords = real) };
}

/** The status an HttpError carries, or the value a promise resolved with. */
function outcome<T>(promise: Promise<T>): Promise<T | number | unknown> {
  return promise.then(
    (value) => value,
    (err: unknown) => asHttpError(err)?.status ?? err,
  );
}

/** Services with their own login throttle and clock over the daemon's store, so addresses can be chosen. */
function services(d: TestDaemon, clock = { now: Date.now() }) {
  const { store, bus } = d.daemon.services;
  const { config } = d.daemon;
  const users = new UsersRepo(store.db);
  const secrets = DeviceSecrets.open(d.stateDir);
  const auth = new Authentication(store, users, secrets, bus, config, () => clock.now);
  auth.passwords = TEST_PASSWORDS;
  return {
    auth,
    admin: new UserAdmin(
      store,
      users,
      secrets,
      bus,
      auth,
      () => false,
      () => clock.now,
    ),
  };
}

/** The login side alone, for the tests of the lock. */
const service = (d: TestDaemon, clock?: { now: number }) => services(d, clock).auth;

function callerOf(accounts: Authentication, apiKey: string): Caller {
  const caller = accounts.authenticate({ source: 'x-api-key', value: apiKey });
  if (!caller) throw new Error('the key does not authenticate');
  return caller;
}

t.test('permissions are checked again after the password hash', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const anon = injectClient(d.daemon);
  const usernames = async () =>
    ((await api.get('/api/users')).body as Array<{ username: string }>).map((u) => u.username);

  t.test('an admin deleted while its new user is being hashed creates nobody: 401', async (t) => {
    const b = await createUser(api, 'admin-b-deleted', 'Admin');
    const hold = holdNextHash(d.daemon.services.authentication);
    t.teardown(hold.restore);
    const pending = anon.post(
      '/api/users',
      { username: 'made-by-deleted', password: 'made-password', role: 'Admin' },
      { key: b.apiKey },
    );
    await hold.inside;
    t.equal((await api.del(`/api/users/${b.id}`)).status, 204);
    hold.release();
    t.equal((await pending).status, 401);
    t.notOk((await usernames()).includes('made-by-deleted'), 'no user was created');
  });

  t.test('an admin demoted while its new user is being hashed creates nobody: 403', async (t) => {
    const b = await createUser(api, 'admin-b-demoted', 'Admin');
    const hold = holdNextHash(d.daemon.services.authentication);
    t.teardown(hold.restore);
    const pending = anon.post(
      '/api/users',
      { username: 'made-by-demoted', password: 'made-password', role: 'Admin' },
      { key: b.apiKey },
    );
    await hold.inside;
    t.equal((await api.put(`/api/users/${b.id}`, { role: 'Operator' })).status, 200);
    hold.release();
    const res = await pending;
    t.equal(res.status, 403);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.notOk((await usernames()).includes('made-by-demoted'), 'no user was created');
  });

  t.test("an admin demoted while resetting another user's password changes nothing: 403", async (t) => {
    const b = await createUser(api, 'admin-b-reset', 'Admin');
    const c = await createUser(api, 'reset-target', 'Viewer');
    const hold = holdNextHash(d.daemon.services.authentication);
    t.teardown(hold.restore);
    const pending = anon.put(`/api/users/${c.id}/password`, { newPassword: 'taken-over-password' }, { key: b.apiKey });
    await hold.inside;
    t.equal((await api.put(`/api/users/${b.id}`, { role: 'Viewer' })).status, 200);
    hold.release();
    t.equal((await pending).status, 403);
    t.equal(
      (await anon.post('/api/auth/login', { username: 'reset-target', password: c.password })).status,
      200,
      'the old password still works',
    );
  });

  t.test('a user disabled while changing its own password changes nothing: 401', async (t) => {
    const u = await createUser(api, 'self-disabled', 'Operator');
    const hold = holdNextHash(d.daemon.services.authentication);
    t.teardown(hold.restore);
    const pending = anon.put(
      `/api/users/${u.id}/password`,
      { currentPassword: u.password, newPassword: 'while-disabled-pw' },
      { key: u.apiKey },
    );
    await hold.inside;
    t.equal((await api.put(`/api/users/${u.id}`, { isEnabled: false })).status, 200);
    hold.release();
    t.equal((await pending).status, 401);
    await api.put(`/api/users/${u.id}`, { isEnabled: true });
    t.equal(
      (await anon.post('/api/auth/login', { username: 'self-disabled', password: u.password })).status,
      200,
      'the old password still works',
    );
  });
});

t.test('changing a password', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const anon = injectClient(d.daemon);
  const login = (username: string, password: string) =>
    anon.post('/api/auth/login', { username, password }).then((res) => res.status);

  t.test(
    'a user changing its own password without currentPassword gets a 403 problem and keeps its password',
    async (t) => {
      const u = await createUser(api, 'no-current', 'Viewer');
      const res = await anon.put(
        `/api/users/${u.id}/password`,
        { newPassword: 'stolen-session-pw' },
        { key: u.apiKey },
      );
      t.equal(res.status, 403);
      t.match(res.headers.get('content-type'), /^application\/problem\+json/);
      t.match(res.body.detail, /currentPassword/);
      t.equal(await login('no-current', u.password), 200);
      t.equal(await login('no-current', 'stolen-session-pw'), 401);
    },
  );

  t.test(
    'a user changing its own password with a wrong currentPassword gets a 403 problem and keeps its password',
    async (t) => {
      const u = await createUser(api, 'wrong-current', 'Operator');
      const res = await anon.put(
        `/api/users/${u.id}/password`,
        { currentPassword: 'not-my-password', newPassword: 'stolen-session-pw' },
        { key: u.apiKey },
      );
      t.equal(res.status, 403);
      t.match(res.body.detail, /currentPassword/);
      t.notOk(res.text.includes('not-my-password'), 'the wrong password is not echoed');
      t.equal(await login('wrong-current', u.password), 200);
    },
  );

  t.test('a user signed in with a session changes its own password with the right currentPassword', async (t) => {
    const u = await createUser(api, 'right-current', 'Viewer');
    const token = (await anon.post('/api/auth/login', { username: 'right-current', password: u.password })).body
      .token as string;
    const res = await anon.put(
      `/api/users/${u.id}/password`,
      { currentPassword: u.password, newPassword: 'right-new-password' },
      { token },
    );
    t.equal(res.status, 200);
    t.equal(await login('right-current', 'right-new-password'), 200);
    t.equal(await login('right-current', u.password), 401);
  });

  t.test('an admin changing its own password needs currentPassword too', async (t) => {
    const admin = await createUser(api, 'second-admin', 'Admin');
    const own = injectClient(d.daemon, admin.apiKey);
    t.equal(
      (await own.put(`/api/users/${admin.id}/password`, { newPassword: 'admin-new-password' })).status,
      403,
      'without it',
    );
    t.equal(
      (
        await own.put(`/api/users/${admin.id}/password`, {
          currentPassword: 'wrong-password!',
          newPassword: 'admin-new-password',
        })
      ).status,
      403,
      'wrong',
    );
    t.equal(await login('second-admin', admin.password), 200, 'unchanged so far');
    t.equal(
      (
        await own.put(`/api/users/${admin.id}/password`, {
          currentPassword: admin.password,
          newPassword: 'admin-new-password',
        })
      ).status,
      200,
    );
    t.equal(await login('second-admin', 'admin-new-password'), 200);
  });

  t.test("an admin resets another user's password without knowing it", async (t) => {
    const u = await createUser(api, 'forgot-it', 'Viewer');
    t.equal((await api.put(`/api/users/${u.id}/password`, { newPassword: 'reset-by-admin' })).status, 200);
    t.equal(await login('forgot-it', 'reset-by-admin'), 200);
  });

  t.test('a wrong currentPassword counts as a failed login of that user', async (t) => {
    const clock = { now: Date.now() };
    const { auth: accounts, admin } = services(d, clock);
    const u = await createUser(api, 'oracle-target', 'Viewer');
    const caller = callerOf(accounts, u.apiKey);
    const change = (currentPassword: string) =>
      outcome(
        admin.changePassword(
          caller,
          u.id,
          { currentPassword, newPassword: 'oracle-new-pw' },
          { address: '192.0.2.60', recheck: () => caller },
        ),
      );
    for (let i = 0; i < 5; i++) t.equal(await change(`guess-${i}-password`), 403);
    t.equal(await change(u.password), 429, 'the next check, even with the right password, waits');
    t.equal(
      await outcome(accounts.login('oracle-target', u.password, '198.51.100.60')),
      429,
      'and so does a login of that user from elsewhere',
    );
    clock.now += d.daemon.config.loginBaseDelayMs;
    t.equal(await change(u.password), undefined, 'once the back-off has passed the right password works');
  });
});

t.test('the login lock', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const owner = await createUser(api, 'owner', 'Admin');
  const status = (accounts: Authentication, username: string, password: string, address: string) =>
    outcome(accounts.login(username, password, address).then(() => 200));

  t.test('five failures lock a username for any other address', async (t) => {
    const accounts = service(d);
    const victim = await createUser(api, 'locked-victim', 'Viewer');
    for (let i = 0; i < 5; i++) t.equal(await status(accounts, 'locked-victim', `guess-${i}-pw`, '192.0.2.1'), 401);
    t.equal(await status(accounts, 'LOCKED-VICTIM', victim.password, '198.51.100.1'), 429);
  });

  t.test(
    'the owner still signs in from an address it signed in from before while its name is locked for others',
    async (t) => {
      const accounts = service(d);
      t.equal(await status(accounts, 'owner', owner.password, '203.0.113.5'), 200, 'the owner signs in from home');
      for (let i = 0; i < 5; i++) t.equal(await status(accounts, 'owner', `guess-${i}-pw`, '192.0.2.2'), 401);
      t.equal(
        await status(accounts, 'owner', owner.password, '198.51.100.2'),
        429,
        'the name is locked for an unknown address',
      );
      t.equal(await status(accounts, 'owner', owner.password, '203.0.113.5'), 200, 'but not for the known one');
      t.equal(await status(accounts, 'owner', owner.password, '::ffff:203.0.113.5'), 200, 'in any spelling');
    },
  );

  t.test('the owner still signs in from loopback while its name is locked for others', async (t) => {
    const accounts = service(d);
    for (let i = 0; i < 5; i++) t.equal(await status(accounts, 'owner', `guess-${i}-pw`, '192.0.2.3'), 401);
    t.equal(await status(accounts, 'owner', owner.password, '198.51.100.3'), 429, 'control: locked for others');
    t.equal(await status(accounts, 'owner', owner.password, '127.0.0.1'), 200);
    t.equal(await status(accounts, 'owner', owner.password, '::1'), 200);
  });

  t.test('known addresses survive a restart (they are stored)', async (t) => {
    const first = service(d);
    t.equal(await status(first, 'owner', owner.password, '203.0.113.7'), 200);
    const second = service(d);
    for (let i = 0; i < 5; i++) t.equal(await status(second, 'owner', `guess-${i}-pw`, '192.0.2.4'), 401);
    t.equal(await status(second, 'owner', owner.password, '203.0.113.7'), 200);
  });

  t.test('an address known for one user does not unlock another user', async (t) => {
    const accounts = service(d);
    const other = await createUser(api, 'other-user', 'Viewer');
    t.equal(await status(accounts, 'owner', owner.password, '203.0.113.8'), 200);
    for (let i = 0; i < 5; i++) t.equal(await status(accounts, 'other-user', `guess-${i}-pw`, '192.0.2.5'), 401);
    t.equal(await status(accounts, 'other-user', other.password, '203.0.113.8'), 429);
  });

  t.test(`only the last ${TRUSTED_ADDRESSES_PER_USER} addresses are remembered`, async (t) => {
    const clock = { now: Date.now() };
    const accounts = service(d, clock);
    const roamer = await createUser(api, 'roamer', 'Viewer');
    for (let i = 0; i <= TRUSTED_ADDRESSES_PER_USER; i++) {
      clock.now += 1000;
      t.equal(await status(accounts, 'roamer', roamer.password, `203.0.113.${100 + i}`), 200);
    }
    const repo = new UsersRepo(d.daemon.services.store.db);
    const kept = repo.trustedAddresses(roamer.id);
    t.equal(kept.length, TRUSTED_ADDRESSES_PER_USER);
    t.notOk(kept.includes('203.0.113.100'), 'the oldest was dropped');
    for (let i = 0; i < 5; i++) t.equal(await status(accounts, 'roamer', `guess-${i}-pw`, '192.0.2.6'), 401);
    t.equal(
      await status(accounts, 'roamer', roamer.password, '203.0.113.100'),
      429,
      'so it is locked out like any other',
    );
    t.equal(await status(accounts, 'roamer', roamer.password, '203.0.113.101'), 200, 'the newer ones are not');
  });

  t.test('the address limit holds back a known address too', async (t) => {
    const accounts = service(d);
    t.equal(await status(accounts, 'owner', owner.password, '203.0.113.9'), 200);
    for (let i = 0; i < 5; i++) t.equal(await status(accounts, `nobody${i}`, 'wrong-password', '203.0.113.9'), 401);
    t.equal(await status(accounts, 'owner', owner.password, '203.0.113.9'), 429);
  });

  t.test("a success clears the username's count but not the address's", async (t) => {
    const accounts = service(d);
    const user = await createUser(api, 'sprayed-user', 'Viewer');
    for (let i = 0; i < 4; i++) t.equal(await status(accounts, 'sprayed-user', 'wrong-password', '192.0.2.7'), 401);
    t.equal(await status(accounts, 'sprayed-user', user.password, '192.0.2.8'), 200);
    for (let i = 0; i < 4; i++) t.equal(await status(accounts, 'sprayed-user', 'wrong-password', '192.0.2.9'), 401);
    t.equal(
      await status(accounts, 'sprayed-user', user.password, '192.0.2.10'),
      200,
      'the username count started again',
    );
    t.equal(
      await status(accounts, 'someone-else', 'wrong-password', '192.0.2.7'),
      401,
      'the fifth failure of the first address',
    );
    t.equal(await status(accounts, 'sprayed-user', user.password, '192.0.2.7'), 429, 'its count was kept');
  });

  t.test('a login does not store loopback as a known address', async (t) => {
    const accounts = service(d);
    t.equal(await status(accounts, 'owner', owner.password, '127.0.0.1'), 200);
    t.notOk(new UsersRepo(d.daemon.services.store.db).trustedAddresses(owner.id).includes('127.0.0.1'));
  });
});

t.test('the first admin and its generated password', async (t) => {
  t.test('with a generated password the first admin is asked to replace it, until it does', async (t) => {
    const stateDir = tempDir();
    const config = {
      ...defaultConfig(),
      host: '127.0.0.1',
      port: 0,
      stateDir,
      exportDir: path.join(stateDir, 'exports'),
      logLevel: 'silent' as const,
    };
    const start = async () => {
      const daemon = new Daemon({
        config,
        logger: createLogger('silent'),
        driver: new SimulatedDriver({ applyDelayMs: 1 }),
        passwordHasher: TEST_PASSWORDS,
      });
      const started = await daemon.start(undefined);
      return { daemon, ...started, base: `http://127.0.0.1:${started.port}` };
    };
    let running = await start();
    t.teardown(async () => {
      await running.daemon.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });
    const admin = running.initialAdmin!;
    const me = async () => (await injectClient(running.daemon, admin.apiKey).get('/api/users/me')).body;
    t.equal((await me()).passwordChangeRequired, true, 'GET /api/users/me says so');
    const login = await injectClient(running.daemon).post('/api/auth/login', {
      username: 'admin',
      password: admin.password,
    });
    t.equal(login.body.user.passwordChangeRequired, true, 'and so does the login answer');
    const other = await createUser(injectClient(running.daemon, admin.apiKey), 'not-first', 'Admin');
    t.equal(
      (await injectClient(running.daemon, other.apiKey).get('/api/users/me')).body.passwordChangeRequired,
      false,
      'other users are not asked',
    );

    await running.daemon.stop();
    running = await start();
    t.equal((await me()).passwordChangeRequired, true, 'it is stored: still asked after a restart');

    const api = injectClient(running.daemon, admin.apiKey);
    t.equal(
      (
        await api.put(`/api/users/${(await me()).id}/password`, {
          currentPassword: admin.password,
          newPassword: 'my-own-choice-1',
        })
      ).status,
      200,
    );
    t.equal((await me()).passwordChangeRequired, false, 'no longer once the password was changed');
    const listed = (
      (await api.get('/api/users')).body as Array<{ username: string; passwordChangeRequired: boolean }>
    ).find((u) => u.username === 'admin');
    t.equal(listed?.passwordChangeRequired, false, 'in the user list too');
  });

  t.test(
    'a session may replace the generated password without retyping it; a key may not, nor anyone afterwards',
    async (t) => {
      const stateDir = tempDir();
      const config = {
        ...defaultConfig(),
        host: '127.0.0.1',
        port: 0,
        stateDir,
        exportDir: path.join(stateDir, 'exports'),
        logLevel: 'silent' as const,
      };
      const daemon = new Daemon({
        config,
        logger: createLogger('silent'),
        driver: new SimulatedDriver({ applyDelayMs: 1 }),
        passwordHasher: TEST_PASSWORDS,
      });
      const admin = (await daemon.start(undefined)).initialAdmin!;
      t.teardown(async () => {
        await daemon.stop();
        rmSync(stateDir, { recursive: true, force: true });
      });
      const anon = injectClient(daemon);
      const id = (await injectClient(daemon, admin.apiKey).get('/api/users/me')).body.id as string;
      const byKey = await injectClient(daemon, admin.apiKey).put(`/api/users/${id}/password`, {
        newPassword: 'taken-with-a-key',
      });
      t.equal(byKey.status, 403, 'an API key still needs the current password');
      const token = (await anon.post('/api/auth/login', { username: 'admin', password: admin.password })).body
        .token as string;
      t.equal(
        (await anon.put(`/api/users/${id}/password`, { newPassword: 'my-own-choice-2' }, { token })).status,
        200,
        'the session signed in with it',
      );
      t.equal(
        (await anon.post('/api/auth/login', { username: 'admin', password: 'my-own-choice-2' })).status,
        200,
        'the new password works',
      );
      const again = (await anon.post('/api/auth/login', { username: 'admin', password: 'my-own-choice-2' })).body
        .token as string;
      const chosen = await anon.put(`/api/users/${id}/password`, { newPassword: 'my-third-choice' }, { token: again });
      t.equal(chosen.status, 403, 'a password the owner chose needs retyping again');
      t.match(chosen.body.detail, /currentPassword/);
    },
  );

  t.test('with a chosen password the first admin is not asked to replace it', async (t) => {
    const d = await startTestDaemon(t, { adminPassword: 'chosen-by-owner-1' });
    const me = (await injectClient(d.daemon, d.adminKey).get('/api/users/me')).body;
    t.equal(me.passwordChangeRequired, false);
  });

  t.test('the OpenAPI User schema documents passwordChangeRequired', async (t) => {
    const d = await startTestDaemon(t);
    const doc = (await injectClient(d.daemon).get('/api/openapi.json')).body;
    const found: unknown[] = [];
    JSON.stringify(doc, (key, value) => {
      if (key === 'passwordChangeRequired') found.push(value);
      return value;
    });
    t.ok(found.length > 0, 'the field is documented');
    for (const schema of found) t.match(schema, { type: 'boolean', description: /generated password/ });
  });
});
