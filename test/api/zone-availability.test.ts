// A unit of the amplifier that stops answering: its zones are unavailable (API, events, health), every write to them is
// a 409 that changes nothing, multi-zone writes skip them and say so, and they come back by themselves.

import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import type { StampedEvent, ZoneView } from '../../daemon/domain/shared/events.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import type { StartOptions } from '../helpers/daemon.js';
import { startDaemon, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { isEvent, openStream } from '../helpers/sse.js';

const UNIT = 'unit 2 does not answer';
const REASON = `amplifier "simulated" (driver simulated): ${UNIT}`;

type Zone = ZoneView;

/**
 * A simulated amplifier whose zones 5 and 6 are "unit 2"; `unplug` makes that unit stop answering. `sentTo(channel)`
 * lists the changes the daemon handed the driver for a channel since the unit was unplugged (the simulated driver
 * drops them, so its hardware state alone could not tell).
 */
async function setup(t: Test, options: StartOptions = {}) {
  const driver = new SimulatedDriver({ applyDelayMs: 1 });
  const sent: Array<{ channel: number; change: unknown }> = [];
  const setZone = driver.setZone.bind(driver);
  driver.setZone = (channel, change) => {
    sent.push({ channel, change });
    setZone(channel, change);
  };
  const d = await startTestDaemon(t, { ...options, driver });
  const api = injectClient(d.daemon, d.adminKey);
  const ids = ((await api.get('/api/zones')).body as Zone[]).map((z) => z.id);
  const zone = async (id: string): Promise<Zone> => (await api.get(`/api/zones/${id}`)).body;
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const ok = async (reply: Promise<{ status: number; text: string }>, what: string) => {
    const res = await reply;
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  };
  return {
    d,
    api,
    driver,
    ids,
    zone,
    events,
    ok,
    sentTo: (channel: number) => sent.filter((s) => s.channel === channel),
    unplug: () => {
      driver.simulateUnit([5, 6], false, UNIT);
      sent.length = 0;
    },
    replug: () => driver.simulateUnit([5, 6], true),
  };
}

t.test(
  'zones whose unit stops answering are unavailable with the reason, in GET and on the event stream',
  async (t) => {
    const { d, api, ids, zone, unplug } = await setup(t);
    const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
    t.teardown(() => stream.close());
    await stream.next((m) => m.retry !== undefined);
    t.match(await zone(ids[4]!), { available: true, unavailableReason: null }, 'available while the unit answers');

    unplug();
    t.match(await zone(ids[4]!), { available: false, unavailableReason: REASON });
    t.match(await zone(ids[5]!), { available: false, unavailableReason: REASON });
    const listed = (await api.get('/api/zones')).body as Zone[];
    t.same(
      listed.map((z) => z.available),
      [true, true, true, true, false, false],
      'listed, not hidden; the zones of the other unit stay available',
    );
    for (const id of [ids[4], ids[5]]) {
      const message = await stream.next(
        isEvent('zone.availabilityChanged', (p) => p.zoneId === id),
        5000,
        `the event for ${id}`,
      );
      t.same(JSON.parse(message.data!).payload, { zoneId: id, available: false, reason: REASON });
    }
    const health = (await api.get('/api/health')).body;
    t.equal(health.status, 'degraded', 'health does not say ok while a unit is missing');
    t.equal(health.unavailableZones, 2, 'and counts the zones that cannot answer');
    t.same(
      health.amplifiers,
      [{ name: 'simulated', driver: 'simulated', online: true }],
      'the amplifier itself is online',
    );
  },
);

t.test('an operator hears of availability only for the zones assigned to it', async (t) => {
  const { d, api, ids, unplug } = await setup(t);
  const op = await createUser(api, 'unit-op', 'Operator', { playerIds: [], zoneIds: [ids[0]!, ids[5]!] });
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': op.apiKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);
  unplug();
  await stream.next(
    isEvent('zone.availabilityChanged', (p) => p.zoneId === ids[5]),
    5000,
    'its own zone',
  );
  // A change of its other zone marks the point up to which every earlier event has been sent.
  t.equal((await api.put(`/api/zones/${ids[0]}/volume`, { volume: 0.42 })).status, 204);
  await stream.next(
    isEvent('zone.volumeChanged', (p) => p.zoneId === ids[0]),
    5000,
    'the marker',
  );
  t.notOk(
    stream.messages.some(isEvent('zone.availabilityChanged', (p) => p.zoneId === ids[4])),
    'nothing about a zone it does not see',
  );
});

t.test(
  'every write to a zone that cannot answer is a 409 naming the amplifier and the unit, and changes nothing',
  async (t) => {
    const { d, api, driver, ids, zone, events, ok, unplug, sentTo } = await setup(t);
    const z5 = ids[4]!;
    const owner = (await api.post('/api/players', { name: 'Owner', input: { channel: 1 } })).body;
    const other = (await api.post('/api/players', { name: 'Other', input: { channel: 2 } })).body;
    await ok(api.post(`/api/players/${owner.id}/attach-zones`, { zoneIds: [z5] }), 'attach');
    await ok(api.put(`/api/zones/${z5}/volume`, { volume: 0.5 }), 'volume');
    await driver.settled();
    unplug();
    const before = await zone(z5);
    const hardware = driver.hardwareState(5);
    const seen = events.length;

    const writes: Array<[string, 'put' | 'post', string, unknown]> = [
      ['volume', 'put', `/api/zones/${z5}/volume`, { volume: 0.9 }],
      ['a volume delta', 'put', `/api/zones/${z5}/volume`, { delta: 0.1 }],
      ['mute', 'put', `/api/zones/${z5}/mute`, { muted: true }],
      ['power', 'put', `/api/zones/${z5}/power`, { power: false }],
      ['a sleep timer', 'put', `/api/zones/${z5}/sleep`, { minutes: 30 }],
      ['attach to another player', 'post', `/api/players/${other.id}/attach-zones`, { zoneIds: [z5] }],
      [
        'attach together with an available zone',
        'post',
        `/api/players/${other.id}/attach-zones`,
        { zoneIds: [ids[0], z5] },
      ],
      ['detach', 'post', `/api/players/${owner.id}/detach-zones`, { zoneIds: [z5] }],
    ];
    for (const [what, method, path, body] of writes) {
      const res = await api[method](path, body);
      t.equal(res.status, 409, what);
      t.equal(res.headers.get('content-type'), 'application/problem+json', `${what}: problem details`);
      t.match(
        res.body.detail,
        new RegExp(`zone "Zone 5" \\(${z5}\\): amplifier "simulated" \\(driver simulated\\): ${UNIT}`),
        `${what}: names the amplifier and the unit`,
      );
      t.match(res.body.detail, /once its unit answers/, `${what}: says how it gets better`);
    }
    t.same(await zone(z5), before, 'the row is unchanged');
    t.equal((await zone(ids[0]!)).playerId, null, 'an attach refused whole leaves the available zone alone too');
    await driver.settled();
    t.same(sentTo(5), [], 'nothing was sent to the amplifier');
    t.same(driver.hardwareState(5), hardware);
    t.same(events.slice(seen), [], 'no event claims a change');
    t.equal(d.daemon.services.zoneSleep.timers().length, 0, 'no timer was set');
  },
);

t.test(
  'settings of a zone that cannot answer are stored; a lowered limit holds its volume once it answers again',
  async (t) => {
    const { api, driver, ids, zone, ok, unplug, replug, sentTo } = await setup(t);
    const z5 = ids[4]!;
    await ok(api.put(`/api/zones/${z5}/volume`, { volume: 0.5 }), 'volume');
    await driver.settled();
    unplug();
    const res = await api.put(`/api/zones/${z5}`, { name: 'Garden', maxVolume: 0.3 });
    t.equal(res.status, 200, 'name and limits are admin data, not hardware writes');
    t.match(
      res.body,
      { name: 'Garden', maxVolume: 0.3, volume: 0.5, available: false },
      'the volume is not claimed to have moved',
    );
    await driver.settled();
    t.same(sentTo(5), [], 'the amplifier was not written');

    replug();
    t.match(await zone(z5), { name: 'Garden', volume: 0.3, available: true }, 'back: held to the new limit');
    await driver.settled();
    t.equal(Math.round(driver.hardwareState(5)!.volume * 38), Math.round(0.3 * 38), 'on the amplifier too');
  },
);

t.test('group volume moves the zones that can answer and keeps the others; a 409 when none of them can', async (t) => {
  const { api, driver, ids, zone, ok, unplug } = await setup(t);
  const group = (await api.post('/api/players', { name: 'Group', input: { channel: 1 } })).body;
  await ok(api.post(`/api/players/${group.id}/attach-zones`, { zoneIds: [ids[0], ids[4]] }), 'attach');
  await ok(api.put(`/api/zones/${ids[0]}/volume`, { volume: 0.8 }), 'volume');
  await ok(api.put(`/api/zones/${ids[4]}/volume`, { volume: 0.4 }), 'volume');
  const upstairs = (await api.post('/api/players', { name: 'Upstairs', input: { channel: 2 } })).body;
  await ok(api.post(`/api/players/${upstairs.id}/attach-zones`, { zoneIds: [ids[5]] }), 'attach');
  await ok(api.put(`/api/zones/${ids[5]}/volume`, { volume: 0.25 }), 'volume');
  await driver.settled();
  unplug();

  t.equal((await api.put(`/api/players/${group.id}/volume`, { volume: 0.4 })).status, 204);
  t.equal((await zone(ids[0]!)).volume, 0.4, 'the zone that answers moved (0.8 × 0.4/0.8)');
  t.equal((await zone(ids[4]!)).volume, 0.4, 'the one that cannot kept its volume');

  const refused = await api.put(`/api/players/${upstairs.id}/volume`, { volume: 0.9 });
  t.equal(refused.status, 409, 'every zone of the player is on the missing unit');
  t.match(refused.body.detail, UNIT);
  t.equal((await zone(ids[5]!)).volume, 0.25, 'nothing changed');
  t.match(
    (await api.get(`/api/players/${upstairs.id}`)).body,
    { available: true, volume: 0.25 },
    "the player's own amplifier is configured",
  );
});

t.test(
  "an operator's group volume counts the zones it sees, moves those that answer, and is a 409 when none of them can",
  async (t) => {
    const { api, driver, ids, zone, ok, unplug } = await setup(t);
    const group = (await api.post('/api/players', { name: 'Group', input: { channel: 1 } })).body;
    await ok(api.post(`/api/players/${group.id}/attach-zones`, { zoneIds: [ids[0], ids[1], ids[4]] }), 'attach');
    for (const [id, volume] of [
      [ids[0], 0.8],
      [ids[1], 0.2],
      [ids[4], 0.4],
    ] as const)
      await ok(api.put(`/api/zones/${id}/volume`, { volume }), 'volume');
    const op = await createUser(api, 'two-zone-op', 'Operator', { playerIds: [group.id], zoneIds: [ids[0]!, ids[4]!] });
    await driver.settled();
    unplug();

    t.equal(
      (await api.get(`/api/players/${group.id}`, { key: op.apiKey })).body.volume,
      0.6,
      'its view averages the zones it sees, the silent one too',
    );
    t.equal((await api.put(`/api/players/${group.id}/volume`, { delta: 0.1 }, { key: op.apiKey })).status, 204);
    t.equal(
      (await zone(ids[0]!)).volume,
      0.9,
      'the delta applies to the zone that moves (0.8 + 0.1), never turning it down',
    );
    t.equal((await zone(ids[4]!)).volume, 0.4, 'the zone that cannot answer kept its volume');
    t.equal((await zone(ids[1]!)).volume, 0.2, 'the zone it cannot see kept its volume');

    const silentOnly = await createUser(api, 'silent-zone-op', 'Operator', {
      playerIds: [group.id],
      zoneIds: [ids[4]!],
    });
    const refused = await api.put(`/api/players/${group.id}/volume`, { volume: 0.1 }, { key: silentOnly.apiKey });
    t.equal(refused.status, 409, 'none of the zones it may touch can answer, though zones it cannot see could');
    t.match(refused.body.detail, UNIT);
    t.same(
      [(await zone(ids[0]!)).volume, (await zone(ids[1]!)).volume, (await zone(ids[4]!)).volume],
      [0.9, 0.2, 0.4],
      'nothing changed',
    );
  },
);

t.test('all off switches off the zones that can answer and names those it skipped', async (t) => {
  const { api, driver, ids, zone, ok, unplug, sentTo } = await setup(t);
  for (const id of [ids[0], ids[4]]) await ok(api.put(`/api/zones/${id}/power`, { power: true }), 'power');
  await driver.settled();
  unplug();
  const res = await api.post('/api/zones/all-off');
  t.equal(res.status, 200);
  t.same(res.body, { zoneIds: [ids[0]], skipped: [{ zoneId: ids[4], reason: REASON }] });
  t.match(await zone(ids[4]!), { power: true }, 'the skipped zone keeps its last known state');
  await driver.settled();
  t.same(sentTo(5), [], 'and the amplifier was not asked');
  t.equal(driver.hardwareState(1)!.power, false);
});

t.test(
  'a scene apply skips zones that cannot answer and says which; its undo leaves them alone; a 409 when none can answer',
  async (t) => {
    const { api, driver, ids, zone, ok, unplug, sentTo } = await setup(t);
    const [z1, z5] = [ids[0]!, ids[4]!];
    for (const id of [z1, z5]) {
      await ok(api.put(`/api/zones/${id}/power`, { power: true }), 'power');
      await ok(api.put(`/api/zones/${id}/volume`, { volume: 0.6 }), 'volume');
    }
    const both = (await api.post('/api/scenes', { name: 'Both', zoneIds: [z1, z5] })).body;
    const upstairs = (await api.post('/api/scenes', { name: 'Upstairs', zoneIds: [z5] })).body;
    for (const id of [z1, z5]) await ok(api.put(`/api/zones/${id}/volume`, { volume: 0.2 }), 'volume');
    await driver.settled();
    unplug();

    const applied = await api.post(`/api/scenes/${both.id}/apply`);
    t.equal(applied.status, 200);
    t.same(applied.body, { applied: both.id, zoneIds: [z1], skipped: [{ zoneId: z5, reason: REASON }] });
    t.equal((await zone(z1)).volume, 0.6);
    t.equal((await zone(z5)).volume, 0.2, 'the skipped zone is left as it was');
    t.same(sentTo(5), [], 'and its amplifier unit was not asked');
    const undo = await api.post('/api/scenes/undo');
    t.same(
      undo.body,
      { applied: 'undo', zoneIds: [z1], skipped: [] },
      'the undo slot holds only the zone the apply set',
    );
    t.equal((await zone(z1)).volume, 0.2);

    const none = await api.post(`/api/scenes/${upstairs.id}/apply`);
    t.equal(none.status, 409, 'no zone of the scene can answer');
    t.match(none.body.detail, UNIT);
    t.equal((await api.post('/api/scenes/undo')).body.zoneIds[0], z1, 'a refused apply left the undo slot as it was');

    const captured = (await api.post('/api/scenes', { name: 'Everything' })).body;
    t.same(
      captured.zones.map((z: { zoneId: string }) => z.zoneId),
      ids.slice(0, 4),
      'a scene saved without a zone list captures the zones that can answer',
    );
    const naming = await api.post('/api/scenes', { name: 'Garden', zoneIds: [z1, z5] });
    t.equal(naming.status, 409, 'the present state of a zone that cannot answer is not known, so it is not captured');
    t.match(naming.body.detail, UNIT);
  },
);

t.test(
  'a sleep timer that comes due on a zone that cannot answer is cleared and logged; a cancel works on such a zone',
  async (t) => {
    const clock = new ManualClock();
    const { d, api, driver, ids, zone, ok, unplug, sentTo } = await setup(t, { clock });
    const [z5, z6] = [ids[4]!, ids[5]!];
    for (const id of [z5, z6]) {
      await ok(api.put(`/api/zones/${id}/power`, { power: true }), 'power');
      await ok(api.put(`/api/zones/${id}/sleep`, { minutes: 10 }), 'sleep');
    }
    await driver.settled();
    unplug();
    const cancel = await api.put(`/api/zones/${z6}/sleep`, { minutes: 0 });
    t.equal(cancel.status, 200, 'cancelling writes nothing to the amplifier');
    t.match(cancel.body, { sleepUntil: null });

    clock.advance(10 * 60_000);
    t.match(
      await zone(z5),
      { sleepUntil: null, power: true, available: false },
      'the timer is gone and the zone is not claimed to be off',
    );
    t.same(sentTo(5), [], 'no power-off was sent');
    const line = d.logs
      .map((l) => JSON.parse(l))
      .find((l) => /sleep timer due on a zone that cannot answer/.test(l.msg));
    t.match(line, { zoneId: z5, reason: REASON, level: 40 }, 'logged at warn with the reason');
    t.same(clock.dueTimes(), [], 'nothing left waiting');
  },
);

t.test('when the unit answers again its zones are available, the event is sent, and writes work', async (t) => {
  const { d, api, driver, ids, zone, ok, unplug, replug } = await setup(t);
  const z5 = ids[4]!;
  await ok(api.put(`/api/zones/${z5}/power`, { power: true }), 'power');
  await driver.settled();
  unplug();
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);
  replug();
  const message = await stream.next(
    isEvent('zone.availabilityChanged', (p) => p.zoneId === z5),
    5000,
    'the zone back',
  );
  t.same(JSON.parse(message.data!).payload, { zoneId: z5, available: true, reason: null });
  t.match(await zone(z5), { available: true, unavailableReason: null });
  t.equal((await api.put(`/api/zones/${z5}/volume`, { volume: 0.65 })).status, 204);
  await driver.settled();
  t.equal(Math.round(driver.hardwareState(5)!.volume * 38), Math.round(0.65 * 38));
  t.equal((await api.get('/api/health')).body.status, 'ok');
});

t.test(
  'a zone that answers again shows what the amplifier holds, not what was recorded while it could not answer',
  async (t) => {
    const { api, driver, ids, zone, ok, unplug, replug } = await setup(t);
    const z5 = ids[4]!;
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
    await ok(api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [z5] }), 'attach');
    await driver.settled();
    unplug();
    t.equal((await api.del(`/api/players/${player.id}`)).status, 204, 'an admin deletes the player meanwhile');
    t.match(await zone(z5), { playerId: null, muted: true }, 'recorded: detached and muted');
    replug();
    t.match(
      await zone(z5),
      { muted: false, power: true },
      'the amplifier never got the mute: the zone says what it plays',
    );
  },
);

t.test('an admin deletes a zone whose unit is gone for good, and a later start does not recreate it', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const driver = new SimulatedDriver({ applyDelayMs: 1 });
  const first = await startDaemon({ stateDir, driver });
  const api = injectClient(first.daemon, first.adminKey);
  const ids = ((await api.get('/api/zones')).body as Zone[]).map((z) => z.id);
  const op = await createUser(api, 'garden-op', 'Operator', { playerIds: [], zoneIds: [ids[5]!] });
  driver.simulateUnit([6], false, UNIT);
  t.equal((await api.del(`/api/zones/${ids[5]}`)).status, 204);
  t.equal((await api.get(`/api/zones/${ids[5]}`)).status, 404);
  t.same((await api.get(`/api/users/${op.id}`)).body.assignments.zoneIds, [], 'its operator no longer names it');
  await first.stop();

  const second = await startDaemon({ stateDir });
  t.teardown(() => second.stop());
  const zones = (await injectClient(second.daemon, first.adminKey).get('/api/zones')).body as Zone[];
  t.same(
    zones.map((z) => z.id),
    ids.slice(0, 5),
    'the deleted zone stays deleted',
  );
});

t.test(
  'the OpenAPI document declares the 409 of every write route that refuses such zones, the fields and the event',
  async (t) => {
    const { api } = await setup(t);
    const doc = (await api.get('/api/openapi.json')).body;
    const writes: Array<[string, string]> = [
      ['/api/zones/{id}/volume', 'put'],
      ['/api/zones/{id}/mute', 'put'],
      ['/api/zones/{id}/power', 'put'],
      ['/api/zones/{id}/sleep', 'put'],
      ['/api/players/{id}/volume', 'put'],
      ['/api/players/{id}/attach-zones', 'post'],
      ['/api/players/{id}/detach-zones', 'post'],
      ['/api/scenes/{id}/apply', 'post'],
      ['/api/scenes/undo', 'post'],
    ];
    for (const [path, method] of writes)
      t.ok(doc.paths[path][method].responses['409'], `${method.toUpperCase()} ${path} declares 409`);
    for (const path of ['/api/zones/all-off', '/api/scenes/{id}/apply']) {
      const schema = doc.paths[path].post.responses['200'].content['application/json'].schema;
      t.ok(schema.properties.skipped, `${path} answers with skipped`);
    }
    const zone = doc.paths['/api/zones/{id}'].get.responses['200'].content['application/json'].schema;
    t.ok(zone.properties.available && zone.properties.unavailableReason, 'zones carry available and unavailableReason');
    const eventTypes = doc.components.schemas.Event.anyOf.map(
      (e: { properties: { type: { const: string } } }) => e.properties.type.const,
    );
    t.ok(eventTypes.includes('zone.availabilityChanged'));
  },
);
