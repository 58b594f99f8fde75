// POST /api/zones/all-off from outside: every zone the caller may see that is on goes off, nothing else does.
import t, { type Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/events.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

/** A daemon whose first four zones are on (the last two off). */
async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const ids = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((z) => z.id);
  for (const id of ids.slice(0, 4)) t.equal((await api.put(`/api/zones/${id}/power`, { power: true })).status, 204);
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const powerOf = async (id: string): Promise<boolean> => (await api.get(`/api/zones/${id}`)).body.power;
  return { d, api, driver, ids, events, powerOf };
}

t.test('an admin switches off every zone that is on and learns which ones', async (t) => {
  const { api, driver, ids, events, powerOf } = await setup(t);
  const res = await api.post('/api/zones/all-off');
  t.equal(res.status, 200);
  t.same([...res.body.zoneIds].sort(), ids.slice(0, 4).sort(), 'the zones that were on, not those already off');
  for (const id of ids) t.equal(await powerOf(id), false);
  await driver.settled();
  for (let channel = 1; channel <= 6; channel++)
    t.equal(driver.hardwareState(channel)!.power, false, `amplifier zone ${channel} is off`);
  const off = events.filter((e) => e.type === 'zone.powerChanged').map((e) => e.payload);
  t.same(off.length, 4);
  t.ok(off.every((p) => p.power === false));
  t.same(
    (await api.post('/api/zones/all-off')).body,
    { zoneIds: [], skipped: [] },
    'a second call has nothing left to switch off',
  );
});

t.test('an operator switches off only the zones in its assignments', async (t) => {
  const { api, ids, powerOf } = await setup(t);
  const op = await createUser(api, 'upstairs', 'Operator', { playerIds: [], zoneIds: [ids[0]!, ids[4]!] });
  const res = await api.post('/api/zones/all-off', undefined, { key: op.apiKey });
  t.equal(res.status, 200);
  t.same(res.body, { zoneIds: [ids[0]], skipped: [] }, 'its zone that was on');
  t.equal(await powerOf(ids[0]!), false);
  for (const id of ids.slice(1, 4)) t.equal(await powerOf(id), true, 'zones outside its assignments stay on');
});

t.test('a viewer cannot switch everything off, and nothing changes', async (t) => {
  const { api, ids, powerOf } = await setup(t);
  const viewer = await createUser(api, 'watcher', 'Viewer', { playerIds: [], zoneIds: ids });
  const res = await api.post('/api/zones/all-off', undefined, { key: viewer.apiKey });
  t.equal(res.status, 403);
  t.equal(res.headers.get('content-type'), 'application/problem+json');
  for (const id of ids.slice(0, 4)) t.equal(await powerOf(id), true);
});

t.test('all off ends the sleep timers of the zones it switches off', async (t) => {
  const { d, api, ids, events } = await setup(t);
  const admin = d.daemon.services.authentication.callerOfAccount('admin')!;
  d.daemon.services.zoneSleep.set(admin, ids[1]!, Date.now() + 3_600_000);
  t.type((await api.get(`/api/zones/${ids[1]}`)).body.sleepUntil, 'string');
  await api.post('/api/zones/all-off');
  t.equal((await api.get(`/api/zones/${ids[1]}`)).body.sleepUntil, null);
  t.same(events.filter((e) => e.type === 'zone.sleepChanged').at(-1)?.payload, { zoneId: ids[1], sleepUntil: null });
});

t.test('all-off is its own route, not a zone id', async (t) => {
  const { api } = await setup(t);
  const res = await api.get('/api/zones/all-off');
  t.equal(res.status, 405, 'GET is not allowed there (it is not read as GET /api/zones/{id})');
  t.equal(res.headers.get('allow'), 'POST');
});
