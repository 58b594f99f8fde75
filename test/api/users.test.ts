// The user endpoints from outside: statuses, bodies, who may call them, the last-Admin rule, and bad input.
import t, { type Test } from 'tap';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { type Client, createUser, type Injectable, injectClient, type Reply } from '../helpers/inject.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const FULL_KEY = /^svc_[0-9a-f]{48}$/;
const MASKED_KEY = /^svc_[0-9a-f]{4}…[0-9a-f]{4}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const mask = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

/** Asserts an RFC 9457 problem body with the given status. */
function isProblem(t: Test, res: Reply, status: number, instance?: string): void {
  t.equal(res.status, status, `status ${status}: ${res.text}`);
  t.match(res.headers.get('content-type'), /^application\/problem\+json/);
  t.match(res.body, { type: String, title: String, status, detail: String, instance: instance ?? String });
}

/** Everything about accounts a request could change: the API's view plus the secret columns and sessions. */
function snapshot(d: TestDaemon) {
  const db = d.daemon.services.store.db;
  return {
    users: db
      .prepare(
        'SELECT id, username, role, password_hash, is_enabled, created_at, key_digest, key_box FROM users ORDER BY id',
      )
      .all(),
    assignments: db.prepare('SELECT * FROM assignments ORDER BY user_id, kind, target_id').all(),
    sessions: db.prepare('SELECT id FROM sessions ORDER BY id').all(),
  };
}

async function loginStatus(daemon: Injectable, username: string, password: string): Promise<number> {
  return (await injectClient(daemon).post('/api/auth/login', { username, password })).status;
}

t.test('user endpoints', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const anon = injectClient(d.daemon);
  const adminId = (await api.get('/api/users/me')).body.id as string;
  const operator = await createUser(api, 'operator1', 'Operator');
  const op = injectClient(d.daemon, operator.apiKey);
  const viewer = await createUser(api, 'viewer1', 'Viewer');
  const view = injectClient(d.daemon, viewer.apiKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;

  t.test('an admin lists every user with masked keys', async (t) => {
    const res = await api.get('/api/users');
    t.equal(res.status, 200);
    const stored = (
      d.daemon.services.store.db.prepare('SELECT username FROM users').all() as Array<{ username: string }>
    ).map((u) => u.username);
    t.same(res.body.map((u: { username: string }) => u.username).sort(), stored.sort(), 'every stored user, no more');
    t.ok(
      ['admin', 'operator1', 'viewer1'].every((name) => stored.includes(name)),
      'the users made above among them',
    );
    for (const user of res.body) t.match(user.apiKey, MASKED_KEY, user.username);
    for (const key of [d.adminKey, operator.apiKey, viewer.apiKey])
      t.notOk(res.text.includes(key), 'no full key in the list');
  });

  t.test('an operator cannot list users', async (t) => {
    isProblem(t, await op.get('/api/users'), 403);
  });

  t.test('a viewer cannot list users', async (t) => {
    isProblem(t, await view.get('/api/users'), 403);
  });

  t.test('creating a user answers 201 with the user and its full API key', async (t) => {
    const before = Date.now();
    const res = await api.post('/api/users', { username: 'created1', password: 'created1-password', role: 'Operator' });
    t.equal(res.status, 201);
    t.match(res.body, {
      id: UUID,
      username: 'created1',
      role: 'Operator',
      apiKey: FULL_KEY,
      isEnabled: true,
      assignments: { playerIds: [], zoneIds: [] },
    });
    t.ok(Date.parse(res.body.createdAt) >= before - 1000, `createdAt is a date-time of now: ${res.body.createdAt}`);
    t.equal(
      Object.keys(res.body).sort().join(),
      'apiKey,assignments,createdAt,id,isEnabled,passwordChangeRequired,role,username',
    );
    t.equal(res.body.passwordChangeRequired, false, 'a password chosen by an admin need not be replaced');
  });

  t.test("a new user's key authenticates as that user", async (t) => {
    const user = await createUser(api, 'created2', 'Viewer');
    const res = await anon.get('/api/users/me', { key: user.apiKey });
    t.equal(res.status, 200);
    t.equal(res.body.id, user.id);
  });

  t.test("a new user's key is shown masked in every later read", async (t) => {
    const user = await createUser(api, 'created3', 'Viewer');
    t.equal((await api.get(`/api/users/${user.id}`)).body.apiKey, mask(user.apiKey));
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).body.apiKey, mask(user.apiKey));
    const listed = (await api.get('/api/users')).body.find((u: { id: string }) => u.id === user.id);
    t.equal(listed.apiKey, mask(user.apiKey));
  });

  t.test('a new user with assignments gets them', async (t) => {
    const res = await api.post('/api/users', {
      username: 'assigned1',
      password: 'assigned1-password',
      role: 'Operator',
      assignments: { playerIds: [], zoneIds: [zones[0]!.id.toUpperCase(), zones[0]!.id] },
    });
    t.equal(res.status, 201);
    t.same(res.body.assignments, { playerIds: [], zoneIds: [zones[0]!.id] }, 'ids lower-cased, duplicates dropped');
  });

  t.test('a username that is taken in any letter case is a 409', async (t) => {
    const before = snapshot(d);
    isProblem(
      t,
      await api.post('/api/users', { username: 'OPERATOR1', password: 'another-password', role: 'Viewer' }),
      409,
    );
    t.same(snapshot(d), before, 'nothing changed');
  });

  t.test('a username outside 3-64 characters of A-Z a-z 0-9 . _ - is a 400', async (t) => {
    const before = snapshot(d);
    for (const username of ['ab', 'a'.repeat(65), 'has space', 'émile', 'semi;colon', '']) {
      const res = await api.post('/api/users', { username, password: 'long-enough', role: 'Viewer' });
      isProblem(t, res, 400);
      t.ok(res.body.errors?.username, `errors names "username" for ${JSON.stringify(username)}`);
    }
    t.same(snapshot(d), before, 'nothing changed');
  });

  t.test('a username of exactly 3 or 64 allowed characters is accepted', async (t) => {
    t.equal((await api.post('/api/users', { username: 'a.b', password: 'long-enough', role: 'Viewer' })).status, 201);
    t.equal(
      (await api.post('/api/users', { username: `A_-.9${'z'.repeat(59)}`, password: 'long-enough', role: 'Viewer' }))
        .status,
      201,
    );
  });

  t.test('a password shorter than 8 characters is a 400 on create', async (t) => {
    const before = snapshot(d);
    const res = await api.post('/api/users', { username: 'shortpw', password: 'seven77', role: 'Viewer' });
    isProblem(t, res, 400);
    t.ok(res.body.errors?.password);
    t.same(snapshot(d), before);
  });

  t.test('a user made without a password signs in with its API key only, until an admin sets one', async (t) => {
    const res = await api.post('/api/users', { username: 'hub-account', role: 'Operator' });
    t.equal(res.status, 201);
    t.match(res.body.apiKey, FULL_KEY);
    t.equal(
      (await injectClient(d.daemon, res.body.apiKey).get('/api/users/me')).body.username,
      'hub-account',
      'its key works',
    );
    // The placeholder the daemon hashes for unknown names, and the marker stored for no password: neither matches.
    for (const guess of ['not a password of anyone', '!no-password']) {
      t.equal(await loginStatus(d.daemon, 'hub-account', guess), 401, `no password signs in: ${JSON.stringify(guess)}`);
    }
    t.equal((await api.put(`/api/users/${res.body.id}/password`, { newPassword: 'set-by-admin-1' })).status, 200);
    t.equal(await loginStatus(d.daemon, 'hub-account', 'set-by-admin-1'), 200, 'the password an admin set works');
  });

  t.test('an unknown role is a 400 naming the allowed roles', async (t) => {
    const before = snapshot(d);
    const res = await api.post('/api/users', { username: 'badrole', password: 'long-enough', role: 'Superuser' });
    isProblem(t, res, 400);
    t.match(res.body.detail, /Admin, Operator or Viewer/);
    t.ok(res.body.errors?.role);
    t.same(snapshot(d), before);
  });

  t.test('a role in any letter case is accepted and answered in its canonical spelling', async (t) => {
    const res = await api.post('/api/users', { username: 'anycase', password: 'long-enough', role: 'vIeWeR' });
    t.equal(res.status, 201);
    t.equal(res.body.role, 'Viewer');
    t.equal((await api.get(`/api/users/${res.body.id}`)).body.role, 'Viewer');
  });

  t.test('an operator cannot create users', async (t) => {
    const before = snapshot(d);
    isProblem(t, await op.post('/api/users', { username: 'sneaky', password: 'long-enough', role: 'Admin' }), 403);
    t.same(snapshot(d), before);
  });

  t.test('GET /api/users/me returns the calling user', async (t) => {
    const res = await op.get('/api/users/me');
    t.equal(res.status, 200);
    t.match(res.body, {
      id: operator.id,
      username: 'operator1',
      role: 'Operator',
      apiKey: mask(operator.apiKey),
      isEnabled: true,
    });
  });

  t.test('an admin reads any user', async (t) => {
    const res = await api.get(`/api/users/${operator.id}`);
    t.equal(res.status, 200);
    t.match(res.body, {
      id: operator.id,
      username: 'operator1',
      role: 'Operator',
      apiKey: MASKED_KEY,
      isEnabled: true,
      createdAt: String,
    });
  });

  t.test('a user reads itself by id', async (t) => {
    const res = await op.get(`/api/users/${operator.id}`);
    t.equal(res.status, 200);
    t.equal(res.body.username, 'operator1');
  });

  t.test('a non-admin cannot read another user', async (t) => {
    isProblem(t, await op.get(`/api/users/${adminId}`), 403);
    isProblem(t, await view.get(`/api/users/${operator.id}`), 403);
  });

  t.test('reading an unknown user id is a 404', async (t) => {
    isProblem(t, await api.get(`/api/users/${UNKNOWN}`), 404, `/api/users/${UNKNOWN}`);
  });

  t.test('a user id that is not a UUID is a 400', async (t) => {
    const res = await api.get('/api/users/operator1');
    isProblem(t, res, 400);
    t.ok(res.body.errors?.id);
  });

  t.test('a user id in upper case finds the user', async (t) => {
    const res = await api.get(`/api/users/${operator.id.toUpperCase()}`);
    t.equal(res.status, 200);
    t.equal(res.body.id, operator.id);
  });

  t.test('an admin changes a role and gets the updated user', async (t) => {
    const user = await createUser(api, 'promoted', 'Viewer');
    const res = await api.put(`/api/users/${user.id}`, { role: 'OPERATOR' });
    t.equal(res.status, 200);
    t.match(res.body, {
      id: user.id,
      username: 'promoted',
      role: 'Operator',
      apiKey: mask(user.apiKey),
      isEnabled: true,
      createdAt: String,
    });
    t.equal((await api.get(`/api/users/${user.id}`)).body.role, 'Operator', 'and it is stored');
  });

  t.test('an admin changes the enabled state alone and the role is kept', async (t) => {
    const user = await createUser(api, 'toggled', 'Operator');
    const res = await api.put(`/api/users/${user.id}`, { isEnabled: false });
    t.equal(res.status, 200);
    t.match(res.body, { role: 'Operator', isEnabled: false });
  });

  t.test('an admin changes role and enabled state together', async (t) => {
    const user = await createUser(api, 'both', 'Operator');
    const res = await api.put(`/api/users/${user.id}`, { role: 'viewer', isEnabled: false });
    t.equal(res.status, 200);
    t.match(res.body, { role: 'Viewer', isEnabled: false });
  });

  t.test('an update with an unknown role is a 400 problem-details body and changes nothing', async (t) => {
    const before = snapshot(d);
    const res = await api.put(`/api/users/${operator.id}`, { role: 'King', isEnabled: false });
    isProblem(t, res, 400, `/api/users/${operator.id}`);
    t.same(snapshot(d), before);
  });

  t.test('an update with isEnabled that is not a boolean is a 400 problem and changes nothing', async (t) => {
    const before = snapshot(d);
    const res = await api.put(`/api/users/${operator.id}`, { isEnabled: 'false' });
    isProblem(t, res, 400, `/api/users/${operator.id}`);
    t.ok(res.body.errors?.isEnabled);
    t.same(snapshot(d), before);
  });

  t.test('an update needs at least one of role and isEnabled', async (t) => {
    const before = snapshot(d);
    isProblem(t, await api.put(`/api/users/${operator.id}`, {}), 400, `/api/users/${operator.id}`);
    isProblem(t, await api.put(`/api/users/${operator.id}`, { username: 'renamed' }), 400);
    t.same(snapshot(d), before);
  });

  t.test('an operator cannot update users, itself included', async (t) => {
    const before = snapshot(d);
    isProblem(t, await op.put(`/api/users/${operator.id}`, { role: 'Admin' }), 403);
    isProblem(t, await op.put(`/api/users/${viewer.id}`, { isEnabled: false }), 403);
    t.same(snapshot(d), before);
  });

  t.test('updating an unknown user is a 404', async (t) => {
    isProblem(t, await api.put(`/api/users/${UNKNOWN}`, { role: 'Viewer' }), 404);
  });

  t.test('deleting a user answers 204 and the user is gone', async (t) => {
    const user = await createUser(api, 'deleted1', 'Operator');
    const res = await api.del(`/api/users/${user.id}`);
    t.equal(res.status, 204);
    t.equal(res.text, '');
    isProblem(t, await api.get(`/api/users/${user.id}`), 404);
  });

  t.test("a deleted user's key is revoked permanently, even if the username is reused", async (t) => {
    const user = await createUser(api, 'deleted2', 'Operator');
    await api.del(`/api/users/${user.id}`);
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).status, 401);
    const again = await createUser(api, 'deleted2', 'Operator');
    t.not(again.apiKey, user.apiKey);
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).status, 401, 'the old key does not come back');
  });

  t.test('an operator cannot delete users', async (t) => {
    const before = snapshot(d);
    isProblem(t, await op.del(`/api/users/${viewer.id}`), 403);
    t.same(snapshot(d), before);
  });

  t.test('deleting an unknown user is a 404', async (t) => {
    isProblem(t, await api.del(`/api/users/${UNKNOWN}`), 404);
  });

  t.test('an admin reads the full API key of a user', async (t) => {
    const res = await api.get(`/api/users/${operator.id}/api-key`);
    t.equal(res.status, 200);
    t.same(res.body, { apiKey: operator.apiKey });
  });

  t.test('an operator cannot read a full API key, not even its own', async (t) => {
    isProblem(t, await op.get(`/api/users/${operator.id}/api-key`), 403);
    isProblem(t, await op.get(`/api/users/${adminId}/api-key`), 403);
  });

  t.test('reading the API key of an unknown user is a 404', async (t) => {
    isProblem(t, await api.get(`/api/users/${UNKNOWN}/api-key`), 404);
  });

  t.test('regenerating a key returns a new key of the documented format', async (t) => {
    const user = await createUser(api, 'regen1', 'Operator');
    const res = await api.post(`/api/users/${user.id}/api-key`);
    t.equal(res.status, 200);
    t.match(res.body, { apiKey: FULL_KEY });
    t.not(res.body.apiKey, user.apiKey);
    t.same(
      (await api.get(`/api/users/${user.id}/api-key`)).body,
      { apiKey: res.body.apiKey },
      'the admin read shows the new key',
    );
    t.equal((await api.get(`/api/users/${user.id}`)).body.apiKey, mask(res.body.apiKey), 'the masked key follows');
  });

  t.test('after regeneration the old key is 401 at once and the new key works', async (t) => {
    const user = await createUser(api, 'regen2', 'Operator');
    const fresh = (await api.post(`/api/users/${user.id}/api-key`)).body.apiKey as string;
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).status, 401);
    const res = await anon.get('/api/users/me', { key: fresh });
    t.equal(res.status, 200);
    t.equal(res.body.id, user.id);
  });

  t.test('an operator cannot regenerate a key, and the key stays', async (t) => {
    isProblem(t, await op.post(`/api/users/${operator.id}/api-key`), 403);
    t.equal((await op.get('/api/users/me')).status, 200);
  });

  t.test('regenerating the key of an unknown user is a 404', async (t) => {
    isProblem(t, await api.post(`/api/users/${UNKNOWN}/api-key`), 404);
  });

  t.test('revoking a key answers 204; the key is 401 and the user remains without a key', async (t) => {
    const user = await createUser(api, 'revoked1', 'Operator');
    const res = await api.del(`/api/users/${user.id}/api-key`);
    t.equal(res.status, 204);
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).status, 401);
    const read = await api.get(`/api/users/${user.id}`);
    t.equal(read.status, 200);
    t.equal(read.body.apiKey, '', 'no key: an empty string, as the API types apiKey as a string');
  });

  t.test('reading a revoked key is a 404', async (t) => {
    const user = await createUser(api, 'revoked2', 'Operator');
    await api.del(`/api/users/${user.id}/api-key`);
    isProblem(t, await api.get(`/api/users/${user.id}/api-key`), 404);
  });

  t.test('a revoked key can be replaced by regenerating', async (t) => {
    const user = await createUser(api, 'revoked3', 'Operator');
    await api.del(`/api/users/${user.id}/api-key`);
    const fresh = (await api.post(`/api/users/${user.id}/api-key`)).body.apiKey as string;
    t.match(fresh, FULL_KEY);
    t.equal((await anon.get('/api/users/me', { key: fresh })).status, 200);
    t.equal((await anon.get('/api/users/me', { key: user.apiKey })).status, 401);
  });

  t.test('revoking the key of an unknown user is a 404', async (t) => {
    isProblem(t, await api.del(`/api/users/${UNKNOWN}/api-key`), 404);
  });

  t.test('an operator cannot revoke keys', async (t) => {
    isProblem(t, await op.del(`/api/users/${viewer.id}/api-key`), 403);
    t.equal((await view.get('/api/users/me')).status, 200);
  });

  t.test("an admin sets another user's password: 200 with an empty body", async (t) => {
    const user = await createUser(api, 'pw-admin', 'Viewer');
    const res = await api.put(`/api/users/${user.id}/password`, { newPassword: 'brand-new-password' });
    t.equal(res.status, 200);
    t.equal(res.text, '');
  });

  t.test('after a password change the new password logs in and the old one does not', async (t) => {
    const user = await createUser(api, 'pw-login', 'Viewer');
    await api.put(`/api/users/${user.id}/password`, { newPassword: 'brand-new-password' });
    t.equal(await loginStatus(d.daemon, 'pw-login', 'brand-new-password'), 200);
    t.equal(await loginStatus(d.daemon, 'pw-login', user.password), 401);
  });

  t.test('a user changes its own password, giving the current one', async (t) => {
    const user = await createUser(api, 'pw-self', 'Viewer');
    const res = await anon.put(
      `/api/users/${user.id}/password`,
      { currentPassword: user.password, newPassword: 'my-own-new-password' },
      { key: user.apiKey },
    );
    t.equal(res.status, 200);
    t.equal(await loginStatus(d.daemon, 'pw-self', 'my-own-new-password'), 200);
  });

  t.test("a non-admin cannot change another user's password", async (t) => {
    const before = snapshot(d);
    isProblem(t, await op.put(`/api/users/${viewer.id}/password`, { newPassword: 'hijacked-password' }), 403);
    isProblem(t, await op.put(`/api/users/${adminId}/password`, { newPassword: 'hijacked-password' }), 403);
    t.same(snapshot(d), before);
  });

  t.test('a new password under 8 or over 256 characters is a 400 and changes nothing', async (t) => {
    const before = snapshot(d);
    for (const newPassword of ['', 'seven77', 'x'.repeat(257), 'é'.repeat(257)]) {
      const res = await api.put(`/api/users/${viewer.id}/password`, { newPassword });
      isProblem(t, res, 400);
      t.ok(res.body.errors?.newPassword, `errors names "newPassword" for length ${[...newPassword].length}`);
    }
    t.same(snapshot(d), before);
  });

  t.test('a new password of exactly 8 or 256 characters is accepted (counted in characters, not bytes)', async (t) => {
    const user = await createUser(api, 'pw-bounds', 'Viewer');
    t.equal((await api.put(`/api/users/${user.id}/password`, { newPassword: 'eight888' })).status, 200);
    t.equal((await api.put(`/api/users/${user.id}/password`, { newPassword: 'é'.repeat(256) })).status, 200);
    t.equal(await loginStatus(d.daemon, 'pw-bounds', 'é'.repeat(256)), 200);
  });

  t.test('changing the password of an unknown user is a 404', async (t) => {
    isProblem(t, await api.put(`/api/users/${UNKNOWN}/password`, { newPassword: 'long-enough' }), 404);
  });

  t.test('setting assignments answers 200 with the user and its assignments', async (t) => {
    const user = await createUser(api, 'assign1', 'Operator');
    const res = await api.put(`/api/users/${user.id}/assignments`, {
      playerIds: [],
      zoneIds: [zones[1]!.id, zones[2]!.id],
    });
    t.equal(res.status, 200);
    t.match(res.body, { id: user.id, username: 'assign1', role: 'Operator', apiKey: MASKED_KEY });
    t.same(res.body.assignments.zoneIds.sort(), [zones[1]!.id, zones[2]!.id].sort());
    t.same((await api.get(`/api/users/${user.id}`)).body.assignments, res.body.assignments, 'and they are stored');
  });

  t.test('assignments replace the previous list', async (t) => {
    const user = await createUser(api, 'assign2', 'Operator', { playerIds: [], zoneIds: [zones[0]!.id] });
    const res = await api.put(`/api/users/${user.id}/assignments`, { playerIds: [], zoneIds: [zones[3]!.id] });
    t.same(res.body.assignments, { playerIds: [], zoneIds: [zones[3]!.id] });
  });

  t.test('assignments with unknown ids are a 400 naming them, and nothing changes', async (t) => {
    const user = await createUser(api, 'assign3', 'Operator', { playerIds: [], zoneIds: [zones[0]!.id] });
    const before = snapshot(d);
    const res = await api.put(`/api/users/${user.id}/assignments`, { playerIds: [UNKNOWN], zoneIds: [zones[1]!.id] });
    isProblem(t, res, 400);
    t.match(res.body.detail, UNKNOWN);
    t.same(snapshot(d), before);
    t.same((await api.get(`/api/users/${user.id}`)).body.assignments, { playerIds: [], zoneIds: [zones[0]!.id] });
  });

  t.test('an operator cannot set assignments, not even its own', async (t) => {
    const before = snapshot(d);
    isProblem(
      t,
      await op.put(`/api/users/${operator.id}/assignments`, { playerIds: [], zoneIds: [zones[0]!.id] }),
      403,
    );
    t.same(snapshot(d), before);
  });

  t.test('setting assignments of an unknown user is a 404', async (t) => {
    isProblem(t, await api.put(`/api/users/${UNKNOWN}/assignments`, { playerIds: [], zoneIds: [] }), 404);
  });

  t.test('bad input of every kind is a 4xx problem, never a 5xx, and changes nothing', async (t) => {
    const target = await createUser(api, 'target', 'Operator');
    const u = `/api/users/${target.id}`;
    const badKey = `svc_${'0'.repeat(48)}`;
    const cases: Array<[string, string, string, Parameters<Client['call']>[2]]> = [
      ['create: empty object', 'POST', '/api/users', { body: {} }],
      [
        'create: username a number',
        'POST',
        '/api/users',
        { body: { username: 5, password: 'long-enough', role: 'Viewer' } },
      ],
      ['create: password null', 'POST', '/api/users', { body: { username: 'x-null', password: null, role: 'Viewer' } }],
      [
        'create: role a number',
        'POST',
        '/api/users',
        { body: { username: 'x-role', password: 'long-enough', role: 7 } },
      ],
      ['create: role missing', 'POST', '/api/users', { body: { username: 'x-norole', password: 'long-enough' } }],
      [
        'create: assignments a string',
        'POST',
        '/api/users',
        { body: { username: 'x-asg', password: 'long-enough', role: 'Viewer', assignments: 'all' } },
      ],
      [
        'create: assignment not a UUID',
        'POST',
        '/api/users',
        {
          body: {
            username: 'x-asg2',
            password: 'long-enough',
            role: 'Viewer',
            assignments: { playerIds: ['nope'], zoneIds: [] },
          },
        },
      ],
      [
        'create: unknown zone',
        'POST',
        '/api/users',
        {
          body: {
            username: 'x-asg3',
            password: 'long-enough',
            role: 'Operator',
            assignments: { playerIds: [], zoneIds: [UNKNOWN] },
          },
        },
      ],
      [
        'create: very long username',
        'POST',
        '/api/users',
        { body: { username: 'u'.repeat(5000), password: 'long-enough', role: 'Viewer' } },
      ],
      [
        'create: very long password',
        'POST',
        '/api/users',
        { body: { username: 'x-longpw', password: 'p'.repeat(20_000), role: 'Viewer' } },
      ],
      ['create: malformed JSON', 'POST', '/api/users', { raw: '{"username": "x-bad",' }],
      ['create: JSON array', 'POST', '/api/users', { raw: '[]' }],
      ['create: JSON null', 'POST', '/api/users', { raw: 'null' }],
      ['create: JSON string', 'POST', '/api/users', { raw: '"Admin"' }],
      ['create: no body', 'POST', '/api/users', {}],
      [
        'create: form content type',
        'POST',
        '/api/users',
        { raw: 'username=x-form&password=long-enough&role=Admin', contentType: 'application/x-www-form-urlencoded' },
      ],
      [
        'create: oversized body',
        'POST',
        '/api/users',
        { body: { username: 'x-big', password: 'long-enough', role: 'Viewer', pad: 'x'.repeat(70 * 1024) } },
      ],
      [
        'create: wrong API key',
        'POST',
        '/api/users',
        { key: badKey, body: { username: 'x-key', password: 'long-enough', role: 'Admin' } },
      ],
      [
        'create: Basic auth',
        'POST',
        '/api/users',
        {
          key: '',
          headers: { Authorization: 'Basic YWRtaW46YWRtaW4=' },
          body: { username: 'x-basic', password: 'long-enough', role: 'Admin' },
        },
      ],
      [
        'create: session-shaped garbage',
        'POST',
        '/api/users',
        {
          key: '',
          token: `sst_${'A'.repeat(43)}`,
          body: { username: 'x-sst', password: 'long-enough', role: 'Admin' },
        },
      ],
      ['update: role an array', 'PUT', u, { body: { role: ['Admin'] } }],
      ['update: isEnabled a number', 'PUT', u, { body: { isEnabled: 0 } }],
      ['update: isEnabled null', 'PUT', u, { body: { isEnabled: null } }],
      ['update: role empty', 'PUT', u, { body: { role: '' } }],
      ['update: malformed JSON', 'PUT', u, { raw: '{"role":' }],
      ['update: JSON string', 'PUT', u, { raw: '"Viewer"' }],
      ['update: text body', 'PUT', u, { raw: 'role=Viewer', contentType: 'text/plain' }],
      ['update: id not a UUID', 'PUT', '/api/users/target', { body: { role: 'Viewer' } }],
      ['update: wrong API key', 'PUT', u, { key: badKey, body: { role: 'Admin' } }],
      ['delete: id not a UUID', 'DELETE', '/api/users/1', {}],
      ['delete: no credential', 'DELETE', u, { key: '' }],
      ['password: a number', 'PUT', `${u}/password`, { body: { newPassword: 12345678 } }],
      ['password: missing', 'PUT', `${u}/password`, { body: { password: 'long-enough' } }],
      ['password: malformed JSON', 'PUT', `${u}/password`, { raw: '{' }],
      ['password: wrong API key', 'PUT', `${u}/password`, { key: badKey, body: { newPassword: 'long-enough' } }],
      ['api-key: regenerate with a wrong key', 'POST', `${u}/api-key`, { key: badKey }],
      ['api-key: revoke without a credential', 'DELETE', `${u}/api-key`, { key: '' }],
      ['assignments: playerIds a string', 'PUT', `${u}/assignments`, { body: { playerIds: 'x', zoneIds: [] } }],
      ['assignments: zone id a number', 'PUT', `${u}/assignments`, { body: { playerIds: [], zoneIds: [1] } }],
      ['assignments: zoneIds missing', 'PUT', `${u}/assignments`, { body: { playerIds: [] } }],
      [
        'assignments: 257 ids',
        'PUT',
        `${u}/assignments`,
        { body: { playerIds: [], zoneIds: Array.from({ length: 257 }, () => zones[0]!.id) } },
      ],
      ['login: username a number', 'POST', '/api/auth/login', { key: '', body: { username: 1, password: 'x' } }],
      [
        'login: very long password',
        'POST',
        '/api/auth/login',
        { key: '', body: { username: 'admin', password: 'p'.repeat(5000) } },
      ],
      ['login: malformed JSON', 'POST', '/api/auth/login', { key: '', raw: '{' }],
    ];
    const before = snapshot(d);
    const listBefore = (await api.get('/api/users')).body;
    for (const [name, method, path, options] of cases) {
      const res = await api.call(method, path, options);
      t.ok(res.status >= 400 && res.status < 500, `${name}: 4xx, got ${res.status}`);
      t.match(res.headers.get('content-type'), /^application\/problem\+json/, `${name}: problem content type`);
      t.match(
        res.body,
        { type: String, title: String, status: res.status, detail: String, instance: String },
        `${name}: problem body`,
      );
    }
    t.same(snapshot(d), before, 'the database is unchanged');
    t.same((await api.get('/api/users')).body, listBefore, 'the user list is unchanged');
  });
});

// Each case leaves the first admin enabled and an Admin as it found it (teardown), except the deletion, which has
// a daemon of its own: no case depends on another having run.
t.test('the last enabled Admin', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const adminId = (await api.get('/api/users/me')).body.id as string;
  /** A second Admin for one case; afterwards the first admin is restored through it, then it is deleted. */
  const secondAdmin = async (t: Test, username: string) => {
    const second = await createUser(api, username, 'Admin');
    const other = injectClient(d.daemon, second.apiKey);
    t.teardown(async () => {
      await other.put(`/api/users/${adminId}`, { role: 'Admin', isEnabled: true });
      await api.del(`/api/users/${second.id}`);
    });
    return { ...second, other };
  };

  t.test('cannot be disabled', async (t) => {
    const res = await api.put(`/api/users/${adminId}`, { isEnabled: false });
    isProblem(t, res, 400, `/api/users/${adminId}`);
    t.match(res.body.detail, /last enabled Admin/);
    t.equal((await api.get('/api/users/me')).body.isEnabled, true);
  });

  t.test('cannot be demoted', async (t) => {
    isProblem(t, await api.put(`/api/users/${adminId}`, { role: 'Operator' }), 400);
    t.equal((await api.get('/api/users/me')).body.role, 'Admin');
  });

  t.test('cannot be deleted', async (t) => {
    isProblem(t, await api.del(`/api/users/${adminId}`), 400);
    t.equal((await api.get('/api/users/me')).status, 200);
  });

  t.test('a disabled Admin does not count as another enabled Admin', async (t) => {
    const other = await secondAdmin(t, 'dormant-admin');
    t.equal((await api.put(`/api/users/${other.id}`, { isEnabled: false })).status, 200);
    isProblem(t, await api.put(`/api/users/${adminId}`, { isEnabled: false }), 400);
    t.equal((await api.get('/api/users/me')).body.isEnabled, true);
  });

  t.test('can be disabled once another enabled Admin exists', async (t) => {
    const second = await secondAdmin(t, 'second-admin');
    t.equal((await api.put(`/api/users/${adminId}`, { isEnabled: false })).status, 200);
    t.equal((await api.get('/api/users/me')).status, 401, 'the disabled admin is locked out');
    isProblem(t, await second.other.put(`/api/users/${second.id}`, { isEnabled: false }), 400, undefined);
    t.equal((await second.other.put(`/api/users/${adminId}`, { isEnabled: true })).status, 200);
  });

  t.test('can be demoted once another enabled Admin exists', async (t) => {
    const second = await secondAdmin(t, 'third-admin');
    t.equal((await api.put(`/api/users/${adminId}`, { role: 'Viewer' })).status, 200);
    t.equal((await api.get('/api/users')).status, 403, 'the demoted admin is an admin no more');
    t.equal((await second.other.put(`/api/users/${adminId}`, { role: 'Admin' })).status, 200);
  });
});

t.test('the last enabled Admin can be deleted once another enabled Admin exists', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const adminId = (await api.get('/api/users/me')).body.id as string;
  const second = await createUser(api, 'heir-admin', 'Admin');
  const other = injectClient(d.daemon, second.apiKey);
  t.equal((await other.del(`/api/users/${adminId}`)).status, 204);
  t.equal((await api.get('/api/users/me')).status, 401, "the deleted admin's key is revoked");
  isProblem(t, await other.del(`/api/users/${second.id}`), 400, undefined);
});
