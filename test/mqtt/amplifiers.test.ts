// Several amplifiers over MQTT: one link sensor per amplifier, keyed by its name, and each zone's availability
// following its own amplifier's link.
import t from 'tap';
import { type AmplifierConfig, amplifierKey } from '../../daemon/config.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { FAST_TIMINGS } from '../drivers/family-rigs.js';
import { emulatorOnPty } from '../drivers/serial-rig.js';
import { createUser } from '../helpers/client.js';
import { BASE, bridged, configTopic } from './setup.js';

interface Zone {
  id: string;
  output: { amplifier: string };
}

t.test('each amplifier has its own link sensor, and a zone is available only while its own amplifier is', async (t) => {
  const emulator = new MonopriceEmulator({ units: 1 });
  const pty = await emulatorOnPty(t, emulator);
  const amplifiers: AmplifierConfig[] = [
    { name: 'Kitchen', key: amplifierKey('Kitchen'), driver: 'simulated', port: undefined, options: {} },
    // The daemon builds this driver through its family's factory, which takes no poll or reconnect faster than a
    // configuration may set: the fastest it takes.
    {
      name: 'Den amp',
      key: amplifierKey('Den amp'),
      driver: 'monoprice',
      port: pty.a,
      options: { ...FAST_TIMINGS, pollIntervalMs: 200, reconnectMinMs: 50 },
    },
  ];
  const { hub, admin, nodeId } = await bridged(t, {
    account: 'hub2',
    players: 0,
    start: { configuredAmplifiers: true, config: { amplifiers } },
  });
  const zones = (await admin.get('/api/zones')).body as Zone[];
  await createUser(admin, 'hub2', 'Operator', { playerIds: [], zoneIds: zones.map((z) => z.id) });

  const kitchenLink = hub.json(await configOf(hub, configTopic('binary_sensor', nodeId, 'amplifier_kitchen_link')));
  t.match(kitchenLink, {
    name: 'Amplifier Kitchen link',
    device_class: 'connectivity',
    state_topic: `${BASE}/amplifier/kitchen/status`,
  });
  const denLink = hub.json(await configOf(hub, configTopic('binary_sensor', nodeId, 'amplifier_den-amp_link')));
  t.match(denLink, { name: 'Amplifier Den amp link', state_topic: `${BASE}/amplifier/den-amp/status` });

  const availability = (zone: Zone) =>
    (hub.json(configTopic('number', nodeId, `zone_${zone.id}_volume`)).availability as Array<{ topic: string }>).map(
      (a) => a.topic,
    );
  const kitchenZone = zones.find((z) => z.output.amplifier === 'Kitchen')!;
  const denZone = zones.find((z) => z.output.amplifier === 'Den amp')!;
  await configOf(hub, configTopic('number', nodeId, `zone_${denZone.id}_volume`));
  await configOf(hub, configTopic('number', nodeId, `zone_${kitchenZone.id}_volume`));
  t.same(availability(kitchenZone), [
    `${BASE}/status`,
    `${BASE}/amplifier/kitchen/status`,
    `${BASE}/zone/${kitchenZone.id}/availability`,
  ]);
  t.same(availability(denZone), [
    `${BASE}/status`,
    `${BASE}/amplifier/den-amp/status`,
    `${BASE}/zone/${denZone.id}/availability`,
  ]);

  await hub.value(`${BASE}/amplifier/den-amp/status`, 'online');
  await emulator.close();
  t.equal(
    await hub.value(`${BASE}/amplifier/den-amp/status`, 'offline'),
    'offline',
    'the silent amplifier goes offline',
  );
  t.equal(hub.latest.get(`${BASE}/amplifier/kitchen/status`), 'online', 'the other stays online');
});

/** Waits until a retained config is there and returns its topic. */
async function configOf(
  hub: { until(check: (w: { latest: Map<string, string> }) => boolean): Promise<void> },
  topic: string,
): Promise<string> {
  await hub.until((w) => w.latest.has(topic));
  return topic;
}
