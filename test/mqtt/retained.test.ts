// The retained topics the bridge leaves on a broker are remembered in the store, so whichever bridge runs next
// (after a restart, under another account, with another base topic) clears what it does not publish itself.
import t from 'tap';
import { defaultConfig, type MqttConfig } from '../../daemon/config.js';
import { createUser } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { BASE, bridged, configCount, configs } from './setup.js';

const mqtt = (url: string, extra: Partial<MqttConfig>): MqttConfig => ({
  ...defaultConfig().mqtt,
  url,
  baseTopic: BASE,
  reconnectMinMs: 100,
  reconnectMaxMs: 400,
  ...extra,
});

t.test(
  'after the bridge ran under another account, the next start clears the entities the new account may not see',
  async (t) => {
    const first = await bridged(t);
    const { hub, admin, zones, broker } = first;
    await hub.until((w) => configs(w).length === configCount({ zones: 6, players: 2 }));
    await createUser(admin, 'kitchen-hub', 'Operator', { playerIds: [], zoneIds: [zones[1]!.id] });
    await first.d.stop();
    await hub.value(`${BASE}/status`, 'offline');

    await startTestDaemon(t, {
      stateDir: first.d.stateDir,
      config: { mqtt: mqtt(broker.url, { account: 'kitchen-hub' }) },
    });
    await hub.value(`${BASE}/status`, 'online');
    // The watcher saw every config of the first account: the empty messages that clear them must come.
    await hub.until((w) => configs(w).length === configCount({ zones: 1 }), 'only the kitchen account’s entities left');
    t.ok(
      configs(hub).every((topic) => !topic.includes('zone_') || topic.includes(zones[1]!.id)),
      'the entities left are those of its zone',
    );
    t.notOk(hub.latest.has(`${BASE}/zone/${zones[0]!.id}/volume`), 'the state of a zone it cannot see is cleared too');
  },
);

t.test('a new base topic leaves nothing behind under the old one, its status included', async (t) => {
  const first = await bridged(t);
  const { hub, broker } = first;
  await hub.until((w) => configs(w).length === configCount({ zones: 6, players: 2 }));
  await first.d.stop();
  await hub.value(`${BASE}/status`, 'offline');

  await startTestDaemon(t, {
    stateDir: first.d.stateDir,
    config: { mqtt: mqtt(broker.url, { account: 'hub', baseTopic: 'azc/renamed' }) },
  });
  await hub.value('azc/renamed/status', 'online');
  await hub.until(
    (w) => ![...w.latest.keys()].some((topic) => topic.startsWith(`${BASE}/`)),
    `nothing left under ${BASE}/`,
  );
  // The clears go out before the new configs of the same sync: follow those in too.
  await hub.until(
    (w) => configs(w).every((topic) => !w.latest.get(topic)!.includes(`"${BASE}/`)),
    'no config pointing at the old topics',
  );
  t.equal(
    configs(hub).length,
    configCount({ zones: 6, players: 2 }),
    'the entities are there once, under the new topics',
  );
});
