// User administration called directly, below any route table: each operation checks the caller's permission itself.
import t from 'tap';
import type { Caller } from '../../daemon/domain/shared/access.js';
import { accountsRig } from '../helpers/accounts.js';
import { refusal } from '../helpers/refusal.js';

t.test('a Viewer or an Operator is refused every user administration, and nothing changes', async (t) => {
  const rig = await accountsRig(t);
  const target = await rig.user('target-user', 'Viewer');
  for (const role of ['Viewer', 'Operator'] as const) {
    const { caller } = await rig.user(`acting-${role.toLowerCase()}`, role);
    const keep = { currentPassword: 'ignored-password', newPassword: 'taken-over-password' };
    const attempts: Record<string, () => unknown> = {
      list: () => rig.admin.list(caller),
      'get another user': () => rig.admin.get(caller, target.id),
      create: () => rig.admin.create(caller, { username: `made-by-${role}`, password: 'made-password', role: 'Admin' }),
      update: () => rig.admin.update(caller, target.id, { role: 'Admin' }),
      remove: () => rig.admin.remove(caller, target.id),
      'read an API key': () => rig.admin.getApiKey(caller, target.id),
      'regenerate an API key': () => rig.admin.regenerateApiKey(caller, target.id),
      'revoke an API key': () => rig.admin.revokeApiKey(caller, target.id),
      'set assignments': () => rig.admin.setAssignments(caller, target.id, { playerIds: [], zoneIds: [] }),
      "change another user's password": () =>
        rig.admin.changePassword(caller, target.id, keep, { address: '192.0.2.1', recheck: () => caller }),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      t.equal(await refusal(attempt), 'forbidden', `the ${role} cannot ${what}`);
    }
  }
  const after = rig.admin.get(rig.root, target.id);
  t.equal(after.role, 'Viewer', 'the target keeps its role');
  t.ok(rig.auth.authenticate({ source: 'x-api-key', value: target.apiKey }), 'and its key');
  t.equal((await rig.auth.login('target-user', target.password, '192.0.2.2')).user.id, target.id, 'and its password');
  t.notOk(
    rig.admin.list(rig.root).some((u) => u.username.startsWith('made-by-')),
    'nobody was created',
  );
});

t.test('a user reads itself but not another user', async (t) => {
  const rig = await accountsRig(t);
  const a = await rig.user('reader-a', 'Operator');
  const b = await rig.user('reader-b', 'Viewer');
  t.equal(rig.admin.get(a.caller, a.id).username, 'reader-a');
  t.equal(await refusal(() => rig.admin.get(a.caller, b.id)), 'forbidden');
  t.equal(await refusal(() => rig.admin.get(a.caller, 'no-such-user')), 'forbidden', 'not even whether an id exists');
  t.equal(rig.admin.get(rig.root, b.id).username, 'reader-b', 'an Admin reads anyone');
});

t.test('a user changes its own password with the current one; an Admin resets another', async (t) => {
  const rig = await accountsRig(t);
  const u = await rig.user('own-password', 'Viewer');
  const change = (caller: Caller, id: string, input: { newPassword: string; currentPassword?: string }) =>
    refusal(() => rig.admin.changePassword(caller, id, input, { address: '192.0.2.3', recheck: () => caller }));
  t.equal(await change(u.caller, u.id, { currentPassword: u.password, newPassword: 'own-new-password' }), 'none');
  t.equal(await change(rig.root, u.id, { newPassword: 'reset-by-admin' }), 'none');
  t.equal((await rig.auth.login('own-password', 'reset-by-admin', '192.0.2.3')).user.id, u.id);
});

t.test('an Admin demoted while its new user is hashed creates nobody', async (t) => {
  const rig = await accountsRig(t);
  const b = await rig.user('second-admin', 'Admin');
  const demoted = () => {
    rig.admin.update(rig.root, b.id, { role: 'Operator' });
    return rig.keyCaller(b.apiKey);
  };
  const input = { username: 'made-while-demoted', password: 'made-password', role: 'Viewer' as const };
  t.equal(await refusal(() => rig.admin.create(b.caller, input, { recheck: demoted })), 'forbidden');
  t.notOk(rig.admin.list(rig.root).some((u) => u.username === 'made-while-demoted'));
});

t.test("an Admin demoted while resetting another user's password changes nothing", async (t) => {
  const rig = await accountsRig(t);
  const b = await rig.user('resetting-admin', 'Admin');
  const c = await rig.user('reset-target', 'Viewer');
  const demoted = () => {
    rig.admin.update(rig.root, b.id, { role: 'Viewer' });
    return rig.keyCaller(b.apiKey);
  };
  const result = await refusal(() =>
    rig.admin.changePassword(
      b.caller,
      c.id,
      { newPassword: 'taken-over-password' },
      { address: '192.0.2.4', recheck: demoted },
    ),
  );
  t.equal(result, 'forbidden');
  t.equal(
    (await rig.auth.login('reset-target', c.password, '192.0.2.4')).user.id,
    c.id,
    'the old password still works',
  );
});

t.test('the last enabled Admin can be neither demoted, disabled nor deleted', async (t) => {
  const rig = await accountsRig(t);
  const id = rig.root.userId;
  t.equal(await refusal(() => rig.admin.update(rig.root, id, { role: 'Operator' })), 'invalid');
  t.equal(await refusal(() => rig.admin.update(rig.root, id, { isEnabled: false })), 'invalid');
  t.equal(await refusal(() => rig.admin.remove(rig.root, id)), 'invalid');
  t.equal(rig.admin.get(rig.root, id).role, 'Admin');
});
