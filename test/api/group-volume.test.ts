// Group volume from outside: a player's volume is the average of the zones the caller sees, a change keeps their
// balance and moves only the zones the caller may touch, and relative changes (delta) apply to the daemon's value.
import t, { type Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/events.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { eventOf, isEvent, openStream } from '../helpers/sse.js';

/** A daemon with a player attached to the first two zones, set to 0.8 and 0.4. */
async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const [loud, quiet] = [zones[0]!.id, zones[1]!.id];
  const player = (await api.post('/api/players', { name: 'Group', input: { channel: 1 } })).body as { id: string };
  t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [loud, quiet] })).status, 204);
  await api.put(`/api/zones/${loud}/volume`, { volume: 0.8 });
  await api.put(`/api/zones/${quiet}/volume`, { volume: 0.4 });
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const volumeOf = async (kind: 'zones' | 'players', id: string, key?: string): Promise<number> =>
    (await api.get(`/api/${kind}/${id}`, key ? { key } : {})).body.volume;
  const playerEvents = () => events.filter((e) => e.type === 'player.volumeChanged').map((e) => e.payload);
  return { d, api, driver, zones, loud, quiet, player, events, volumeOf, playerEvents };
}

t.test("a player's volume is the average of the attached zones the caller sees", async (t) => {
  const { api, player, loud, volumeOf } = await setup(t);
  t.equal(await volumeOf('players', player.id), 0.6, 'an admin sees both zones: 0.8 and 0.4');
  const op = await createUser(api, 'one-zone-op', 'Operator', { playerIds: [player.id], zoneIds: [loud] });
  t.equal(
    await volumeOf('players', player.id, op.apiKey),
    0.8,
    'an operator who sees one of the zones sees that zone only',
  );
  const listed = (await api.get('/api/players', { key: op.apiKey })).body.find(
    (p: { id: string }) => p.id === player.id,
  );
  t.match(listed, { volume: 0.8, zoneIds: [loud] }, 'in the list too, beside the one zone it lists');
  const none = await createUser(api, 'no-zone-op', 'Operator', { playerIds: [player.id], zoneIds: [] });
  t.equal(
    await volumeOf('players', player.id, none.apiKey),
    0.6,
    'with none of its zones visible, its stored volume, which follows the zones: what an admin reads',
  );
});

t.test("an operator's event stream carries the player's volume over the zones it sees", async (t) => {
  const { d, api, player, loud, quiet } = await setup(t);
  const op = await createUser(api, 'stream-one-zone', 'Operator', { playerIds: [player.id], zoneIds: [loud] });
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': op.apiKey });
  const admin = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => [stream, admin].forEach((s) => s.close()));
  await Promise.all([stream, admin].map((s) => s.next((m) => m.retry !== undefined, 5000, 'the retry line')));
  // The admin's averages of both zones: 0.45, then 0.3. The operator's, of its one zone: 0.8, then 0.5.
  await api.put(`/api/zones/${quiet}/volume`, { volume: 0.1 });
  await api.put(`/api/zones/${loud}/volume`, { volume: 0.5 });
  const mine = await stream.next(
    isEvent('player.volumeChanged', (p) => p.volume === 0.5),
    5000,
    'the group volume of its one zone',
  );
  t.same(eventOf(mine)!.payload, { playerId: player.id, volume: 0.5 });
  await admin.next(
    isEvent('player.volumeChanged', (p) => p.volume === 0.3),
    5000,
    'the admin’s average of both',
  );
  const seen = stream.messages
    .map(eventOf)
    .filter((e) => e?.type === 'player.volumeChanged')
    .map((e) => e!.payload.volume);
  t.notOk(seen.includes(0.45) || seen.includes(0.3), `no value counting the zone it cannot see (${seen.join(', ')})`);
});

t.test(
  "events replayed to an operator resuming with Last-Event-ID carry the player's volume over the zones it sees",
  async (t) => {
    const { d, api, player, loud, quiet } = await setup(t);
    const op = await createUser(api, 'resume-one-zone', 'Operator', { playerIds: [player.id], zoneIds: [loud] });
    const first = openStream(d.base, '/api/stream/events', { 'X-API-Key': op.apiKey });
    t.teardown(() => first.close());
    await first.next((m) => m.retry !== undefined, 5000, 'the retry line');
    await api.put(`/api/zones/${loud}/volume`, { volume: 0.7 });
    const last = await first.next(
      isEvent('zone.volumeChanged', (p) => p.volume === 0.7),
      5000,
      'an event to resume after',
    );
    first.close();
    // Missed while away: the admin's averages of both zones are 0.4, then 0.3; the operator's, of its one zone, 0.7 and 0.5.
    await api.put(`/api/zones/${quiet}/volume`, { volume: 0.1 });
    await api.put(`/api/zones/${loud}/volume`, { volume: 0.5 });
    const resumed = openStream(d.base, '/api/stream/events', { 'X-API-Key': op.apiKey, 'Last-Event-ID': last.id! });
    t.teardown(() => resumed.close());
    const replayed = await resumed.next(
      isEvent('player.volumeChanged', (p) => p.volume === 0.5),
      5000,
      'the replayed group volume of its one zone',
    );
    t.match(replayed.id, /^\d+-\d+$/, 'replayed with its <run>-<seq> id');
    const seen = resumed.messages
      .map(eventOf)
      .filter((e) => e?.type === 'player.volumeChanged')
      .map((e) => e!.payload.volume);
    t.same(
      seen.filter((v) => v !== 0.7 && v !== 0.5),
      [],
      `no replayed value counts the zone it cannot see (${seen.join(', ')})`,
    );
  },
);

t.test(
  'a group change keeps the balance: 0.8 and 0.4 set to 0.3 become 0.4 and 0.2, on the amplifier too',
  async (t) => {
    const { api, driver, player, loud, quiet, volumeOf, playerEvents, events } = await setup(t);
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.3 })).status, 204);
    t.equal(await volumeOf('zones', loud), 0.4);
    t.equal(await volumeOf('zones', quiet), 0.2);
    t.equal(await volumeOf('players', player.id), 0.3);
    t.same(playerEvents(), [{ playerId: player.id, volume: 0.3 }]);
    const zoneVolumes = events.filter((e) => e.type === 'zone.volumeChanged').map((e) => e.payload);
    t.same(zoneVolumes, [
      { zoneId: loud, volume: 0.4 },
      { zoneId: quiet, volume: 0.2 },
    ]);
    await driver.settled();
    t.equal(Math.round(driver.hardwareState(1)!.volume * 38), Math.round(0.4 * 38));
    t.equal(Math.round(driver.hardwareState(2)!.volume * 38), Math.round(0.2 * 38));
  },
);

t.test(
  "an operator's group change moves only its assigned zones and leaves an unassigned zone untouched",
  async (t) => {
    const { api, player, loud, quiet, volumeOf } = await setup(t);
    const op = await createUser(api, 'kitchen-op', 'Operator', { playerIds: [player.id], zoneIds: [loud] });
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 1 }, { key: op.apiKey })).status, 204);
    t.equal(await volumeOf('zones', quiet), 0.4, 'the zone outside its assignments keeps its volume');
    t.equal(await volumeOf('zones', loud), 1, 'its own zone moved (0.8 × 1/0.8)');
    t.equal(
      await volumeOf('players', player.id, op.apiKey),
      1,
      'the operator sees its zone at the volume it asked for',
    );
    t.equal(await volumeOf('players', player.id), 0.7, 'an admin sees the new average of all its zones');
    t.equal((await api.put(`/api/players/${player.id}/volume`, { delta: -0.1 }, { key: op.apiKey })).status, 204);
    t.equal(await volumeOf('zones', loud), 0.9, "a delta applies to the operator's value (1), not the admin's (0.7)");
  },
);

t.test('when the zones to move are all at 0, each is set to the target', async (t) => {
  const { api, player, loud, quiet, volumeOf } = await setup(t);
  await api.put(`/api/players/${player.id}/volume`, { volume: 0 });
  t.equal(await volumeOf('zones', loud), 0);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.35 })).status, 204);
  t.equal(await volumeOf('zones', loud), 0.35);
  t.equal(await volumeOf('zones', quiet), 0.35);
});

t.test(
  'a player without zones keeps the last value set on it, and detaching its last zone keeps the value it showed',
  async (t) => {
    const { api, player, loud, quiet, volumeOf, playerEvents } = await setup(t);
    await api.post(`/api/players/${player.id}/detach-zones`, { zoneIds: [loud] });
    t.equal(await volumeOf('players', player.id), 0.4, 'one zone left: its volume');
    t.same(playerEvents(), [{ playerId: player.id, volume: 0.4 }], 'detach announced the change');
    await api.post(`/api/players/${player.id}/detach-zones`, { zoneIds: [quiet] });
    t.equal(await volumeOf('players', player.id), 0.4, 'no zones: the value it showed');
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.15 })).status, 204);
    t.equal(await volumeOf('players', player.id), 0.15, 'and a value set on it sticks');
    t.equal(await volumeOf('zones', loud), 0.8, 'detached zones are not moved');
  },
);

t.test('player.volumeChanged follows every path that moves the average: zone volume, keypad, attach', async (t) => {
  const { api, driver, zones, player, loud, playerEvents } = await setup(t);
  await api.put(`/api/zones/${loud}/volume`, { volume: 0.6 });
  t.same(playerEvents().at(-1), { playerId: player.id, volume: 0.5 }, 'zone volume');
  await driver.settled();
  driver.simulateKeypad(1, { volume: 8 / 38 });
  t.same(
    playerEvents().at(-1),
    { playerId: player.id, volume: Math.round(((8 / 38 + 0.4) / 2) * 1e6) / 1e6 },
    'keypad',
  );
  await api.put(`/api/zones/${zones[2]!.id}/volume`, { volume: 0.1 });
  await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[2]!.id] });
  const expected = Math.round(((8 / 38 + 0.4 + 0.1) / 3) * 1e6) / 1e6;
  t.same(playerEvents().at(-1), { playerId: player.id, volume: expected }, 'attach');
  t.equal((await api.get(`/api/players/${player.id}`)).body.volume, expected);
});

t.test('a delta changes the current zone volume on the daemon, within 0 and the zone limit', async (t) => {
  const { api, loud, volumeOf } = await setup(t);
  t.equal((await api.put(`/api/zones/${loud}/volume`, { delta: -0.1 })).status, 204);
  t.equal(await volumeOf('zones', loud), 0.7);
  await api.put(`/api/zones/${loud}`, { maxVolume: 0.75 });
  t.equal((await api.put(`/api/zones/${loud}/volume`, { delta: 0.2 })).status, 204);
  t.equal(await volumeOf('zones', loud), 0.75, 'clamped to the limit');
  t.equal((await api.put(`/api/zones/${loud}/volume`, { delta: -1 })).status, 204);
  t.equal(await volumeOf('zones', loud), 0, 'floored at 0');
});

t.test("a delta on a player applies to its derived volume and keeps the zones' balance", async (t) => {
  const { api, player, loud, quiet, volumeOf } = await setup(t);
  t.equal((await api.put(`/api/players/${player.id}/volume`, { delta: -0.3 })).status, 204);
  t.equal(await volumeOf('players', player.id), 0.3);
  t.equal(await volumeOf('zones', loud), 0.4);
  t.equal(await volumeOf('zones', quiet), 0.2);
});

t.test(
  'exactly one of volume and delta: both, neither or a delta out of range is a 400 that changes nothing',
  async (t) => {
    const { api, player, loud, quiet, volumeOf } = await setup(t);
    for (const path of [`/api/zones/${loud}/volume`, `/api/players/${player.id}/volume`]) {
      const both = await api.put(path, { volume: 0.5, delta: 0.1 });
      t.equal(both.status, 400, `${path}: both`);
      t.match(both.body.detail, /either "volume".*or "delta".*not both/);
      const neither = await api.put(path, {});
      t.equal(neither.status, 400, `${path}: neither`);
      t.match(neither.body.detail, /"volume".*or "delta".*is required/);
      for (const delta of [1.5, -2, '0.1', null]) {
        const res = await api.put(path, { delta });
        t.equal(res.status, 400, `${path}: delta ${JSON.stringify(delta)}`);
        t.ok(res.body.errors.delta, 'names the field');
      }
    }
    t.equal(await volumeOf('zones', loud), 0.8);
    t.equal(await volumeOf('zones', quiet), 0.4);
    t.equal(await volumeOf('players', player.id), 0.6);
  },
);
