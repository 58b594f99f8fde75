// Commands from a Home Assistant-like client through a real mosquitto: amplifier, state topics, permissions, garbage.
import t from 'tap';
import { WARN_BUDGET } from '../../daemon/mqtt/options.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { FAST } from '../drivers/monoprice-rig.js';
import { emulatorOnPty } from '../drivers/serial-rig.js';
import { client } from '../helpers/client.js';
import { WAIT_MS, within } from '../helpers/wait-for.js';
import { BASE, bridged } from './setup.js';

const zoneTopic = (id: string, field: string) => `${BASE}/zone/${id}/${field}`;

t.test('a volume command from the hub drives the amplifier and comes back on the state topic', async (t) => {
  const { hub, zones, d, admin } = await bridged(t);
  const zone = zones[2]!;
  await hub.value(zoneTopic(zone.id, 'volume'), () => true);
  await hub.publish(`${zoneTopic(zone.id, 'volume')}/set`, '55');
  t.equal(await hub.value(zoneTopic(zone.id, 'volume'), '55'), '55');
  await d.driver.settled();
  t.equal(d.driver.hardwareState(3)!.volume, Math.round(0.55 * 38) / 38, 'the amplifier is at the matching step');
  t.equal((await admin.get(`/api/zones/${zone.id}`)).body.volume, 0.55, 'the API shows the same value');
});

t.test('power and mute switches drive the zone', async (t) => {
  const { hub, zones, d } = await bridged(t);
  const zone = zones[0]!;
  await hub.value(zoneTopic(zone.id, 'power'), 'OFF');
  await hub.publish(`${zoneTopic(zone.id, 'power')}/set`, 'ON');
  await hub.value(zoneTopic(zone.id, 'power'), 'ON');
  await hub.publish(`${zoneTopic(zone.id, 'mute')}/set`, 'ON');
  await hub.value(zoneTopic(zone.id, 'mute'), 'ON');
  await d.driver.settled();
  t.match(d.driver.hardwareState(1), { power: true, muted: true });
});

t.test(
  'choosing a player on the source select attaches the zone, and "None" (as older versions offered) detaches it',
  async (t) => {
    const { hub, zones, admin, d } = await bridged(t);
    const zone = zones[4]!;
    const players = (await admin.get('/api/players')).body as Array<{
      id: string;
      name: string;
      input: { channel: number };
    }>;
    await hub.publish(`${zoneTopic(zone.id, 'source')}/set`, 'Player 2');
    await hub.value(zoneTopic(zone.id, 'source'), 'Player 2');
    t.equal((await admin.get(`/api/zones/${zone.id}`)).body.playerId, players[1]!.id);
    await d.driver.settled();
    t.match(d.driver.hardwareState(5), { power: true, source: players[1]!.input.channel, muted: false });
    await hub.publish(`${zoneTopic(zone.id, 'source')}/set`, 'None');
    await hub.value(zoneTopic(zone.id, 'source'), 'No player');
    t.equal((await admin.get(`/api/zones/${zone.id}`)).body.playerId, null);
    t.equal(await hub.value(zoneTopic(zone.id, 'mute'), 'ON'), 'ON', 'a detached zone is muted, as in the API');
  },
);

t.test('a player volume command moves the group and every attached zone', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const player = (await admin.get('/api/players')).body[0];
  await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  await hub.publish(`${BASE}/player/${player.id}/volume/set`, '20');
  await hub.value(`${BASE}/player/${player.id}/volume`, '20');
  await hub.value(zoneTopic(zones[0]!.id, 'volume'), '20');
  await hub.value(zoneTopic(zones[1]!.id, 'volume'), '20');
  t.equal((await admin.get(`/api/players/${player.id}`)).body.volume, 0.2);
});

t.test('the all zones off button switches every zone the bridge may see off', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const player = (await admin.get('/api/players')).body[0];
  await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: zones.map((z) => z.id) });
  await hub.until((w) => zones.every((z) => w.latest.get(zoneTopic(z.id, 'power')) === 'ON'));
  await hub.publish(`${BASE}/all_off/set`, 'PRESS');
  await hub.until((w) => zones.every((z) => w.latest.get(zoneTopic(z.id, 'power')) === 'OFF'));
  t.ok((await admin.get('/api/zones')).body.every((z: { power: boolean }) => !z.power));
});

t.test('a keypad change on the amplifier reaches the state topic', async (t) => {
  const { hub, zones, d } = await bridged(t);
  (d.driver as SimulatedDriver).simulateKeypad(4, { volume: 0.5, power: true });
  const followed = Promise.all([
    hub.value(zoneTopic(zones[3]!.id, 'volume'), '50'),
    hub.value(zoneTopic(zones[3]!.id, 'power'), 'ON'),
  ]);
  await t.resolves(
    within(followed, WAIT_MS, 'volume 50 and power ON on the state topics'),
    'volume and power follow the keypad',
  );
});

t.test("another user's API change reaches the state topic", async (t) => {
  const { hub, zones, d } = await bridged(t);
  const res = await client(d.base, d.adminKey).put(`/api/zones/${zones[5]!.id}/mute`, { muted: true });
  t.equal(res.status, 204);
  t.equal(await hub.value(zoneTopic(zones[5]!.id, 'mute'), 'ON'), 'ON');
});

t.test('a Viewer-backed bridge publishes state but refuses commands', async (t) => {
  const { hub, zones, d, admin } = await bridged(t, { role: 'Viewer' });
  const zone = zones[0]!;
  const before = await hub.value(zoneTopic(zone.id, 'volume'), () => true);
  const was = (await admin.get(`/api/zones/${zone.id}`)).body;
  await hub.publish(`${zoneTopic(zone.id, 'volume')}/set`, '90');
  await hub.publish(`${zoneTopic(zone.id, 'power')}/set`, 'ON');
  const lines = await d.untilLog(/MQTT command ignored/, 2);
  t.ok(
    lines.every((line) => /"level":40/.test(line) && /Viewer can read but not change/.test(line)),
    'logged at warn with the reason',
  );
  const now = (await admin.get(`/api/zones/${zone.id}`)).body;
  t.same(now, was, 'nothing changed');
  t.equal(hub.latest.get(zoneTopic(zone.id, 'volume')), before);
});

t.test('a command for a zone outside the bridge account assignments changes nothing', async (t) => {
  const { hub, zones, d, admin } = await bridged(t);
  const users = (await admin.get('/api/users')).body as Array<{ id: string; username: string }>;
  const bridge = users.find((u) => u.username === 'hub')!;
  await admin.put(`/api/users/${bridge.id}/assignments`, { playerIds: [], zoneIds: [zones[1]!.id] });
  await hub.gone(zoneTopic(zones[0]!.id, 'volume'));
  const was = (await admin.get(`/api/zones/${zones[0]!.id}`)).body;
  await hub.publish(`${zoneTopic(zones[0]!.id, 'volume')}/set`, '80');
  const [line] = await d.untilLog(/MQTT command ignored/);
  t.match(line, /not-found/);
  t.same((await admin.get(`/api/zones/${zones[0]!.id}`)).body, was);
});

t.test('a storm of malformed payloads changes nothing and leaves the daemon healthy', async (t) => {
  const { hub, zones, d, admin } = await bridged(t);
  const zone = zones[0]!;
  const before = await hub.value(zoneTopic(zone.id, 'volume'), () => true);
  const was = (await admin.get(`/api/zones/${zone.id}`)).body;
  const bad: Array<[string, string | Buffer]> = [];
  const payloads = [
    '',
    ' ',
    'NaN',
    'Infinity',
    '-1',
    '100.5',
    '1e2',
    '0x10',
    '{"volume":50}',
    '[50]',
    'null',
    'true',
    'on?',
    '\u0000',
    'x'.repeat(10_000),
  ];
  for (const field of ['volume', 'power', 'mute', 'source']) {
    for (const payload of payloads) bad.push([`${zoneTopic(zone.id, field)}/set`, payload]);
  }
  bad.push([`${BASE}/zone/not-a-uuid/volume/set`, '50'], [`${BASE}/zone/${zone.id}/colour/set`, '50']);
  bad.push([`${BASE}/zone/00000000-0000-4000-8000-000000000000/volume/set`, '50'], [`${BASE}/all_off/set`, 'please']);
  bad.push([`${zoneTopic(zone.id, 'volume')}/set`, Buffer.from([0xff, 0xfe, 0x00, 0x80])]);
  for (let round = 0; round < 10; round++) {
    for (const [topic, payload] of bad) void hub.client.publish(topic, payload);
  }
  // A valid command after the storm is handled: the bridge is alive and handled everything before it, in order.
  await hub.publish(`${zoneTopic(zones[1]!.id, 'power')}/set`, 'ON');
  await hub.value(zoneTopic(zones[1]!.id, 'power'), 'ON');
  const health = await client(d.base).get('/api/health');
  t.match(health.body, { status: 'ok', mqtt: { state: 'connected' } });
  t.same((await admin.get(`/api/zones/${zone.id}`)).body, was, 'nothing changed');
  t.equal(hub.latest.get(zoneTopic(zone.id, 'volume')), before);
  const warnings = d.logs.filter((line) => /MQTT command/.test(line));
  t.ok(
    warnings.length > 0 && warnings.length <= WARN_BUDGET,
    `warnings are capped (${warnings.length} for ${bad.length * 10} bad messages)`,
  );
  t.notOk(
    d.logs.some((line) => /"level":50/.test(line)),
    'no error lines',
  );
});

t.test('the last volume of a burst wins', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const zone = zones[0]!;
  for (let v = 1; v <= 40; v++) void hub.client.publish(`${zoneTopic(zone.id, 'volume')}/set`, String(v));
  await hub.value(zoneTopic(zone.id, 'volume'), '40');
  t.equal((await admin.get(`/api/zones/${zone.id}`)).body.volume, 0.4);
});

t.test('on the Monoprice emulator, a hub command reaches the wire and a keypad change reaches the hub', async (t) => {
  const emulator = new MonopriceEmulator({ units: 1 });
  const pty = await emulatorOnPty(t, emulator);
  const driver = new MonopriceDriver({ serialPort: pty.a, ...FAST });
  const { hub, zones } = await bridged(t, { start: { driver } });
  await hub.value(`${BASE}/amplifier/monoprice/status`, 'online');
  const onWire = emulator.waitForCommand((c) => c === '<11VO19');
  await hub.publish(`${zoneTopic(zones[0]!.id, 'power')}/set`, 'ON');
  await hub.publish(`${zoneTopic(zones[0]!.id, 'volume')}/set`, '50');
  await onWire;
  t.match(emulator.state(11), { power: true, volume: 19 });
  await hub.value(zoneTopic(zones[0]!.id, 'volume'), '50');
  emulator.keypad(11, { volume: 30 });
  t.equal(await hub.value(zoneTopic(zones[0]!.id, 'volume'), String(Math.round((30 / 38) * 1000) / 10)), '78.9');
  // The amplifier going silent makes its link sensor, and with it every zone on it, unavailable.
  await emulator.close();
  t.equal(await hub.value(`${BASE}/amplifier/monoprice/status`, 'offline'), 'offline');
  t.equal(hub.latest.get(`${BASE}/status`), 'online', 'the bridge itself stays online');
});

t.test('the player volume a hub sees counts only the zones its account sees', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const player = (await admin.get('/api/players')).body[0];
  await admin.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  await admin.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.8 });
  await admin.put(`/api/zones/${zones[1]!.id}/volume`, { volume: 0.4 });
  await hub.value(`${BASE}/player/${player.id}/volume`, '60');
  const users = (await admin.get('/api/users')).body as Array<{
    id: string;
    username: string;
    assignments: { playerIds: string[] };
  }>;
  const bridge = users.find((u) => u.username === 'hub')!;
  await admin.put(`/api/users/${bridge.id}/assignments`, {
    playerIds: bridge.assignments.playerIds,
    zoneIds: [zones[0]!.id],
  });
  t.equal(
    await hub.value(`${BASE}/player/${player.id}/volume`, '80'),
    '80',
    'the one zone it sees, not the average with the other',
  );
});
