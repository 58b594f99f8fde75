// Home Assistant discovery over a real mosquitto: what appears, with which keys, and how it follows changes.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { BASE, bridged, configCount, configs, configTopic, PREFIX, SIMULATED_ZONE_ENTITIES } from './setup.js';

/** Six zones and two players on the simulated amplifier, as bridged() sets them up. */
const ALL = configCount({ zones: 6, players: 2 });

import { WAIT_MS, within } from '../helpers/wait-for.js';

/** Keys Home Assistant requires (or needs for a device-bound entity) per MQTT component. */
const REQUIRED: Record<string, string[]> = {
  number: ['command_topic', 'state_topic', 'min', 'max', 'step', 'mode'],
  switch: ['command_topic', 'state_topic', 'payload_on', 'payload_off'],
  select: ['command_topic', 'state_topic', 'options'],
  // The link sensor's device class and category are checked on their own below: a zone's status sensors have neither.
  binary_sensor: ['state_topic', 'payload_on', 'payload_off'],
  button: ['command_topic', 'payload_press'],
  scene: ['command_topic', 'payload_on'],
};
const COMMON = ['name', 'unique_id', 'device', 'availability'];
const DEVICE = ['identifiers', 'name', 'manufacturer', 'model', 'sw_version', 'configuration_url'];

t.test(
  'every visible zone and player appears as Home Assistant entities with the keys each component requires',
  async (t) => {
    const { hub, zones, nodeId, d, broker } = await bridged(t);
    // 6 zones x (volume, power, mute, source, sleep timer, bass, treble, balance, loudness, paging, do-not-disturb,
    // party) + 2 player volumes + the amplifier link + "all zones off".
    await hub.until((w) => configs(w).length === ALL);
    const byComponent = new Map<string, number>();
    for (const topic of configs(hub)) {
      const [, component, node] = topic.split('/');
      t.equal(node, nodeId, `${topic} is under the appliance's node id`);
      byComponent.set(component!, (byComponent.get(component!) ?? 0) + 1);
      const config = hub.json(topic);
      for (const key of [...REQUIRED[component!]!, ...COMMON]) t.ok(key in config, `${topic} has ${key}`);
      const device = config.device as Record<string, unknown>;
      for (const key of DEVICE) t.ok(device[key], `${topic} device has ${key}`);
      t.same(device.identifiers, [nodeId]);
      t.match(device.configuration_url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    }
    t.same(Object.fromEntries(byComponent), { number: 32, switch: 18, select: 6, binary_sensor: 19, button: 1 });
    // A hub that subscribes later (Home Assistant after a restart) gets every config from the broker's retained store.
    const late = await Watcher.connect(t, broker.url, [`${PREFIX}/#`]);
    await late.until((w) => configs(w).length === ALL);
    t.ok(
      late.received.every((m) => m.retain),
      'discovery configs are retained',
    );

    const zone = zones[0]!;
    const select = hub.json(configTopic('select', nodeId, `zone_${zone.id}_source`));
    t.same(select.options, ['No player', 'Player 1', 'Player 2']);
    t.equal(select.command_topic, `${BASE}/zone/${zone.id}/source/set`);
    const volume = hub.json(configTopic('number', nodeId, `zone_${zone.id}_volume`));
    t.match(volume, { name: `${zone.name} volume`, min: 0, max: 100, mode: 'slider', availability_mode: 'all' });
    t.same(
      (volume.availability as Array<{ topic: string }>).map((a) => a.topic),
      [`${BASE}/status`, `${BASE}/amplifier/simulated/status`, `${BASE}/zone/${zone.id}/availability`],
      'a zone is available while the bridge, its amplifier link and the zone itself are up',
    );
    const link = hub.json(configTopic('binary_sensor', nodeId, 'amplifier_simulated_link'));
    t.match(link, {
      device_class: 'connectivity',
      entity_category: 'diagnostic',
      state_topic: `${BASE}/amplifier/simulated/status`,
    });
    t.equal(await hub.value(`${BASE}/amplifier/simulated/status`, 'online'), 'online');
    t.equal(await hub.value(`${BASE}/status`, 'online'), 'online');
    t.equal(d.driver.online, true);
  },
);

t.test('state topics carry each zone and player value, retained', async (t) => {
  const { hub, zones, admin, broker } = await bridged(t);
  const zone = zones[1]!;
  const player = (await admin.get('/api/players')).body[0];
  const playerVolume = `${BASE}/player/${player.id}/volume`;
  await hub.until((w) => w.latest.has(playerVolume), `${playerVolume} to be published`);
  t.equal(hub.latest.get(playerVolume), '30', 'a new player without zones starts at 30%');
  t.equal((await admin.put(`/api/zones/${zone.id}/volume`, { volume: 0.42 })).status, 204);
  t.equal(await hub.value(`${BASE}/zone/${zone.id}/volume`, '42'), '42');
  t.equal((await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zone.id] })).status, 204);
  await hub.value(`${BASE}/zone/${zone.id}/source`, 'Player 1');
  await hub.value(`${BASE}/zone/${zone.id}/power`, 'ON');
  await hub.value(`${BASE}/zone/${zone.id}/mute`, 'OFF');
  t.equal(await hub.value(playerVolume, '42'), '42', 'a player with zones reports their average: its one zone at 42%');
  const late = await Watcher.connect(t, broker.url, [`${BASE}/zone/${zone.id}/+`]);
  await late.until((w) => w.latest.size === 13);
  t.same(Object.fromEntries(late.latest), {
    [`${BASE}/zone/${zone.id}/volume`]: '42',
    [`${BASE}/zone/${zone.id}/power`]: 'ON',
    [`${BASE}/zone/${zone.id}/mute`]: 'OFF',
    [`${BASE}/zone/${zone.id}/source`]: 'Player 1',
    [`${BASE}/zone/${zone.id}/sleep`]: '0',
    [`${BASE}/zone/${zone.id}/bass`]: '0',
    [`${BASE}/zone/${zone.id}/treble`]: '0',
    [`${BASE}/zone/${zone.id}/balance`]: '0',
    [`${BASE}/zone/${zone.id}/loudness`]: 'OFF',
    [`${BASE}/zone/${zone.id}/paging`]: 'OFF',
    [`${BASE}/zone/${zone.id}/do_not_disturb`]: 'OFF',
    [`${BASE}/zone/${zone.id}/party`]: 'OFF',
    [`${BASE}/zone/${zone.id}/availability`]: 'online',
  });
  t.ok(
    late.received.every((m) => m.retain),
    'states are retained',
  );
});

t.test('renaming a zone renames its entities and keeps their unique ids', async (t) => {
  const { hub, zones, nodeId, admin } = await bridged(t);
  const zone = zones[0]!;
  const topic = configTopic('switch', nodeId, `zone_${zone.id}_power`);
  await hub.value(topic, (p) => JSON.parse(p).name === `${zone.name} power`);
  const before = hub.json(topic).unique_id;
  t.equal((await admin.put(`/api/zones/${zone.id}`, { name: 'Kitchen' })).status, 200);
  await hub.value(topic, (p) => JSON.parse(p).name === 'Kitchen power');
  t.equal(hub.json(topic).unique_id, before);
});

t.test('a player rename updates the source options of every zone', async (t) => {
  const { hub, zones, nodeId, admin } = await bridged(t);
  const player = (await admin.get('/api/players')).body[1];
  t.equal((await admin.put(`/api/players/${player.id}`, { name: 'Turntable' })).status, 200);
  const topic = configTopic('select', nodeId, `zone_${zones[3]!.id}_source`);
  const renamed = hub.value(
    topic,
    (p) => JSON.stringify(JSON.parse(p).options) === JSON.stringify(['No player', 'Player 1', 'Turntable']),
  );
  await t.resolves(within(renamed, WAIT_MS, 'the renamed source option'), 'options follow the new name');
});

t.test('deleting a zone removes its entities with empty retained configs', async (t) => {
  const { hub, zones, nodeId, admin, broker } = await bridged(t);
  const zone = zones[5]!;
  const topics = SIMULATED_ZONE_ENTITIES.map(([component, field]) =>
    configTopic(component, nodeId, `zone_${zone.id}_${field}`),
  );
  await hub.until((w) => topics.every((topic) => w.latest.has(topic)));
  t.equal((await admin.del(`/api/zones/${zone.id}`)).status, 204);
  for (const topic of topics) await hub.gone(topic);
  await hub.gone(`${BASE}/zone/${zone.id}/volume`);
  t.ok(
    topics.every((topic) => hub.received.some((m) => m.topic === topic && m.payload === '')),
    'cleared with empty messages',
  );
  // A client that connects now finds nothing of the zone: the empty messages were retained.
  const late = await Watcher.connect(t, broker.url, [`${PREFIX}/#`]);
  await late.until((w) => [...w.latest.keys()].length === configCount({ zones: 5, players: 2 }));
  t.notOk(topics.some((topic) => late.latest.has(topic)));
});

t.test('a zone taken out of the bridge account assignments disappears from the hub', async (t) => {
  const { hub, zones, nodeId, admin } = await bridged(t);
  const users = (await admin.get('/api/users')).body as Array<{
    id: string;
    username: string;
    assignments: { playerIds: string[] };
  }>;
  const bridge = users.find((u) => u.username === 'hub')!;
  const topic = configTopic('number', nodeId, `zone_${zones[0]!.id}_volume`);
  await hub.value(topic, () => true);
  const res = await admin.put(`/api/users/${bridge.id}/assignments`, {
    playerIds: bridge.assignments.playerIds,
    zoneIds: zones.slice(1).map((z) => z.id),
  });
  t.equal(res.status, 200);
  await hub.gone(topic);
  t.ok(hub.latest.has(configTopic('number', nodeId, `zone_${zones[1]!.id}_volume`)), 'the other zones stay');
});

t.test('unique ids and topics stay the same across a daemon restart', async (t) => {
  const first = await bridged(t);
  await first.hub.until((w) => configs(w).length === ALL);
  const before = new Map(configs(first.hub).map((topic) => [topic, first.hub.json(topic).unique_id]));
  await first.d.stop();
  await first.hub.value(`${BASE}/status`, 'offline');
  const again = await startTestDaemon(t, {
    stateDir: first.d.stateDir,
    config: { mqtt: { ...defaultConfig().mqtt, url: first.broker.url, account: 'hub', baseTopic: BASE } },
  });
  await first.hub.value(`${BASE}/status`, 'online');
  const fresh = await Watcher.connect(t, first.broker.url, [`${PREFIX}/#`]);
  await fresh.until((w) => configs(w).length === ALL);
  t.same(new Map(configs(fresh).map((topic) => [topic, fresh.json(topic).unique_id])), before);
  t.equal(again.daemon.services.udn, first.d.daemon.services.udn);
});

t.test('the base topic defaults to azc/ and the first 8 hex digits of the device id', async (t) => {
  const broker = await startBroker(t);
  const d = await startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, url: broker.url, account: 'admin' } },
  });
  const base = `azc/${d.daemon.services.udn
    .replace(/^uuid:/, '')
    .replace(/-/g, '')
    .slice(0, 8)}`;
  const hub = await Watcher.connect(t, broker.url);
  t.equal(await hub.value(`${base}/status`, 'online'), 'online');
  await hub.value(`${base}/amplifier/simulated/status`, 'online');
});

t.test('without a bridge account the bridge does not connect, and health and the log say why', async (t) => {
  const broker = await startBroker(t);
  const hub = await Watcher.connect(t, broker.url);
  const d = await startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, url: broker.url } } });
  const health = await client(d.base).get('/api/health');
  t.equal(health.status, 200);
  t.match(health.body.mqtt, { state: 'misconfigured', detail: /--mqtt-account.*dashboard/ });
  t.ok(
    d.logs.some((line) => /MQTT bridge not started/.test(line) && /"level":50/.test(line)),
    'an error line names the fix',
  );
  t.equal(hub.latest.size, 0, 'nothing was published');
});

t.test('without a broker URL health has no mqtt field', async (t) => {
  const d = await startTestDaemon(t);
  const health = await client(d.base).get('/api/health');
  t.notOk('mqtt' in health.body);
});
