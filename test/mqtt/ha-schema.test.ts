// What Home Assistant's MQTT platforms would make of the bridge's entities, over a real mosquitto: the corner cases
// real clients hit (a detached zone, players named "None", a zone limited to 0, a zone whose unit is silent), scenes
// and sleep timers.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { haViolations } from './ha-rules.js';
import { BASE, bridged, configCount, configs, configTopic, SIMULATED_ZONE_ENTITIES } from './setup.js';

const zoneTopic = (id: string, field: string) => `${BASE}/zone/${id}/${field}`;
/**
 * The retained state topics entities refer to: the bridge's and the amplifier's status, each zone's values (tone and
 * what the amplifier reports among them) and availability.
 */
const retainedStates = (zones: ReadonlyArray<{ id: string }>) => [
  `${BASE}/status`,
  `${BASE}/amplifier/simulated/status`,
  ...zones.flatMap((z) =>
    [...SIMULATED_ZONE_ENTITIES.map(([, field]) => field), 'availability'].map((f) => zoneTopic(z.id, f)),
  ),
];

t.test(
  'every entity follows Home Assistant’s rules: a detached zone, players named "None", "none" or blank, a zone limited to 0',
  async (t) => {
    const { hub, admin, zones, nodeId } = await bridged(t, { account: 'ha-bridge', players: 0 });
    const names = ['None', 'none', ' ', 'Den', 'Den', 'No player'];
    const players: string[] = [];
    for (const [i, name] of names.entries())
      players.push((await admin.post('/api/players', { name, input: { channel: i + 1 } })).body.id);
    await createUser(admin, 'ha-bridge', 'Operator', { playerIds: players, zoneIds: zones.map((z) => z.id) });
    t.equal((await admin.put(`/api/zones/${zones[0]!.id}`, { maxVolume: 0 })).status, 200);
    t.equal((await admin.post(`/api/players/${players[0]}/attach-zones`, { zoneIds: [zones[1]!.id] })).status, 204);
    t.equal((await admin.post('/api/scenes', { name: 'Dinner', zoneIds: [zones[1]!.id, zones[2]!.id] })).status, 201);
    t.equal((await admin.put(`/api/zones/${zones[1]!.id}/sleep`, { minutes: 30 })).status, 200);

    const expected = configCount({ zones: 6, players: names.length, scenes: 1 });
    const states = retainedStates(zones);
    await hub.until(
      (w) => configs(w).length === expected && states.every((topic) => w.latest.has(topic)),
      `${expected} configs and every zone state`,
    );
    t.same(haViolations(hub.latest), [], 'nothing a hub would refuse or show as unknown');

    const options = hub.json(configTopic('select', nodeId, `zone_${zones[2]!.id}_source`)).options as string[];
    t.equal(options[0], 'No player', 'detaching is an option Home Assistant shows');
    t.equal(hub.latest.get(zoneTopic(zones[2]!.id, 'source')), 'No player', 'a detached zone shows that option');
    t.same(options.slice(1), [
      `None (${players[0]!.slice(0, 8)})`,
      `none (${players[1]!.slice(0, 8)})`,
      `Player (${players[2]!.slice(0, 8)})`,
      `Den (${players[3]!.slice(0, 8)})`,
      `Den (${players[4]!.slice(0, 8)})`,
      `No player (${players[5]!.slice(0, 8)})`,
    ]);
    t.equal(
      hub.latest.get(zoneTopic(zones[1]!.id, 'source')),
      `None (${players[0]!.slice(0, 8)})`,
      'the zone fed by the player named None says so',
    );
    t.match(
      hub.json(configTopic('number', nodeId, `zone_${zones[0]!.id}_volume`)),
      { min: 0, max: 1 },
      'the zone limited to 0 keeps a volume slider',
    );
  },
);

t.test(
  'a zone limited to 0 whose unit stops answering keeps a valid slider and goes unavailable, and every zone entity follows its availability topic',
  async (t) => {
    const { d, hub, admin, zones, nodeId } = await bridged(t);
    const zone = zones[4]!;
    const states = retainedStates(zones);
    await hub.until(
      (w) =>
        configs(w).length === configCount({ zones: 6, players: 2 }) && states.every((topic) => w.latest.has(topic)),
      'every entity and zone state',
    );
    t.equal((await admin.put(`/api/zones/${zone.id}`, { maxVolume: 0 })).status, 200);
    (d.driver as SimulatedDriver).simulateUnit([5], false, 'unit 2 does not answer');
    await hub.value(zoneTopic(zone.id, 'availability'), 'offline');
    const volume = configTopic('number', nodeId, `zone_${zone.id}_volume`);
    await hub.value(volume, (p) => JSON.parse(p).max === 1);
    t.match(
      hub.json(volume),
      { min: 0, max: 1, availability_mode: 'all' },
      'the volume entity stays, its slider valid',
    );
    for (const [component, field] of SIMULATED_ZONE_ENTITIES)
      t.ok(hub.latest.has(configTopic(component!, nodeId, `zone_${zone.id}_${field}`)), `its ${field} entity is kept`);
    t.same(
      haViolations(hub.latest),
      [],
      'every entity still follows the rules, each zone entity its own availability topic',
    );

    // The rules can fail: a zone entity that forgot its availability topic, or whose topic holds something else.
    const volumeConfig = hub.json(volume) as { availability: Array<{ topic: string }> };
    const forgotten = new Map(hub.latest).set(
      volume,
      JSON.stringify({ ...volumeConfig, availability: volumeConfig.availability.slice(0, 2) }),
    );
    t.same(haViolations(forgotten), [`${volume}: zone ${zone.id} does not follow its own availability topic`]);
    const garbled = new Map(hub.latest).set(zoneTopic(zone.id, 'availability'), 'gone');
    t.equal(
      haViolations(garbled).length,
      SIMULATED_ZONE_ENTITIES.length,
      "each of the zone's entities would stay unavailable",
    );
  },
);

t.test('the source select attaches a player named like "no option", and its detach option detaches', async (t) => {
  const { hub, admin, zones } = await bridged(t, { account: 'ha-bridge', players: 0 });
  const none = (await admin.post('/api/players', { name: 'none', input: { channel: 1 } })).body.id as string;
  await createUser(admin, 'ha-bridge', 'Operator', { playerIds: [none], zoneIds: [zones[0]!.id] });
  const source = zoneTopic(zones[0]!.id, 'source');
  await hub.value(source, 'No player');
  await hub.publish(`${source}/set`, `none (${none.slice(0, 8)})`);
  await hub.value(source, `none (${none.slice(0, 8)})`);
  t.equal((await admin.get(`/api/zones/${zones[0]!.id}`)).body.playerId, none, 'attached to the player named "none"');
  await hub.publish(`${source}/set`, 'No player');
  await hub.value(source, 'No player');
  t.equal((await admin.get(`/api/zones/${zones[0]!.id}`)).body.playerId, null, 'detached');
});

t.test('a zone limited to 0 keeps its volume entity, and a command on it leaves the zone silent', async (t) => {
  const { hub, admin, zones, nodeId } = await bridged(t);
  const zone = zones[3]!;
  const config = configTopic('number', nodeId, `zone_${zone.id}_volume`);
  await hub.value(config, (p) => JSON.parse(p).max === 100);
  t.equal((await admin.put(`/api/zones/${zone.id}`, { maxVolume: 0 })).status, 200);
  await hub.value(zoneTopic(zone.id, 'volume'), '0');
  await hub.value(config, (p) => JSON.parse(p).max === 1);
  t.match(hub.json(config), { min: 0, max: 1 }, 'min stays below max');
  await hub.publish(`${zoneTopic(zone.id, 'volume')}/set`, '1');
  await hub.publish(`${zoneTopic(zone.id, 'power')}/set`, 'ON');
  await hub.value(zoneTopic(zone.id, 'power'), 'ON');
  t.equal((await admin.get(`/api/zones/${zone.id}`)).body.volume, 0, 'the limit holds');
  t.equal(hub.latest.get(zoneTopic(zone.id, 'volume')), '0');
});

t.test('scenes the account may apply are Home Assistant scenes; activating one applies it', async (t) => {
  const { hub, admin, zones, nodeId, d } = await bridged(t);
  const [a, b, c] = zones as [(typeof zones)[0], (typeof zones)[0], (typeof zones)[0]];
  const hubUser = (
    (await admin.get('/api/users')).body as Array<{
      id: string;
      username: string;
      assignments: { playerIds: string[] };
    }>
  ).find((u) => u.username === 'hub')!;
  await admin.put(`/api/zones/${a.id}/power`, { power: true });
  await admin.put(`/api/zones/${a.id}/volume`, { volume: 0.25 });
  const dinner = (await admin.post('/api/scenes', { name: 'Dinner', zoneIds: [a.id, b.id] })).body.id as string;
  const wider = (await admin.post('/api/scenes', { name: 'Everything', zoneIds: [a.id, b.id, c.id] })).body
    .id as string;
  const config = configTopic('scene', nodeId, `scene_${dinner}`);
  await hub.value(config, () => true);
  t.match(hub.json(config), { name: 'Dinner', command_topic: `${BASE}/scene/${dinner}/set`, payload_on: 'ON' });
  await hub.value(configTopic('scene', nodeId, `scene_${wider}`), () => true);
  // Once the account sees zones a and b only, a scene that also covers c does not exist for it.
  await admin.put(`/api/users/${hubUser.id}/assignments`, {
    playerIds: hubUser.assignments.playerIds,
    zoneIds: [a.id, b.id],
  });
  await hub.gone(configTopic('scene', nodeId, `scene_${wider}`));
  t.ok(hub.latest.has(config), 'the scene of zones it sees stays');

  await admin.put(`/api/zones/${a.id}/volume`, { volume: 0.6 });
  await admin.put(`/api/zones/${a.id}/power`, { power: false });
  await hub.value(zoneTopic(a.id, 'power'), 'OFF');
  await hub.publish(`${BASE}/scene/${dinner}/set`, 'ON');
  await hub.value(zoneTopic(a.id, 'power'), 'ON');
  t.equal(await hub.value(zoneTopic(a.id, 'volume'), '25'), '25', 'the scene brought the zone back to its volume');
  t.match((await admin.get(`/api/zones/${a.id}`)).body, { power: true, volume: 0.25 });

  await hub.publish(`${BASE}/scene/${wider}/set`, 'ON');
  t.match((await d.untilLog(/MQTT command ignored/))[0], /not-found/, 'the scene it cannot see is refused like a 404');
  t.equal((await admin.del(`/api/scenes/${dinner}`)).status, 204);
  await hub.gone(config);
});

t.test('a sleep timer is a number of minutes left: set from the hub, counting down, 0 cancels', async (t) => {
  const clock = new ManualClock();
  const { hub, admin, zones, nodeId, d } = await bridged(t, { start: { clock } });
  const zone = zones[4]!;
  const sleep = zoneTopic(zone.id, 'sleep');
  await hub.value(configTopic('number', nodeId, `zone_${zone.id}_sleep`), () => true);
  t.match(hub.json(configTopic('number', nodeId, `zone_${zone.id}_sleep`)), {
    min: 0,
    max: 1440,
    step: 1,
    unit_of_measurement: 'min',
    device_class: 'duration',
  });
  await hub.value(sleep, '0');

  await hub.publish(`${sleep}/set`, '30');
  t.match(
    (await d.untilLog(/MQTT command ignored/))[0],
    /conflict: zone .* is off/,
    'a zone that is off gets no timer',
  );
  await admin.put(`/api/zones/${zone.id}/power`, { power: true });
  await hub.value(zoneTopic(zone.id, 'power'), 'ON');
  await hub.publish(`${sleep}/set`, '30');
  await hub.value(sleep, '30');
  t.equal(
    (await admin.get(`/api/zones/${zone.id}`)).body.sleepUntil,
    new Date(clock.now() + 30 * 60_000).toISOString(),
    'the zone has the timer',
  );
  clock.advance(60_000);
  await hub.value(sleep, '29');
  clock.advance(28 * 60_000 + 30_000);
  await hub.value(sleep, '1');
  clock.advance(30_000);
  await hub.value(zoneTopic(zone.id, 'power'), 'OFF');
  t.equal(await hub.value(sleep, '0'), '0', 'the timer ran out and switched the zone off');

  await admin.put(`/api/zones/${zone.id}/power`, { power: true });
  await hub.publish(`${sleep}/set`, '15');
  await hub.value(sleep, '15');
  await hub.publish(`${sleep}/set`, '0');
  await hub.value(sleep, '0');
  t.equal((await admin.get(`/api/zones/${zone.id}`)).body.sleepUntil, null, '0 cancels the timer');
  t.same(clock.dueTimes().length, 0, 'no countdown is left running');
});

/** The top-level keys of a JSON log line that appear more than once (JSON.parse would silently keep the last). */
function repeatedKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') {
      let end = i + 1;
      while (line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(line.slice(i + 1, end));
      expectKey = false;
      i = end;
    } else if (ch === '{' || ch === '[') {
      depth++;
      expectKey = ch === '{' && depth === 1;
    } else if (ch === '}' || ch === ']') depth--;
    else if (ch === ',' && depth === 1) expectKey = true;
  }
  return keys.filter((key, i) => keys.indexOf(key) !== i);
}

t.test('the bridge’s log lines name each field once', async (t) => {
  const { hub, zones, d } = await bridged(t, { role: 'Viewer' });
  t.same(repeatedKeys('{"a":1,"b":{"a":2},"a":3}'), ['a'], 'the check finds a repeated key');
  await hub.value(zoneTopic(zones[0]!.id, 'volume'), () => true);
  await hub.publish(`${zoneTopic(zones[0]!.id, 'volume')}/set`, 'loud');
  await hub.publish(`${zoneTopic(zones[0]!.id, 'power')}/set`, 'ON');
  await d.untilLog(/Viewer can read but not change/);
  const mqttLines = d.logs.filter((line) => line.includes('"component":"mqtt"'));
  t.ok(mqttLines.length >= 3, `the bridge logged (${mqttLines.length} lines)`);
  t.same(
    mqttLines.filter((line) => repeatedKeys(line).length > 0),
    [],
    'no line repeats a key',
  );
});

t.test('a broker password without a username is misconfigured: one log line, no connection attempt', async (t) => {
  const d = await startTestDaemon(t, {
    config: {
      mqtt: { ...defaultConfig().mqtt, url: 'mqtt://127.0.0.1:1', account: 'admin', password: 'lonely-password' },
    },
  });
  const health = (await client(d.base).get('/api/health')).body;
  t.match(health.mqtt, { state: 'misconfigured', detail: /password is set but no broker username/ });
  t.equal(d.logs.filter((line) => /MQTT bridge not started/.test(line)).length, 1, 'one line says why');
  t.notOk(
    d.logs.some((line) => line.includes('lonely-password')),
    'the password is not logged',
  );
  t.notOk(
    d.logs.some((line) => /MQTT bridge connecting/.test(line)),
    'no connection was attempted',
  );
});
