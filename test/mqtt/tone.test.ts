// Tone controls and what the amplifier reports about a zone, in Home Assistant over a real mosquitto: the entities a
// zone gets for the controls its family has, commands into the zone's tone, and tone and status changes on the topics.
import t from 'tap';
import type { DriverDescription } from '../../drivers/driver.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { FAST } from '../drivers/monoprice-rig.js';
import { emulatorOnPty } from '../drivers/serial-rig.js';
import { BASE, bridged, configTopic } from './setup.js';

const zoneTopic = (id: string, field: string) => `${BASE}/zone/${id}/${field}`;

/** A simulated amplifier that can stop having loudness, as a zone's amplifier replaced by a family without it. */
class LosesLoudness extends SimulatedDriver {
  lacksLoudness = false;

  override describe(): DriverDescription {
    const description = super.describe();
    if (!this.lacksLoudness) return description;
    const sound = description.sound!;
    return {
      ...description,
      sound: { ...sound, controls: { ...sound.controls, loudness: { absent: 'this amplifier has no loudness' } } },
    };
  }
}

t.test(
  'a zone of the simulated amplifier has bass, treble and balance sliders over its native steps, a loudness switch and three status sensors',
  async (t) => {
    const { hub, zones, nodeId } = await bridged(t);
    const zone = zones[0]!.id;
    const entity = async (component: string, field: string) => {
      const topic = configTopic(component, nodeId, `zone_${zone}_${field}`);
      await hub.value(topic, () => true);
      return hub.json(topic);
    };
    const availability = [`${BASE}/status`, `${BASE}/amplifier/simulated/status`, zoneTopic(zone, 'availability')].map(
      (topic) => ({ topic }),
    );
    t.match(await entity('number', 'bass'), {
      min: -7,
      max: 7,
      step: 1,
      state_topic: zoneTopic(zone, 'bass'),
      command_topic: `${zoneTopic(zone, 'bass')}/set`,
      availability,
    });
    t.match(await entity('number', 'treble'), { min: -7, max: 7, step: 1 });
    t.match(
      await entity('number', 'balance'),
      { min: -10, max: 10, step: 1 },
      'balance runs over its own steps, left to right',
    );
    t.match(await entity('switch', 'loudness'), {
      state_topic: zoneTopic(zone, 'loudness'),
      command_topic: `${zoneTopic(zone, 'loudness')}/set`,
      payload_on: 'ON',
      payload_off: 'OFF',
    });
    for (const field of ['paging', 'do_not_disturb', 'party']) {
      const config = await entity('binary_sensor', field);
      t.match(
        config,
        { state_topic: zoneTopic(zone, field), payload_on: 'ON', payload_off: 'OFF', availability },
        `a ${field} sensor`,
      );
      t.notOk('command_topic' in config, `${field} is read-only`);
    }
    t.equal(await hub.value(zoneTopic(zone, 'bass'), '0'), '0', 'a flat bass is step 0');
    t.equal(await hub.value(zoneTopic(zone, 'loudness'), 'OFF'), 'OFF');
    t.equal(await hub.value(zoneTopic(zone, 'paging'), 'OFF'), 'OFF');
  },
);

t.test('a Monoprice zone gets no loudness switch and no party sensor, which its family lacks', async (t) => {
  const emulator = new MonopriceEmulator({ units: 1 });
  const pty = await emulatorOnPty(t, emulator);
  const driver = new MonopriceDriver({ serialPort: pty.a, ...FAST });
  const { hub, zones, nodeId, d } = await bridged(t, { start: { driver } });
  const zone = zones[0]!.id;
  const config = (component: string, field: string) => configTopic(component, nodeId, `zone_${zone}_${field}`);
  await hub.until(
    (w) =>
      ['bass', 'treble', 'balance'].every((f) => w.latest.has(config('number', f))) &&
      w.latest.has(config('binary_sensor', 'do_not_disturb')),
    'the tone sliders and the do-not-disturb sensor',
  );
  t.match(hub.json(config('number', 'balance')), { min: -10, max: 10 });
  t.ok(hub.latest.has(config('binary_sensor', 'paging')), 'a paging sensor');
  t.notOk(hub.latest.has(config('switch', 'loudness')), 'no loudness switch');
  t.notOk(hub.latest.has(config('binary_sensor', 'party')), 'no party sensor');
  t.notOk(hub.latest.has(zoneTopic(zone, 'loudness')), 'no loudness state');

  // A loudness command anyway (a script written for another amplifier) is refused as the API refuses it.
  await hub.publish(`${zoneTopic(zone, 'loudness')}/set`, 'ON');
  const [line] = await d.untilLog(/MQTT command ignored/);
  t.match(line, /"level":40/);
  t.match(line, /conflict: zone .* has no loudness control: the Monoprice protocol has no loudness command/);
});

t.test(
  'a bass step from the hub moves the zone’s tone, on the amplifier and in the API, and loudness switches',
  async (t) => {
    const { hub, zones, d, admin } = await bridged(t);
    const zone = zones[1]!.id;
    await hub.value(zoneTopic(zone, 'bass'), '0');
    await hub.publish(`${zoneTopic(zone, 'bass')}/set`, '-3');
    t.equal(await hub.value(zoneTopic(zone, 'bass'), '-3'), '-3');
    t.equal(
      (await admin.get(`/api/zones/${zone}`)).body.tone.bass,
      -3 / 7,
      'the API shows the step on its -1..1 scale',
    );
    await d.driver.settled();
    t.equal((d.driver as SimulatedDriver).amplifierTone(2)!.bass, -3 / 7, 'the amplifier is at that step');
    await hub.publish(`${zoneTopic(zone, 'balance')}/set`, '10');
    await hub.publish(`${zoneTopic(zone, 'loudness')}/set`, 'ON');
    await hub.value(zoneTopic(zone, 'loudness'), 'ON');
    t.match((await admin.get(`/api/zones/${zone}`)).body.tone, { balance: 1, loudness: true });
  },
);

t.test('a tone step off the zone’s range, or from a Viewer-backed bridge, changes nothing and is logged', async (t) => {
  const { hub, zones, d, admin } = await bridged(t, { role: 'Viewer' });
  const zone = zones[0]!.id;
  await hub.value(zoneTopic(zone, 'treble'), '0');
  const was = (await admin.get(`/api/zones/${zone}`)).body.tone;
  await hub.publish(`${zoneTopic(zone, 'treble')}/set`, '8');
  await hub.publish(`${zoneTopic(zone, 'treble')}/set`, '2');
  const lines = await d.untilLog(/MQTT command ignored/, 2);
  t.match(lines[0], /treble must be a number from -7 to 7, got \\"8\\"/);
  t.match(lines[1], /Viewer can read but not change/);
  t.same((await admin.get(`/api/zones/${zone}`)).body.tone, was, 'the tone is as it was');
  t.equal(hub.latest.get(zoneTopic(zone, 'treble')), '0');
});

t.test('a tone set through the API reaches the state topic as the step the amplifier plays', async (t) => {
  const { hub, zones, admin } = await bridged(t);
  const zone = zones[2]!.id;
  await hub.value(zoneTopic(zone, 'treble'), '0');
  t.equal((await admin.put(`/api/zones/${zone}/tone`, { treble: 4 / 7, balance: -0.25 })).status, 204);
  t.equal(await hub.value(zoneTopic(zone, 'treble'), '4'), '4');
  // -0.25 of ten steps to the left is between steps 2 and 3: the amplifier plays -2 (rounded as the driver rounds).
  t.equal(await hub.value(zoneTopic(zone, 'balance'), '-2'), '-2');
});

t.test('a page on the amplifier reaches the paging sensor, and its end too', async (t) => {
  const { hub, zones, d } = await bridged(t);
  const zone = zones[3]!.id;
  await hub.value(zoneTopic(zone, 'paging'), 'OFF');
  (d.driver as SimulatedDriver).simulateKeypad(4, { paging: true, party: true });
  t.equal(await hub.value(zoneTopic(zone, 'paging'), 'ON'), 'ON');
  t.equal(await hub.value(zoneTopic(zone, 'party'), 'ON'), 'ON');
  (d.driver as SimulatedDriver).simulateKeypad(4, { paging: false });
  t.equal(await hub.value(zoneTopic(zone, 'paging'), 'OFF'), 'OFF');
});

t.test('a control the zone no longer has loses its entity and its state', async (t) => {
  const driver = new LosesLoudness({ applyDelayMs: 1 });
  const { hub, zones, nodeId, admin } = await bridged(t, { start: { driver } });
  const zone = zones[0]!.id;
  const loudness = configTopic('switch', nodeId, `zone_${zone}_loudness`);
  await hub.value(loudness, () => true);
  await hub.value(zoneTopic(zone, 'loudness'), 'OFF');
  driver.lacksLoudness = true;
  // Any change the bridge hears of brings the new view.
  t.equal((await admin.put(`/api/zones/${zone}/volume`, { volume: 0.3 })).status, 204);
  await hub.gone(loudness);
  await hub.gone(zoneTopic(zone, 'loudness'));
  t.ok(hub.latest.has(configTopic('number', nodeId, `zone_${zone}_bass`)), 'the controls it still has stay');
});
