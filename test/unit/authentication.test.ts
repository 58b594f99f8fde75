// Authentication called directly: what a caller carries, re-checks from the caller alone, and the change events.
import t from 'tap';
import { isInternal } from '../../daemon/domain/shared/events.js';
import { type AccountsRig, accountsRig } from '../helpers/accounts.js';

/** The caller of a fresh login session of `username`. */
async function sessionCaller(rig: AccountsRig, username: string, password: string) {
  const { token } = await rig.auth.login(username, password, '127.0.0.1');
  const caller = rig.auth.authenticate({ source: 'bearer', value: token });
  if (!caller) throw new Error('the session does not authenticate');
  return caller;
}

t.test('a caller names its credential by a reference that is no secret', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('carrier', 'Viewer');
  t.equal(u.caller.credential.kind, 'apiKey');
  t.notOk(JSON.stringify(u.caller.credential).includes(u.apiKey.slice(4)), 'the API key is not in it');
  const { token } = await rig.auth.login('carrier', u.password, '127.0.0.1');
  const session = rig.auth.authenticate({ source: 'bearer', value: token });
  t.equal(session?.credential.kind, 'session');
  t.notOk(JSON.stringify(session?.credential).includes(token.slice(4)), 'the session token is not in it');
});

t.test('recheck(caller) keeps a working API key and follows role changes', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('promoted', 'Viewer');
  rig.admin.update(rig.root, u.id, { role: 'Operator' });
  t.equal(rig.auth.recheck(u.caller)?.role, 'Operator');
});

t.test('recheck(caller) notices, from the caller alone, every way an API key stops working', async (t) => {
  const rig = await accountsRig(t);
  const regenerated = await rig.user('regenerated', 'Viewer');
  rig.admin.regenerateApiKey(rig.root, regenerated.id);
  t.equal(rig.auth.recheck(regenerated.caller), null, 'a regenerated key');
  const revoked = await rig.user('revoked', 'Viewer');
  rig.admin.revokeApiKey(rig.root, revoked.id);
  t.equal(rig.auth.recheck(revoked.caller), null, 'a revoked key');
  const disabled = await rig.user('disabled', 'Viewer');
  rig.admin.update(rig.root, disabled.id, { isEnabled: false });
  t.equal(rig.auth.recheck(disabled.caller), null, 'a disabled user');
  const deleted = await rig.user('deleted', 'Viewer');
  rig.admin.remove(rig.root, deleted.id);
  t.equal(rig.auth.recheck(deleted.caller), null, 'a deleted user');
});

t.test('recheck(caller) notices every way a session ends', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('sessions', 'Viewer');
  const kept = await sessionCaller(rig, 'sessions', u.password);
  t.equal(rig.auth.recheck(kept)?.userId, u.id, 'a live session');

  const loggedOut = await sessionCaller(rig, 'sessions', u.password);
  rig.auth.logout(loggedOut);
  t.equal(rig.auth.recheck(loggedOut), null, 'logout');
  t.equal(rig.auth.recheck(kept)?.userId, u.id, 'logout ends only its own session');

  rig.clock.now += rig.config.sessionIdleMs;
  t.equal(rig.auth.recheck(kept), null, 'idle expiry on the clock');

  const changed = await sessionCaller(rig, 'sessions', u.password);
  await rig.admin.changePassword(
    rig.root,
    u.id,
    { newPassword: 'another-password' },
    { address: '127.0.0.1', recheck: () => rig.root },
  );
  t.equal(rig.auth.recheck(changed), null, 'a password change');
});

t.test('account changes travel on the bus: user.changed for admins, then access.changed for streams', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('announced', 'Viewer');
  rig.events.length = 0;
  rig.admin.update(rig.root, u.id, { role: 'Operator' });
  t.same(
    rig.events.map((e) => [e.type, e.payload]),
    [
      ['user.changed', { userId: u.id }],
      ['access.changed', { userId: u.id }],
    ],
  );
  t.ok(isInternal(rig.events[1]!), 'access.changed is internal');

  const session = await sessionCaller(rig, 'announced', u.password);
  rig.events.length = 0;
  rig.auth.logout(session);
  t.same(
    rig.events.map((e) => e.type),
    ['access.changed'],
    'a logout changes no user, but its streams must end',
  );
});

t.test('a changed account is not served from the key cache', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('cached', 'Viewer');
  t.equal(rig.keyCaller(u.apiKey).role, 'Viewer');
  rig.admin.update(rig.root, u.id, { role: 'Operator' });
  t.equal(rig.keyCaller(u.apiKey).role, 'Operator');
  rig.admin.update(rig.root, u.id, { isEnabled: false });
  t.equal(rig.auth.authenticate({ source: 'x-api-key', value: u.apiKey }), null);
});
