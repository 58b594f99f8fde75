// The read cache (daemon/http/read-cache.ts): repeated reads skip the service, and every change shows in the next read.
import t, { type Test } from 'tap';
import { DomainEventSchema } from '../../daemon/domain/shared/events.js';
import { CACHED_ROUTES, UNSEEN_EVENTS } from '../../daemon/http/read-cache.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

t.test('cached reads', async (t) => {
  const d = await startTestDaemon(t);
  const admin = injectClient(d.daemon, d.adminKey);
  const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
  const mine = (await admin.post('/api/players', { name: 'Kitchen', input: { channel: 1 } })).body as { id: string };
  const other = (await admin.post('/api/players', { name: 'Patio', input: { channel: 2 } })).body as { id: string };
  await admin.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  await admin.post(`/api/players/${other.id}/attach-zones`, { zoneIds: [zones[2]!.id] });
  const opUser = await createUser(admin, 'cached-operator', 'Operator', {
    playerIds: [mine.id],
    zoneIds: [zones[0]!.id, zones[1]!.id],
  });
  const op = injectClient(d.daemon, opUser.apiKey);
  const players = async () =>
    (await op.get('/api/players')).body as Array<{ id: string; name: string; volume: number }>;

  /** Counts the players service's list calls for the rest of the test `t`. */
  const countListCalls = (t: Test) => {
    const service = d.daemon.services.players;
    const list = service.list;
    const counter = { calls: 0 };
    service.list = (...args) => {
      counter.calls++;
      return list.apply(service, args);
    };
    t.teardown(() => {
      service.list = list;
    });
    return counter;
  };

  t.test('a repeated read is answered without asking the players service again', async (t) => {
    const counter = countListCalls(t);
    const first = await op.get('/api/players');
    const second = await op.get('/api/players');
    t.equal(second.text, first.text, 'the same bytes');
    t.equal(second.headers.get('content-type'), 'application/json');
    t.ok(counter.calls <= 1, `the service was asked ${counter.calls} times for two reads`);
  });

  t.test("a playing player's position does not empty the cache: the reads it serves do not show it", async (t) => {
    const counter = countListCalls(t);
    await op.get('/api/players');
    const before = counter.calls;
    d.daemon.services.bus.publish({
      type: 'player.position',
      payload: { playerId: mine.id, positionMs: 1000, durationMs: null, positionAt: new Date().toISOString() },
    });
    await op.get('/api/players');
    t.equal(counter.calls, before, 'the read after the position event was answered from the cache');
  });

  t.test('no cached answer has a field of an event that leaves the cache as it is', async (t) => {
    const doc = (await admin.get('/api/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, any> }>>;
      components?: { schemas?: Record<string, unknown> };
    };
    /** Every property name an answer of this schema can carry, $refs followed. */
    const fieldsOf = (schema: any, seen = new Set<unknown>(), out = new Set<string>()): Set<string> => {
      if (!schema || typeof schema !== 'object' || seen.has(schema)) return out;
      seen.add(schema);
      if (typeof schema.$ref === 'string')
        fieldsOf(doc.components?.schemas?.[schema.$ref.split('/').pop()!], seen, out);
      for (const name of Object.keys(schema.properties ?? {})) out.add(name);
      for (const value of Object.values(schema)) if (typeof value === 'object') fieldsOf(value, seen, out);
      return out;
    };
    const carried = new Map<string, string[]>();
    for (const event of DomainEventSchema.anyOf) {
      const type = (event.properties.type as { const: string }).const;
      if (!UNSEEN_EVENTS.has(type)) continue;
      const payload = Object.keys((event.properties.payload as { properties: object }).properties);
      carried.set(
        type,
        payload.filter((name) => !name.endsWith('Id')),
      );
    }
    t.same([...carried.keys()].sort(), [...UNSEEN_EVENTS].sort(), 'each event left out is one the daemon sends');
    for (const cached of CACHED_ROUTES) {
      const [method, path] = cached.split(' ') as [string, string];
      const answer = doc.paths[path]?.[method.toLowerCase()]?.responses['200'];
      t.ok(answer, `${cached} is documented`);
      const fields = fieldsOf(answer);
      t.ok(fields.size > 0, `${cached} answers with fields`);
      for (const [type, names] of carried)
        t.same(
          names.filter((name) => fields.has(name)),
          [],
          `${cached} shows nothing ${type} changes`,
        );
    }
  });

  t.test('a volume change shows in the next read of players and zones', async (t) => {
    await players();
    await op.get('/api/zones');
    t.equal((await op.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.2 })).status, 204);
    t.equal((await op.put(`/api/zones/${zones[1]!.id}/volume`, { volume: 0.4 })).status, 204);
    await players();
    t.equal((await admin.put(`/api/players/${mine.id}/volume`, { volume: 0.6 })).status, 204);
    const player = (await players()).find((p) => p.id === mine.id)!;
    t.equal(Math.round(player.volume * 100) / 100, 0.6);
    const zone = ((await op.get('/api/zones')).body as Array<{ id: string; volume: number }>).find(
      (z) => z.id === zones[0]!.id,
    )!;
    t.equal(Math.round(zone.volume * 100) / 100, 0.4, 'the zone moved by the same proportion (0.2 × 0.6/0.3)');
  });

  t.test('a rename shows in the next read', async (t) => {
    t.teardown(() => admin.put(`/api/players/${mine.id}`, { name: 'Kitchen' }));
    t.equal((await players())[0]!.name, 'Kitchen');
    t.equal((await admin.put(`/api/players/${mine.id}`, { name: 'Kitchen (renamed)' })).status, 200);
    t.equal((await players())[0]!.name, 'Kitchen (renamed)');
  });

  t.test('an assignment change shows in the next read', async (t) => {
    const original = { playerIds: [mine.id], zoneIds: [zones[0]!.id, zones[1]!.id] };
    t.teardown(() => admin.put(`/api/users/${opUser.id}/assignments`, original));
    t.same(
      (await players()).map((p) => p.id),
      [mine.id],
    );
    t.same((await op.get('/api/users/me')).body.assignments.playerIds, [mine.id]);
    const wider = { playerIds: [mine.id, other.id], zoneIds: [...original.zoneIds, zones[2]!.id] };
    t.equal((await admin.put(`/api/users/${opUser.id}/assignments`, wider)).status, 200);
    t.same((await players()).map((p) => p.id).sort(), [mine.id, other.id].sort());
    t.same((await op.get('/api/users/me')).body.assignments.playerIds.sort(), wider.playerIds.sort());
  });

  t.test('a role change shows in the next read, and the new role is enforced', async (t) => {
    t.teardown(() => admin.put(`/api/users/${opUser.id}`, { role: 'Operator' }));
    t.equal((await op.get('/api/users/me')).body.role, 'Operator');
    t.equal((await admin.put(`/api/users/${opUser.id}`, { role: 'Viewer' })).status, 200);
    t.equal((await op.get('/api/users/me')).body.role, 'Viewer');
    t.equal((await op.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.3 })).status, 403);
    t.equal((await admin.put(`/api/users/${opUser.id}`, { role: 'Operator' })).status, 200);
    t.equal((await op.get('/api/users/me')).body.role, 'Operator');
  });

  t.test('a disabled user gets 401, not its cached answer', async (t) => {
    t.teardown(() => admin.put(`/api/users/${opUser.id}`, { isEnabled: true }));
    t.equal((await op.get('/api/players')).status, 200);
    t.equal((await admin.put(`/api/users/${opUser.id}`, { isEnabled: false })).status, 200);
    t.equal((await op.get('/api/players')).status, 401);
  });

  t.test('each user gets its own answer', async (t) => {
    t.same(
      (await players()).map((p) => p.id),
      [mine.id],
    );
    t.same(
      ((await admin.get('/api/players')).body as Array<{ id: string }>).map((p) => p.id).sort(),
      [mine.id, other.id].sort(),
    );
    t.same(
      (await players()).map((p) => p.id),
      [mine.id],
    );
  });
});
