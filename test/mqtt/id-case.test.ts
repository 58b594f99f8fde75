// Ids in any letter case on MQTT: a command topic that names a zone or player in upper case reaches that zone or
// player, as the topic parser hands the domain the canonical, lower-case id (the REST front doors: test/api/id-case).
import t from 'tap';
import { BASE, bridged } from './setup.js';

t.test('a volume command for a zone named in upper case moves that zone', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const zone = zones[3]!;
  await hub.value(`${BASE}/zone/${zone.id}/volume`, () => true);
  await hub.publish(`${BASE}/zone/${zone.id.toUpperCase()}/volume/set`, '35');
  t.equal(await hub.value(`${BASE}/zone/${zone.id}/volume`, '35'), '35', 'the state topic, under the stored id');
  t.equal((await admin.get(`/api/zones/${zone.id}`)).body.volume, 0.35, 'the API shows the same value');
});

t.test('a volume command for a player named in upper case moves that player', async (t) => {
  const { hub, admin } = await bridged(t);
  const player = (await admin.get('/api/players')).body[1] as { id: string };
  await hub.value(`${BASE}/player/${player.id}/volume`, () => true);
  await hub.publish(`${BASE}/player/${player.id.toUpperCase()}/volume/set`, '40');
  t.equal(await hub.value(`${BASE}/player/${player.id}/volume`, '40'), '40', 'the state topic, under the stored id');
  t.equal((await admin.get(`/api/players/${player.id}`)).body.volume, 0.4, 'the API shows the same value');
});
