// Authentication from outside: the three credential forms, precedence, sessions, expiry, throttling, live permissions.

import http from 'node:http';
import t from 'tap';
import { Authentication } from '../../daemon/domain/accounts/authentication.js';
import { DeviceSecrets, hashPassword } from '../../daemon/domain/accounts/secrets.js';
import { asHttpError } from '../../daemon/http/problem.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient, type Reply } from '../helpers/inject.js';
import { TEST_PASSWORDS } from '../helpers/passwords.js';

const HOUR = 3600_000;

/**
 * POSTs a login from a chosen loopback source address (127.0.0.0/8), so per-address throttling can be probed.
 * Every such address is loopback, which the username lock does not hold back; the service-level tests below
 * inject other addresses.
 */
function loginFrom(
  base: string,
  localAddress: string,
  username: string,
  password: string,
  extraHeaders: Record<string, string> = {},
): Promise<Reply> {
  const url = new URL(base);
  const body = JSON.stringify({ username, password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: Number(url.port),
        path: '/api/auth/login',
        method: 'POST',
        localAddress,
        agent: false,
        headers: { ...extraHeaders, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (typeof value === 'string') headers.set(name, value);
          resolve({ status: res.statusCode ?? 0, headers, text, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

t.test('authentication', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const anon = injectClient(d.daemon);
  const db = d.daemon.services.store.db;
  const login = async (username: string, password: string): Promise<string> => {
    const res = await anon.post('/api/auth/login', { username, password });
    if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
    return res.body.token as string;
  };
  const me = (options: Parameters<typeof anon.get>[1]) => anon.get('/api/users/me', options);
  const disable = (id: string, isEnabled: boolean) => api.put(`/api/users/${id}`, { isEnabled });
  const seen: string[] = [d.adminKey, d.adminPassword];

  t.test('an API key in X-API-Key authenticates as its user', async (t) => {
    const res = await me({ headers: { 'X-API-Key': d.adminKey } });
    t.equal(res.status, 200);
    t.equal(res.body.username, 'admin');
  });

  t.test('an API key as a Bearer token authenticates as its user', async (t) => {
    const res = await me({ headers: { Authorization: `Bearer ${d.adminKey}` } });
    t.equal(res.status, 200);
    t.equal(res.body.username, 'admin');
  });

  t.test('an API key in ?apiKey= authenticates as its user, percent-encoding decoded', async (t) => {
    const encoded = [...d.adminKey].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const withQuery = await anon.get(`/api/users/me?apiKey=${encoded}`);
    t.equal(withQuery.status, 200);
    t.equal(withQuery.body.username, 'admin');
  });

  t.test('a session token as a Bearer token authenticates as its user', async (t) => {
    const token = await login('admin', d.adminPassword);
    seen.push(token);
    const res = await me({ token });
    t.equal(res.status, 200);
    t.equal(res.body.username, 'admin');
  });

  // The code accepts session tokens only in Authorization: Bearer (docs/api.md lists them only there).
  t.test('a session token in X-API-Key is rejected with 401', async (t) => {
    const token = await login('admin', d.adminPassword);
    seen.push(token);
    t.equal((await me({ token })).status, 200, 'control: the token is valid');
    t.equal((await me({ headers: { 'X-API-Key': token } })).status, 401);
  });

  t.test('a session token in ?apiKey= is rejected with 401', async (t) => {
    const token = await login('admin', d.adminPassword);
    seen.push(token);
    t.equal((await anon.get(`/api/users/me?apiKey=${encodeURIComponent(token)}`)).status, 401);
  });

  t.test('an invalid X-API-Key is 401 even when a valid Bearer credential is also sent', async (t) => {
    const res = await me({ headers: { 'X-API-Key': `svc_${'0'.repeat(48)}`, Authorization: `Bearer ${d.adminKey}` } });
    t.equal(res.status, 401);
  });

  t.test('an invalid Bearer credential is 401 even when a valid ?apiKey= is also sent', async (t) => {
    const res = await anon.get(`/api/users/me?apiKey=${d.adminKey}`, {
      headers: { Authorization: 'Bearer sst_not-a-session' },
    });
    t.equal(res.status, 401);
  });

  t.test('a malformed Authorization header is 401 even when a valid ?apiKey= is also sent', async (t) => {
    const res = await anon.get(`/api/users/me?apiKey=${d.adminKey}`, {
      headers: { Authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` },
    });
    t.equal(res.status, 401);
    t.match(res.body.detail, /Bearer/);
  });

  t.test('a valid X-API-Key is used even when an invalid Bearer credential follows', async (t) => {
    const res = await me({ headers: { 'X-API-Key': d.adminKey, Authorization: 'Bearer nonsense' } });
    t.equal(res.status, 200);
  });

  t.test('a request without a credential is a 401 problem with WWW-Authenticate: Bearer', async (t) => {
    const res = await anon.get('/api/users/me');
    t.equal(res.status, 401);
    t.match(res.headers.get('www-authenticate'), /^Bearer\b/);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.match(res.body, { type: String, title: 'Unauthorized', status: 401, detail: String, instance: '/api/users/me' });
  });

  t.test('an unknown key of the right format is a 401 with WWW-Authenticate: Bearer', async (t) => {
    const res = await me({ headers: { 'X-API-Key': `svc_${'f'.repeat(48)}` } });
    t.equal(res.status, 401);
    t.match(res.headers.get('www-authenticate'), /^Bearer\b/);
  });

  t.test('a rejected credential is never echoed in the response', async (t) => {
    const wrong = `svc_${'ab'.repeat(24)}`;
    for (const res of [
      await me({ headers: { 'X-API-Key': wrong } }),
      await me({ headers: { Authorization: `Bearer ${wrong}` } }),
      await anon.get(`/api/users/me?apiKey=${wrong}`),
    ]) {
      t.equal(res.status, 401);
      t.notOk(res.text.includes(wrong), res.text);
    }
  });

  t.test("a disabled user's API key is rejected with 401", async (t) => {
    const user = await createUser(api, 'disabled-key', 'Operator');
    t.equal((await me({ key: user.apiKey })).status, 200, 'control: the key works while enabled');
    t.equal((await disable(user.id, false)).status, 200);
    t.equal((await me({ key: user.apiKey })).status, 401);
    t.equal((await me({ headers: { Authorization: `Bearer ${user.apiKey}` } })).status, 401);
    t.equal((await anon.get(`/api/users/me?apiKey=${user.apiKey}`)).status, 401);
  });

  t.test('re-enabling a user makes its existing API key work again', async (t) => {
    const user = await createUser(api, 'reenabled-key', 'Operator');
    await disable(user.id, false);
    t.equal((await me({ key: user.apiKey })).status, 401, 'control: rejected while disabled');
    t.equal((await disable(user.id, true)).status, 200);
    t.equal((await me({ key: user.apiKey })).status, 200);
  });

  t.test('disabling a user revokes its session tokens for good', async (t) => {
    const user = await createUser(api, 'disabled-session', 'Viewer');
    const token = await login('disabled-session', user.password);
    t.equal((await me({ token })).status, 200, 'control: the token works while enabled');
    await disable(user.id, false);
    t.equal((await me({ token })).status, 401);
    await disable(user.id, true);
    t.equal((await me({ token })).status, 401, 'still revoked after re-enabling');
  });

  t.test('a login returns a session token, its absolute expiry and the user', async (t) => {
    const before = Date.now();
    const res = await anon.post('/api/auth/login', { username: 'admin', password: d.adminPassword });
    const after = Date.now();
    t.equal(res.status, 200);
    seen.push(res.body.token);
    t.match(res.body.token, /^sst_[A-Za-z0-9_-]{43,}$/);
    const expiresAt = Date.parse(res.body.expiresAt);
    t.ok(
      expiresAt >= before + 7 * 24 * HOUR && expiresAt <= after + 7 * 24 * HOUR,
      `expires 7 days after login: ${res.body.expiresAt}`,
    );
    t.match(res.body.user, {
      username: 'admin',
      role: 'Admin',
      isEnabled: true,
      apiKey: /^svc_[0-9a-f]{4}…[0-9a-f]{4}$/,
    });
    t.notOk(res.text.includes(d.adminKey), 'the full API key is not part of a login');
    // passwordChangeRequired is the only field that may mention a password.
    t.notMatch(res.text.replace('"passwordChangeRequired"', ''), /scrypt|password/i);
    t.notOk(res.text.includes(d.adminPassword), 'the password is not echoed');
  });

  t.test('a login matches the username in any letter case', async (t) => {
    const res = await anon.post('/api/auth/login', { username: 'ADMIN', password: d.adminPassword });
    t.equal(res.status, 200);
    t.equal(res.body.user.username, 'admin');
  });

  // Failed logins come from an address of their own per case (TEST-NET-1): the per-address budget of one case
  // is then not spent by another.
  t.test('a login with a wrong password is 401 and gives no token', async (t) => {
    const anon = injectClient(d.daemon, undefined, '192.0.2.1');
    const res = await anon.post('/api/auth/login', { username: 'admin', password: 'not-the-password' });
    t.equal(res.status, 401);
    t.equal(res.body.token, undefined);
    t.match(res.headers.get('www-authenticate'), /^Bearer\b/);
  });

  t.test('a login of an unknown user is the same 401 as a wrong password', async (t) => {
    const anon = injectClient(d.daemon, undefined, '192.0.2.2');
    const unknown = await anon.post('/api/auth/login', { username: 'nobody-here', password: 'whatever-pw' });
    const wrong = await anon.post('/api/auth/login', { username: 'admin', password: 'whatever-pw' });
    t.equal(unknown.status, 401);
    t.equal(wrong.status, 401);
    t.equal(unknown.body.detail, wrong.body.detail);
  });

  t.test('a disabled user cannot log in', async (t) => {
    const anon = injectClient(d.daemon, undefined, '192.0.2.3');
    const user = await createUser(api, 'disabled-login', 'Viewer');
    await disable(user.id, false);
    const res = await anon.post('/api/auth/login', { username: 'disabled-login', password: user.password });
    t.equal(res.status, 401);
    t.equal(res.body.token, undefined);
    await disable(user.id, true);
    t.equal(
      (await anon.post('/api/auth/login', { username: 'disabled-login', password: user.password })).status,
      200,
      'and can once re-enabled',
    );
  });

  t.test('a login without a username or password is a 400 problem', async (t) => {
    const res = await anon.post('/api/auth/login', { username: 'admin' });
    t.equal(res.status, 400);
    t.match(res.body, { status: 400, errors: { password: Array } });
  });

  t.test('a login password of the wrong type is not echoed in the 400', async (t) => {
    const res = await anon.post('/api/auth/login', { username: 'admin', password: 73519284610 });
    t.equal(res.status, 400);
    t.notOk(res.text.includes('73519284610'), res.text);
  });

  t.test('an over-long login password is not echoed in the 400', async (t) => {
    const password = `hunter2-${'q'.repeat(2000)}`;
    const res = await anon.post('/api/auth/login', { username: 'admin', password });
    t.equal(res.status, 400);
    t.notOk(res.text.includes('hunter2-'), res.text);
  });

  t.test('a malformed login body is not echoed in the 400', async (t) => {
    const res = await anon.call('POST', '/api/auth/login', { raw: '{"username":"admin","password":hunter2secret}' });
    t.equal(res.status, 400);
    t.notOk(res.text.includes('hunter2'), res.text);
  });

  t.test('a new password of the wrong type is not echoed in the 400', async (t) => {
    const res = await api.put(`/api/users/${(await api.get('/api/users/me')).body.id}/password`, {
      newPassword: 73519284610,
    });
    t.equal(res.status, 400);
    t.notOk(res.text.includes('73519284610'), res.text);
  });

  t.test('logout ends the session: 204, then the token is 401', async (t) => {
    const token = await login('admin', d.adminPassword);
    const res = await anon.post('/api/auth/logout', undefined, { token });
    t.equal(res.status, 204);
    t.equal(res.text, '');
    t.equal((await me({ token })).status, 401);
  });

  t.test('logout ends only the session it was called with', async (t) => {
    const first = await login('admin', d.adminPassword);
    const second = await login('admin', d.adminPassword);
    await anon.post('/api/auth/logout', undefined, { token: first });
    t.equal((await me({ token: second })).status, 200);
  });

  t.test('logout with an API key is a 400 and leaves the key working', async (t) => {
    const res = await api.post('/api/auth/logout');
    t.equal(res.status, 400);
    t.match(res.body, { status: 400, detail: /API key/ });
    t.equal((await me({ key: d.adminKey })).status, 200);
  });

  t.test('logout without a credential is a 401', async (t) => {
    t.equal((await anon.post('/api/auth/logout')).status, 401);
  });

  t.test("a password change revokes all of that user's sessions", async (t) => {
    const user = await createUser(api, 'password-change', 'Viewer');
    const a = await login('password-change', user.password);
    const b = await login('password-change', user.password);
    t.equal((await api.put(`/api/users/${user.id}/password`, { newPassword: 'a-new-password' })).status, 200);
    t.equal((await me({ token: a })).status, 401);
    t.equal((await me({ token: b })).status, 401);
    t.equal((await me({ key: user.apiKey })).status, 200, 'the API key is not a session and keeps working');
  });

  t.test('deleting a user revokes its sessions', async (t) => {
    const user = await createUser(api, 'deleted-session', 'Viewer');
    const token = await login('deleted-session', user.password);
    t.equal((await api.del(`/api/users/${user.id}`)).status, 204);
    t.equal((await me({ token })).status, 401);
  });

  t.test('a session idle for 12 hours is rejected and removed', async (t) => {
    const token = await login('admin', d.adminPassword);
    const id = newestSession();
    db.prepare('UPDATE sessions SET last_used_at = ? WHERE id = ?').run(Date.now() - 12 * HOUR - 1000, id);
    t.equal((await me({ token })).status, 401);
    t.equal(sessionCount(id), 0, 'the expired session row is deleted');
  });

  t.test('a session used within the last 12 hours stays valid and its idle clock restarts', async (t) => {
    const token = await login('admin', d.adminPassword);
    const id = newestSession();
    const old = Date.now() - 11 * HOUR;
    db.prepare('UPDATE sessions SET last_used_at = ? WHERE id = ?').run(old, id);
    t.equal((await me({ token })).status, 200);
    const row = db.prepare('SELECT last_used_at FROM sessions WHERE id = ?').get(id) as { last_used_at: number };
    t.ok(row.last_used_at > old + 10 * HOUR, 'last use moved to now');
  });

  t.test('a session past its absolute expiry is rejected even when recently used', async (t) => {
    const token = await login('admin', d.adminPassword);
    const id = newestSession();
    db.prepare('UPDATE sessions SET created_at = ?, expires_at = ?, last_used_at = ? WHERE id = ?').run(
      Date.now() - 7 * 24 * HOUR - 1000,
      Date.now() - 1000,
      Date.now(),
      id,
    );
    t.equal((await me({ token })).status, 401);
  });

  t.test('a role change applies to the very next request of an API key', async (t) => {
    const user = await createUser(api, 'role-change', 'Operator');
    t.equal((await anon.post('/api/playlists', { name: 'Mine' }, { key: user.apiKey })).status, 201);
    await api.put(`/api/users/${user.id}`, { role: 'Viewer' });
    t.equal((await anon.post('/api/playlists', { name: 'Not mine' }, { key: user.apiKey })).status, 403);
    t.equal((await anon.get('/api/users', { key: user.apiKey })).status, 403);
    await api.put(`/api/users/${user.id}`, { role: 'Admin' });
    t.equal((await anon.get('/api/users', { key: user.apiKey })).status, 200);
  });

  t.test('a role change applies to the very next request of a session', async (t) => {
    const user = await createUser(api, 'role-change-session', 'Viewer');
    const token = await login('role-change-session', user.password);
    t.equal((await anon.get('/api/users', { token })).status, 403);
    await api.put(`/api/users/${user.id}`, { role: 'admin' });
    t.equal((await anon.get('/api/users', { token })).status, 200);
  });

  t.test('an assignment change applies to the very next request', async (t) => {
    const zone = (await api.get('/api/zones')).body[0] as { id: string };
    const user = await createUser(api, 'assignment-change', 'Operator');
    t.equal(
      (await anon.get(`/api/zones/${zone.id}`, { key: user.apiKey })).status,
      404,
      'an unassigned zone does not exist for it',
    );
    await api.put(`/api/users/${user.id}/assignments`, { playerIds: [], zoneIds: [zone.id] });
    t.equal((await anon.get(`/api/zones/${zone.id}`, { key: user.apiKey })).status, 200);
    await api.put(`/api/users/${user.id}/assignments`, { playerIds: [], zoneIds: [] });
    t.equal((await anon.get(`/api/zones/${zone.id}`, { key: user.apiKey })).status, 404);
  });

  t.test('no API key, session token or password ever reaches the logs', async (t) => {
    const user = await createUser(api, 'log-check', 'Viewer');
    const token = await login('log-check', user.password);
    await me({ key: user.apiKey });
    await me({ headers: { Authorization: `Bearer ${user.apiKey}` } });
    await anon.get(`/api/users/me?apiKey=${user.apiKey}`);
    await me({ token });
    const logs = d.logs.join('\n');
    t.ok(logs.includes('/api/users/me'), 'the requests were logged');
    for (const secret of [...seen, user.apiKey, user.password, token])
      t.notOk(logs.includes(secret), `the logs do not hold ${secret.slice(0, 8)}…`);
  });

  function newestSession(): string {
    return (db.prepare('SELECT id FROM sessions ORDER BY created_at DESC, rowid DESC LIMIT 1').get() as { id: string })
      .id;
  }
  function sessionCount(id: string): number {
    return (db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE id = ?').get(id) as { n: number }).n;
  }
});

t.test('failed-login throttling', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const victim = await createUser(api, 'victim', 'Viewer');

  t.test('after five failures its next login from that address is a 429 problem with Retry-After', async (t) => {
    for (let i = 0; i < 5; i++) t.equal((await loginFrom(d.base, '127.0.0.2', 'victim', `wrong-${i}-pw`)).status, 401);
    const res = await loginFrom(d.base, '127.0.0.2', 'VICTIM', victim.password);
    t.equal(res.status, 429);
    t.match(res.headers.get('retry-after'), /^[1-9][0-9]*$/);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.match(res.body, { status: 429, title: 'Too Many Requests', detail: /try again/ });
    t.equal(res.body.token, undefined);
  });

  t.test('the local console is not held back by a username locked by failures from elsewhere', async (t) => {
    t.equal((await loginFrom(d.base, '127.0.0.3', 'VICTIM', victim.password)).status, 200);
  });

  t.test(
    'a client that signs in to its own account between guesses is still stopped after five failures',
    async (t) => {
      const own = await createUser(api, 'sprayer', 'Viewer');
      for (let round = 0; round < 2; round++) {
        t.equal((await loginFrom(d.base, '127.0.0.9', 'sprayer', own.password)).status, 200, 'its own login works');
        for (let i = 0; i < 2; i++)
          t.equal((await loginFrom(d.base, '127.0.0.9', `sprayed${round}-${i}`, 'Summer2024!')).status, 401);
      }
      t.equal((await loginFrom(d.base, '127.0.0.9', 'sprayed-last', 'Summer2024!')).status, 401, 'the fifth failure');
      t.equal((await loginFrom(d.base, '127.0.0.9', 'sprayed-next', 'Summer2024!')).status, 429);
      t.equal(
        (await loginFrom(d.base, '127.0.0.9', 'sprayer', own.password)).status,
        429,
        'its own account cannot reset the count',
      );
    },
  );

  t.test('X-Forwarded-For does not give a client a fresh address', async (t) => {
    const forwarded = (i: number) => ({
      'X-Forwarded-For': `203.0.113.${i}`,
      'X-Real-IP': `203.0.113.${i}`,
      Forwarded: `for=203.0.113.${i}`,
    });
    for (let i = 0; i < 5; i++)
      t.equal((await loginFrom(d.base, '127.0.0.10', `forwarded${i}`, 'wrong-password', forwarded(i))).status, 401);
    t.equal((await loginFrom(d.base, '127.0.0.10', 'admin', d.adminPassword, forwarded(99))).status, 429);
  });

  t.test('after five failures from one address its next login is 429 for any username', async (t) => {
    for (let i = 0; i < 5; i++)
      t.equal((await loginFrom(d.base, '127.0.0.4', `ghost${i}`, 'wrong-password')).status, 401);
    const blocked = await loginFrom(d.base, '127.0.0.4', 'admin', d.adminPassword);
    t.equal(blocked.status, 429);
    t.match(blocked.headers.get('retry-after'), /^[1-9][0-9]*$/);
    t.equal(
      (await loginFrom(d.base, '127.0.0.5', 'admin', d.adminPassword)).status,
      200,
      'another address is not affected',
    );
  });

  t.test('four failures do not throttle', async (t) => {
    const user = await createUser(api, 'forgetful', 'Viewer');
    for (let i = 0; i < 4; i++)
      t.equal((await loginFrom(d.base, '127.0.0.6', 'forgetful', 'wrong-password')).status, 401);
    t.equal((await loginFrom(d.base, '127.0.0.6', 'forgetful', user.password)).status, 200);
  });

  t.test('simultaneous wrong logins cannot outrun the back-off: only five are checked', async (t) => {
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => loginFrom(d.base, '127.0.0.8', 'parallel-target', `guess-${i}-pw`)),
    );
    const statuses = attempts.map((res) => res.status).sort();
    t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
  });

  t.test('API-key checks are not throttled', async (t) => {
    const anon = injectClient(d.daemon);
    for (let i = 0; i < 20; i++)
      t.equal((await anon.get('/api/users/me', { key: `svc_${String(i).padStart(48, '0')}` })).status, 401);
    t.equal((await anon.get('/api/users/me', { key: d.adminKey })).status, 200);
  });
});

// Waiting out a back-off over HTTP would need a real sleep; the service on the daemon's own store takes a clock instead.
t.test('the login back-off on the service clock', async (t) => {
  const d = await startTestDaemon(t);
  const clock = { now: Date.now() };
  const accounts = new Authentication(
    d.daemon.services.store,
    new UsersRepo(d.daemon.services.store.db),
    DeviceSecrets.open(d.stateDir),
    d.daemon.services.bus,
    d.daemon.config,
    () => clock.now,
  );
  accounts.passwords = TEST_PASSWORDS;
  const status = (password: string) =>
    accounts.login('admin', password, '192.0.2.9').then(
      () => 200,
      (err: unknown) => asHttpError(err)?.status ?? 500,
    );

  t.test('a login that was checking the old password when the password changed gets no session', async (t) => {
    const user = await createUser(injectClient(d.daemon, d.adminKey), 'racer', 'Viewer');
    const repo = new UsersRepo(d.daemon.services.store.db);
    const newHash = await hashPassword('racer-new-password');
    // login() reads the user, then awaits scrypt; the password change commits in between.
    const pending = accounts.login('racer', user.password, '192.0.2.10');
    d.daemon.services.store.transaction(() => {
      repo.setPassword(user.id, newHash);
      repo.deleteUserSessions(user.id);
    });
    const outcome = await pending.then(
      (session) => session.token,
      (err: unknown) => asHttpError(err)?.status ?? err,
    );
    t.equal(outcome, 401);
    t.equal(
      (
        d.daemon.services.store.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(user.id) as {
          n: number;
        }
      ).n,
      0,
    );
  });

  t.test('a blocked login is allowed again once Retry-After has passed on the clock', async (t) => {
    for (let i = 0; i < 5; i++) await status('wrong-password');
    t.equal(await status(d.adminPassword), 429);
    clock.now += 999;
    t.equal(await status(d.adminPassword), 429, 'still blocked just before the second is over');
    clock.now += 1;
    t.equal(await status(d.adminPassword), 200);
  });
});
