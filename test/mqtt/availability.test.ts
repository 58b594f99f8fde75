// Availability and broker failures over a real mosquitto: last will, restarts on both sides, birth message, auth.

import { rmSync } from 'node:fs';
import t from 'tap';
import { amplifierKey, defaultConfig, type MqttConfig } from '../../daemon/config.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { client } from '../helpers/client.js';
import { startDaemon, startTestDaemon, type TestDaemon, tempDir } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { type DaemonProcess, spawnDaemon } from '../helpers/process.js';
import { WAIT_MS, waitFor, within } from '../helpers/wait-for.js';
import { BASE, bridged, configCount, configs, configTopic, PREFIX } from './setup.js';

/** Six zones and two players on the simulated amplifier, as bridged() sets them up. */
const ALL = configCount({ zones: 6, players: 2 });

const mqttConfig = (url: string, extra: Partial<MqttConfig> = {}): MqttConfig => ({
  ...defaultConfig().mqtt,
  url,
  account: 'admin',
  baseTopic: BASE,
  reconnectMinMs: 100,
  reconnectMaxMs: 400,
  ...extra,
});

/** Follows GET /api/health until the bridge reports the state (each poll is a real request), within the time limit. */
function untilBridge(d: TestDaemon, state: string): Promise<{ state: string; detail?: string }> {
  return waitFor(
    async () => {
      const health = await client(d.base).get('/api/health');
      return health.body.mqtt?.state === state ? (health.body.mqtt as { state: string; detail?: string }) : undefined;
    },
    undefined,
    { what: `the bridge to be ${state} in /api/health` },
  );
}

t.test('the last will marks the appliance offline after a SIGKILL, and a restart brings it back online', async (t) => {
  const broker = await startBroker(t);
  const hub = await Watcher.connect(t, broker.url);
  const stateDir = tempDir();
  const args = [
    '--state-dir',
    stateDir,
    '--mqtt-url',
    broker.url,
    '--mqtt-account',
    'admin',
    '--mqtt-base-topic',
    BASE,
  ];
  const env = { AZC_ADMIN_PASSWORD: 'admin-password-1', AZC_LOG_LEVEL: 'warn' };
  let running: DaemonProcess | undefined;
  t.teardown(async () => {
    // Bounded: SIGTERM, then SIGKILL if it does not exit in time.
    await running?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });
  running = await spawnDaemon({ args, env });
  await hub.value(`${BASE}/status`, 'online');
  await hub.until((w) => configs(w).length === configCount({ zones: 6 }));
  const zoneVolume = configs(hub).find((topic) => topic.includes('/number/') && topic.includes('zone_'))!;
  const volumeState = hub.json(zoneVolume).state_topic as string;
  const before = await hub.value(volumeState, () => true);

  running.child.kill('SIGKILL');
  t.match(await running.exited, { signal: 'SIGKILL' });
  t.equal(await hub.value(`${BASE}/status`, 'offline'), 'offline', 'the broker published the last will');
  // Commands sent while the appliance is away, retained or not, must not be acted on when it comes back.
  await hub.publish(`${volumeState}/set`, '99', { qos: 1 });
  await hub.publish(`${volumeState}/set`, '98', { qos: 1, retain: true });

  running = await spawnDaemon({ args, env });
  await hub.value(`${BASE}/status`, 'online');
  const stale = await hub.value(volumeState, () => true);
  t.equal(stale, before, 'no stale command was applied');
  // A fresh command round trip proves the bridge is subscribed and has handled the retained one by now.
  await hub.publish(`${volumeState.replace('/volume', '/power')}/set`, 'ON');
  await hub.value(volumeState.replace('/volume', '/power'), 'ON');
  t.equal(hub.latest.get(volumeState), before);
  await hub.publish(`${volumeState}/set`, '', { retain: true });
});

t.test(
  'a broker restart: the bridge reconnects and publishes everything again, including changes made meanwhile',
  async (t) => {
    const { broker, d, zones, admin } = await bridged(t);
    const first = await Watcher.connect(t, broker.url, ['#'], { reconnectPeriod: 0 });
    await first.until((w) => configs(w).length === ALL);
    await broker.stop();
    await untilBridge(d, 'reconnecting');
    t.equal(
      (await admin.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.77 })).status,
      204,
      'the API works while the broker is down',
    );
    await broker.start();
    await untilBridge(d, 'connected');
    // The broker kept nothing (no persistence), so all a new subscriber sees was published after the reconnect.
    const hub = await Watcher.connect(t, broker.url);
    await hub.until((w) => configs(w).length === ALL);
    t.equal(await hub.value(`${BASE}/status`, 'online'), 'online');
    t.equal(await hub.value(`${BASE}/zone/${zones[0]!.id}/volume`, '77'), '77');
  },
);

t.test("Home Assistant's birth message makes the bridge publish discovery and state again", async (t) => {
  const { hub, zones } = await bridged(t);
  const zoneStates = (messages: readonly { topic: string }[]) =>
    new Set(messages.filter((m) => m.topic.startsWith(`${BASE}/zone/`)).map((m) => m.topic.split('/')[3]));
  // Everything of the first publish is in before the mark, so only the birth message can bring what follows.
  await within(
    hub.until(
      (w) =>
        configs(w).length === ALL &&
        w.latest.has(`${BASE}/status`) &&
        zones.every((z) => w.latest.has(`${BASE}/zone/${z.id}/volume`)),
    ),
    WAIT_MS,
    'the first publish',
  );
  const mark = hub.received.length;
  await hub.publish(`${PREFIX}/status`, 'online');
  const replay = (w: Watcher) => w.received.slice(mark);
  const replayed = within(
    hub.until(
      (w) =>
        new Set(
          replay(w)
            .filter((m) => m.topic.endsWith('/config'))
            .map((m) => m.topic),
        ).size === ALL && zoneStates(replay(w)).size === zones.length,
    ),
    WAIT_MS,
    'every discovery config and every zone state again',
  );
  await t.resolves(replayed, 'the birth message brought back every discovery config and the state of every zone');
  const after = hub.received.length;
  await hub.publish(`${PREFIX}/status`, 'offline');
  // HA going offline asks for nothing; a birth afterwards does. Only the second one's replay may appear.
  await hub.publish(`${PREFIX}/status`, 'online');
  await t.resolves(
    within(
      hub.until((w) => w.received.slice(after).filter((m) => m.topic.endsWith('/config')).length >= ALL),
      WAIT_MS,
      'the discovery configs again',
    ),
    'a birth after an offline message brings the discovery configs back again',
  );
});

t.test('the daemon starts and serves the API while the broker is down, and connects once it is up', async (t) => {
  const broker = await startBroker(t);
  await broker.stop();
  const d = await startTestDaemon(t, { config: { mqtt: mqttConfig(broker.url) } });
  const health = await client(d.base).get('/api/health');
  t.equal(health.status, 200);
  t.match(health.body, { status: 'ok', mqtt: { state: /connecting|reconnecting/ } });
  t.equal((await client(d.base, d.adminKey).get('/api/zones')).status, 200);
  await broker.start();
  const hub = await Watcher.connect(t, broker.url);
  await hub.value(`${BASE}/status`, 'online');
  await untilBridge(d, 'connected');
});

t.test(
  'with password auth the bridge connects with its username and password, and a wrong one is reported, not fatal',
  async (t) => {
    const auth = { username: 'azcd', password: 'broker-secret-1' };
    const broker = await startBroker(t, { auth });
    const hub = await Watcher.connect(t, broker.url, ['#'], auth);
    const good = await startTestDaemon(t, {
      config: { mqtt: mqttConfig(broker.url, { ...auth, baseTopic: 'azc/good' }) },
    });
    await hub.value('azc/good/status', 'online');
    await untilBridge(good, 'connected');
    const bad = await startTestDaemon(t, {
      config: { mqtt: mqttConfig(broker.url, { username: 'azcd', password: 'wrong-secret-2', baseTopic: 'azc/bad' }) },
    });
    const status = await untilBridge(bad, 'reconnecting');
    t.match(status.detail, /Not authorized|Bad username or password/i);
    t.equal((await client(bad.base).get('/api/health')).body.status, 'ok', 'the appliance itself is fine');
    t.notOk(
      bad.logs.some((line) => line.includes('wrong-secret-2')),
      'the password never reaches the log',
    );
    t.notOk(hub.latest.has('azc/bad/status'));
  },
);

t.test(
  'a bridge account that does not exist is misconfigured in health, logged once, and bridged once the user exists',
  async (t) => {
    const { hub, d, admin, zones } = await bridged(t, { account: 'later' });
    await hub.value(`${BASE}/status`, 'online');
    t.equal(configs(hub).length, 0, 'nothing is published for an account that does not exist');
    t.match((await client(d.base).get('/api/health')).body.mqtt, {
      state: 'misconfigured',
      detail: /no azcd user is named "later": create it/,
    });
    // Changes that make the bridge look at the account again do not repeat the line.
    t.equal((await admin.put(`/api/zones/${zones[1]!.id}/volume`, { volume: 0.4 })).status, 204);
    await admin.post('/api/users', {
      username: 'later',
      password: 'later-password',
      role: 'Operator',
      assignments: { playerIds: [], zoneIds: [zones[0]!.id] },
    });
    await hub.until((w) => configs(w).length === configCount({ zones: 1 }));
    t.equal(
      d.logs.filter((line) => /MQTT bridge account cannot act/.test(line)).length,
      1,
      'one log line for the whole time it was missing',
    );
    t.match((await client(d.base).get('/api/health')).body.mqtt, { state: 'connected' });
    const users = (await admin.get('/api/users')).body as Array<{ id: string; username: string }>;
    await admin.put(`/api/users/${users.find((u) => u.username === 'later')!.id}`, { isEnabled: false });
    await t.resolves(
      within(
        hub.until((w) => configs(w).length === 0),
        WAIT_MS,
        'no discovery config left',
      ),
      'disabling the account removes its entities',
    );
    t.match((await client(d.base).get('/api/health')).body.mqtt, {
      state: 'misconfigured',
      detail: /"later" is disabled/,
    });
  },
);

t.test(
  "a zone's availability goes offline while its unit does not answer, and online again when it does",
  async (t) => {
    const { d, hub, admin, zones, nodeId } = await bridged(t);
    const driver = d.driver as SimulatedDriver;
    const [first, garden] = [zones[0]!, zones[4]!];
    const availability = `${BASE}/zone/${garden.id}/availability`;
    const volumeConfig = configTopic('number', nodeId, `zone_${garden.id}_volume`);
    await hub.value(availability, 'online');
    await hub.value(volumeConfig, () => true);
    t.same(
      hub.json(volumeConfig).availability,
      [
        { topic: `${BASE}/status`, payload_available: 'online', payload_not_available: 'offline' },
        { topic: `${BASE}/amplifier/simulated/status`, payload_available: 'online', payload_not_available: 'offline' },
        { topic: availability, payload_available: 'online', payload_not_available: 'offline' },
      ],
      "the zone's entities follow the bridge, the amplifier link and the zone's own availability",
    );
    t.equal(hub.json(volumeConfig).availability_mode, 'all');

    driver.simulateUnit([5], false, 'unit 2 does not answer');
    await hub.value(availability, 'offline');
    t.equal(hub.latest.get(`${BASE}/zone/${first.id}/availability`), 'online', 'a zone of another unit stays online');
    // A command to it meanwhile is refused; one to another zone afterwards marks that the first was handled.
    await hub.publish(`${BASE}/zone/${garden.id}/volume/set`, '80');
    await hub.publish(`${BASE}/zone/${first.id}/volume/set`, '33');
    await hub.value(`${BASE}/zone/${first.id}/volume`, '33');
    t.not((await admin.get(`/api/zones/${garden.id}`)).body.volume, 0.8, 'the refused command changed nothing');
    t.ok(
      d.logs.some((line) => /MQTT command ignored/.test(line) && line.includes('unit 2 does not answer')),
      'and says why in the log',
    );

    driver.simulateUnit([5], true);
    await hub.value(availability, 'online');
  },
);

t.test(
  'an amplifier taken out of the configuration leaves no entity or state behind in the broker after a restart',
  async (t) => {
    const broker = await startBroker(t);
    const hub = await Watcher.connect(t, broker.url);
    const stateDir = tempDir();
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const amplifier = (name: string) => ({
      name,
      key: amplifierKey(name),
      driver: 'simulated',
      port: undefined,
      options: {},
    });
    const start = (names: string[]) =>
      startDaemon({
        stateDir,
        configuredAmplifiers: true,
        config: { amplifiers: names.map(amplifier), mqtt: mqttConfig(broker.url) },
      });

    const first = await start(['House', 'Garage']);
    const nodeId = `azc_${first.daemon.services.udn.replace(/^uuid:/, '').replace(/-/g, '')}`;
    const admin = client(first.base, first.adminKey);
    const zones = (await admin.get('/api/zones')).body as Array<{ id: string; output: { amplifier: string } }>;
    const [house, garage] = ['House', 'Garage'].map((name) => zones.find((z) => z.output.amplifier === name)!.id);
    const radio = (await admin.post('/api/players', { name: 'Radio', input: { amplifier: 'Garage', channel: 1 } }))
      .body;
    const workshop = (await admin.post('/api/scenes', { name: 'Workshop', zoneIds: [garage] })).body;
    const everywhere = (await admin.post('/api/scenes', { name: 'Everywhere', zoneIds: [house, garage] })).body;
    const garageTopics = [
      configTopic('number', nodeId, `player_${radio.id}_volume`),
      configTopic('scene', nodeId, `scene_${workshop.id}`),
      `${BASE}/player/${radio.id}/volume`,
      configTopic('number', nodeId, `zone_${garage}_volume`),
      configTopic('binary_sensor', nodeId, 'amplifier_garage_link'),
      `${BASE}/zone/${garage}/volume`,
      `${BASE}/zone/${garage}/availability`,
      `${BASE}/amplifier/garage/status`,
    ];
    const everywhereConfig = configTopic('scene', nodeId, `scene_${everywhere.id}`);
    for (const topic of [...garageTopics, everywhereConfig]) await hub.value(topic, () => true);
    await first.stop();

    const second = await start(['House']);
    t.teardown(() => second.stop());
    for (const topic of garageTopics) await hub.gone(topic);
    t.ok(
      hub.latest.has(configTopic('number', nodeId, `zone_${house}_volume`)),
      'the entities of the amplifier still configured stay',
    );
    t.ok(hub.latest.has(everywhereConfig), 'and a scene with a zone on it (its apply skips the other)');
    t.equal(hub.latest.get(`${BASE}/zone/${house}/availability`), 'online');
    t.equal(
      (await client(second.base, first.adminKey).get(`/api/zones/${garage}`)).body.available,
      false,
      'while the API lists the zone as unavailable',
    );
  },
);

t.test(
  "health reports the bridge's state beside the zones that cannot answer; only the zones make it degraded",
  async (t) => {
    const d = await startTestDaemon(t, { config: { mqtt: mqttConfig('mqtt://127.0.0.1:1', { account: 'nobody' }) } });
    const health = async () => (await client(d.base).get('/api/health')).body;
    t.match(
      await health(),
      { status: 'ok', unavailableZones: 0, mqtt: { state: 'misconfigured', detail: /no azcd user is named "nobody"/ } },
      'a misconfigured bridge alone leaves the appliance ok',
    );
    (d.driver as SimulatedDriver).simulateUnit([5, 6], false, 'unit 2 does not answer');
    t.match(
      await health(),
      { status: 'degraded', unavailableZones: 2, mqtt: { state: 'misconfigured' } },
      'two silent zones degrade it, the bridge still says what to fix',
    );
    (d.driver as SimulatedDriver).simulateUnit([5, 6], true);
    t.match(await health(), { status: 'ok', unavailableZones: 0 });
  },
);
