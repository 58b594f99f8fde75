// What the dashboard's zone and input forms rely on: a turn-on volume above the zone's limit is refused naming the
// limit, the free zone outputs are listed, and an input device is renamed with PUT /api/input-devices/{id}.
import t, { type Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';

async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  return { d, api, events };
}

t.test(
  'a turn-on volume above the limit the request leaves is refused with a 400 naming the limit, and nothing changes',
  async (t) => {
    const { api } = await setup(t);
    const zone = (await api.get('/api/zones')).body[0];
    t.equal((await api.put(`/api/zones/${zone.id}`, { maxVolume: 0.4 })).status, 200);
    const above = await api.put(`/api/zones/${zone.id}`, { turnOnVolume: 0.8 });
    t.equal(above.status, 400, 'above the stored limit');
    t.match(above.body.errors.turnOnVolume, [/at most the volume limit, 40%/]);
    t.match(above.body.detail, /"turnOnVolume" must be at most the zone's limit "maxVolume" \(0\.4, 40%\), got 0\.8/);
    const both = await api.put(`/api/zones/${zone.id}`, { name: 'Den', maxVolume: 0.3, turnOnVolume: 0.35 });
    t.equal(both.status, 400, 'above the limit set in the same request');
    t.match(
      (await api.get(`/api/zones/${zone.id}`)).body,
      { name: zone.name, maxVolume: 0.4, turnOnVolume: null },
      'nothing was stored',
    );
    t.equal((await api.put(`/api/zones/${zone.id}`, { turnOnVolume: 0.4 })).status, 200, 'at the limit is fine');
  },
);

t.test('the free zone outputs are those of the amplifier without a zone, for admins only', async (t) => {
  const { api } = await setup(t);
  t.same((await api.get('/api/zones/free-outputs')).body, [], 'every output of the simulated amplifier has a zone');
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; output: { channel: number } }>;
  const [third, fifth] = [zones.find((z) => z.output.channel === 3)!, zones.find((z) => z.output.channel === 5)!];
  await api.del(`/api/zones/${fifth.id}`);
  await api.del(`/api/zones/${third.id}`);
  t.match(
    (await api.get('/api/zones/free-outputs')).body,
    [{ channel: 3 }, { channel: 5 }],
    'the outputs of deleted zones, in order',
  );
  const op = await createUser(api, 'free-operator', 'Operator', { playerIds: [], zoneIds: [] });
  t.equal((await api.get('/api/zones/free-outputs', { key: op.apiKey })).status, 403, 'an operator may not ask');
});

t.test(
  'an admin renames an input device; the change is stored and announced, and a bad body changes nothing',
  async (t) => {
    const { api, events } = await setup(t);
    const input = (await api.get('/api/input-devices')).body[0];
    const res = await api.put(`/api/input-devices/${input.id}`, { name: 'Record player', kind: 'turntable' });
    t.equal(res.status, 200);
    t.match(res.body, {
      id: input.id,
      name: 'Record player',
      kind: 'turntable',
      input: input.input,
      isFavorite: input.isFavorite,
    });
    t.match(
      (await api.get(`/api/input-devices/${input.id}`)).body,
      { name: 'Record player', kind: 'turntable' },
      'stored',
    );
    t.match(
      events.find((e) => e.type === 'inputDevice.updated')?.payload,
      { inputDevice: { id: input.id, name: 'Record player' } },
      'announced',
    );
    const empty = await api.put(`/api/input-devices/${input.id}`, {});
    t.equal(empty.status, 400, 'a body with neither field is refused');
    t.match(empty.body.detail, /at least one of "name" and "kind"/);
    t.equal((await api.put(`/api/input-devices/${input.id}`, { name: '' })).status, 400, 'an empty name is refused');
    const op = await createUser(api, 'input-operator', 'Operator', { playerIds: [], zoneIds: [] });
    t.equal(
      (await api.put(`/api/input-devices/${input.id}`, { name: 'Mine' }, { key: op.apiKey })).status,
      403,
      'only admins rename',
    );
    t.equal((await api.put('/api/input-devices/00000000-0000-4000-8000-000000000000', { name: 'Gone' })).status, 404);
    t.match(
      (await api.get(`/api/input-devices/${input.id}`)).body,
      { name: 'Record player' },
      'the refusals changed nothing',
    );
  },
);
