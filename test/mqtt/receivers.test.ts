// A stream player's receivers in Home Assistant, through a real mosquitto and the real MPD: a switch per receiver kind
// installed here, with how it runs as attributes; ON and OFF switch it as the API does (an Admin bridge account only),
// changes made elsewhere reach its state topic, and the switches go with the player's output.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import {
  ListedReceivers,
  programMissing,
  type ReceiverRunState,
  type ReceiverRuntime,
  STOPPED_RECEIVER,
  type WantedReceiver,
} from '../../daemon/domain/playback/index.js';
import { Topics } from '../../daemon/mqtt/topics.js';
import type { ReceiverKindName } from '../../drivers/index.js';
import { createUser } from '../helpers/client.js';
import { MPD, musicFolder } from '../helpers/mpd-rig.js';
import { haViolations } from './ha-rules.js';
import { BASE, bridged, configTopic } from './setup.js';

const music = musicFolder(t);
const KINDS = ['airplay', 'upnp', 'squeezelite'] as const;
const NAMES = { airplay: 'AirPlay', upnp: 'UPnP/DLNA', squeezelite: 'Squeezelite' } as const;
const receiverTopic = (id: string, kind: ReceiverKindName) => `${BASE}/player/${id}/receiver/${kind}`;
const attributes = (id: string, kind: ReceiverKindName) => `${receiverTopic(id, kind)}/attributes`;
const switchConfig = (nodeId: string, id: string, kind: ReceiverKindName) =>
  configTopic('switch', nodeId, `player_${id}_receiver_${kind}`);

/**
 * The daemon's listing runtime (it keeps each player's wanted list and finds the programs in PATH), besides reporting
 * the run states a test sets and lacking the kinds it is told.
 */
class TestReceivers implements ReceiverRuntime {
  private readonly listed = new ListedReceivers();
  readonly states = new Map<string, ReceiverRunState>();

  constructor(private readonly absent: readonly ReceiverKindName[] = []) {}

  get wanted(): ReadonlyMap<string, readonly WantedReceiver[]> {
    return this.listed.wanted;
  }

  apply(playerId: string, wanted: readonly WantedReceiver[]): Promise<void> {
    return this.listed.apply(playerId, wanted);
  }

  state(playerId: string, kind: ReceiverKindName): ReceiverRunState {
    return this.states.get(`${playerId}/${kind}`) ?? STOPPED_RECEIVER;
  }

  /** A kind told absent is looked up where no program is: the daemon's own message. */
  missing(kind: ReceiverKindName): string | undefined {
    return this.absent.includes(kind) ? programMissing(kind, '') : this.listed.missing(kind);
  }
}

/** A bridge acting as `ha-bridge` (an Admin unless said) beside a stream player and a wired player. */
async function receiverBridge(
  t: Parameters<typeof bridged>[0],
  options: { role?: 'Admin' | 'Operator'; absent?: ReceiverKindName[] } = {},
) {
  const runtime = new TestReceivers(options.absent);
  const start = {
    receiverRuntime: runtime,
    config: { playback: { ...defaultConfig().playback, mpdPath: MPD, musicDir: music } },
  };
  const rig = await bridged(t, { account: 'ha-bridge', players: 0, start });
  const { admin, zones } = rig;
  const stream = (await admin.post('/api/players', { name: 'Pi DAC', input: { channel: 1 }, output: { kind: 'null' } }))
    .body;
  const wired = (await admin.post('/api/players', { name: 'Turntable', input: { channel: 2 } })).body;
  const role = options.role ?? 'Admin';
  await createUser(
    admin,
    'ha-bridge',
    role,
    role === 'Admin' ? undefined : { playerIds: [stream.id, wired.id], zoneIds: zones.map((z) => z.id) },
  );
  const receiverOf = async (kind: ReceiverKindName) =>
    (await admin.get(`/api/players/${stream.id}/receivers`)).body.items.find(
      (r: { kind: string }) => r.kind === kind,
    ) as { enabled: boolean; server: string | null };
  return { ...rig, runtime, stream, wired, receiverOf };
}

t.test(
  'a stream player gets an AirPlay, a UPnP/DLNA and a Squeezelite switch that say how each runs; a wired player none',
  async (t) => {
    const { hub, stream, wired, nodeId } = await receiverBridge(t);
    for (const kind of KINDS) {
      // Waited for on its own: the broker may pass the states (QoS 0) before configs (QoS 1) still in flight.
      await hub.value(switchConfig(nodeId, stream.id, kind), () => true);
      t.equal(await hub.value(receiverTopic(stream.id, kind), 'OFF'), 'OFF', `${kind} is off`);
      await hub.value(attributes(stream.id, kind), () => true);
      t.same(
        hub.json(attributes(stream.id, kind)),
        { phase: 'stopped', cast: 'idle', detail: null, server: null },
        `${kind}'s attributes`,
      );
      t.match(hub.json(switchConfig(nodeId, stream.id, kind)), {
        name: `Pi DAC ${NAMES[kind]}`,
        state_topic: receiverTopic(stream.id, kind),
        command_topic: `${receiverTopic(stream.id, kind)}/set`,
        json_attributes_topic: attributes(stream.id, kind),
        payload_on: 'ON',
        payload_off: 'OFF',
        entity_category: 'config',
        availability: [{ topic: `${BASE}/status` }],
      });
      t.notOk(hub.latest.has(switchConfig(nodeId, wired.id, kind)), `the wired player has no ${kind} switch`);
    }
    t.same(haViolations(hub.latest), [], 'every entity follows Home Assistant’s rules');
    // The rules catch a receiver switch's state or attributes Home Assistant would not take.
    const config = switchConfig(nodeId, stream.id, 'airplay');
    t.same(haViolations(new Map(hub.latest).set(receiverTopic(stream.id, 'airplay'), 'on')), [
      `${config}: state "on" is neither ON nor OFF`,
    ]);
    const controls = JSON.stringify({ ...hub.json(config), entity_category: 'controls' });
    t.same(haViolations(new Map(hub.latest).set(config, controls)), [
      `${config}: entity_category controls is not one of config, diagnostic`,
    ]);
    t.same(haViolations(new Map(hub.latest).set(attributes(stream.id, 'airplay'), '"running"')), [
      `${config}: attributes on ${attributes(stream.id, 'airplay')} are not a JSON object`,
    ]);
  },
);

t.test('a receiver kind whose program is not installed gets no switch', async (t) => {
  const { hub, stream, nodeId } = await receiverBridge(t, { absent: ['upnp'] });
  // Configs go out in order (UPnP's between the other two): once Squeezelite's is here, UPnP's would be too.
  await hub.value(switchConfig(nodeId, stream.id, 'squeezelite'), () => true);
  await hub.value(attributes(stream.id, 'squeezelite'), () => true);
  t.ok(hub.latest.has(switchConfig(nodeId, stream.id, 'airplay')), 'an AirPlay switch');
  t.ok(hub.latest.has(switchConfig(nodeId, stream.id, 'squeezelite')), 'a Squeezelite switch');
  t.notOk(hub.latest.has(switchConfig(nodeId, stream.id, 'upnp')), 'no UPnP/DLNA switch');
  t.notOk(hub.latest.has(receiverTopic(stream.id, 'upnp')), 'no UPnP/DLNA state');
});

t.test('ON and OFF from the hub switch the receiver, as the API then shows, and the state topic follows', async (t) => {
  const { hub, stream, runtime, receiverOf } = await receiverBridge(t);
  await hub.value(receiverTopic(stream.id, 'airplay'), 'OFF');
  await hub.publish(`${receiverTopic(stream.id, 'airplay')}/set`, 'ON');
  t.equal(await hub.value(receiverTopic(stream.id, 'airplay'), 'ON'), 'ON');
  t.equal((await receiverOf('airplay')).enabled, true, 'the API shows it on');
  t.same(runtime.wanted.get(stream.id), [{ kind: 'airplay', server: null }], 'the runtime was handed it');
  await hub.publish(`${receiverTopic(stream.id, 'airplay')}/set`, 'off');
  t.equal(await hub.value(receiverTopic(stream.id, 'airplay'), 'OFF'), 'OFF');
  t.equal((await receiverOf('airplay')).enabled, false, 'the API shows it off');
  t.notOk(runtime.wanted.has(stream.id), 'the runtime runs nothing for the player');
});

t.test('ON from the hub keeps the music server an admin gave Squeezelite', async (t) => {
  const { hub, admin, stream, receiverOf } = await receiverBridge(t);
  const put = await admin.put(`/api/players/${stream.id}/receivers/squeezelite`, { enabled: true, server: 'lms.lan' });
  t.equal(put.status, 200);
  await hub.value(receiverTopic(stream.id, 'squeezelite'), 'ON');
  // A hub whose switch showed off sends ON again; the AirPlay command after it is handled once it was.
  await hub.publish(`${receiverTopic(stream.id, 'squeezelite')}/set`, 'ON');
  await hub.publish(`${receiverTopic(stream.id, 'airplay')}/set`, 'ON');
  await hub.value(receiverTopic(stream.id, 'airplay'), 'ON');
  t.match(await receiverOf('squeezelite'), { enabled: true, server: 'lms.lan' }, 'still on, with its server');
  t.equal(JSON.parse(hub.latest.get(attributes(stream.id, 'squeezelite'))!).server, 'lms.lan');
});

t.test('a switch through the API and a change in how the receiver runs reach the hub', async (t) => {
  const { hub, admin, stream, runtime, d } = await receiverBridge(t);
  await hub.value(receiverTopic(stream.id, 'upnp'), 'OFF');
  t.equal((await admin.put(`/api/players/${stream.id}/receivers/upnp`, { enabled: true })).status, 200);
  t.equal(await hub.value(receiverTopic(stream.id, 'upnp'), 'ON'), 'ON');
  const casting = { phase: 'running', cast: 'playing', detail: null } as const;
  runtime.states.set(`${stream.id}/upnp`, casting);
  d.daemon.services.receivers.stateChanged(stream.id, 'upnp');
  await hub.value(attributes(stream.id, 'upnp'), (payload) => JSON.parse(payload).cast === 'playing');
  t.same(hub.json(attributes(stream.id, 'upnp')), { ...casting, server: null });
});

t.test('the AirPlay a receiver runs as is among its attributes', async (t) => {
  const { hub, admin, stream, runtime, d } = await receiverBridge(t);
  t.equal((await admin.put(`/api/players/${stream.id}/receivers/airplay`, { enabled: true })).status, 200);
  runtime.states.set(`${stream.id}/airplay`, { phase: 'running', cast: 'idle', detail: null, variant: 'AirPlay 2' });
  d.daemon.services.receivers.stateChanged(stream.id, 'airplay');
  await hub.value(attributes(stream.id, 'airplay'), (payload) => JSON.parse(payload).phase === 'running');
  t.same(hub.json(attributes(stream.id, 'airplay')), {
    phase: 'running',
    cast: 'idle',
    detail: null,
    server: null,
    variant: 'AirPlay 2',
  });
});

t.test('an Operator bridge account’s switch commands are refused, logged, and change nothing', async (t) => {
  const { hub, d, stream, runtime, receiverOf } = await receiverBridge(t, { role: 'Operator' });
  t.equal(await hub.value(receiverTopic(stream.id, 'airplay'), 'OFF'), 'OFF', 'an Operator account sees the switch');
  await hub.publish(`${receiverTopic(stream.id, 'airplay')}/set`, 'ON');
  await hub.publish(`${receiverTopic(stream.id, 'upnp')}/set`, 'MAYBE');
  // Each waited for on its own: the malformed one is refused at once, the other when the switch call answers.
  await d.untilLog(/"reason":"forbidden: switching a receiver is for administrators only".*"MQTT command ignored"/);
  await d.untilLog(/"reason":"expected ON or OFF, got \\"MAYBE\\"".*"MQTT command ignored"/);
  t.equal((await receiverOf('airplay')).enabled, false, 'AirPlay is still off');
  t.notOk(runtime.wanted.has(stream.id), 'the runtime was handed nothing');
  t.equal(hub.latest.get(receiverTopic(stream.id, 'airplay')), 'OFF', 'the state topic still says off');
});

t.test('the switches go when the player loses its output, and when it is deleted', async (t) => {
  const { hub, admin, stream, nodeId } = await receiverBridge(t);
  t.equal((await admin.put(`/api/players/${stream.id}/receivers/airplay`, { enabled: true })).status, 200);
  await hub.value(receiverTopic(stream.id, 'airplay'), 'ON');
  const left = () =>
    KINDS.flatMap((kind) =>
      [switchConfig(nodeId, stream.id, kind), receiverTopic(stream.id, kind), attributes(stream.id, kind)].filter(
        (topic) => hub.latest.has(topic),
      ),
    );
  t.equal((await admin.put(`/api/players/${stream.id}`, { output: null })).status, 200);
  await hub.until(() => left().length === 0, 'the receiver switches, their states and attributes cleared');
  t.ok(hub.latest.has(configTopic('number', nodeId, `player_${stream.id}_volume`)), 'its volume stays');

  t.equal((await admin.put(`/api/players/${stream.id}`, { output: { kind: 'null' } })).status, 200);
  t.equal(await hub.value(receiverTopic(stream.id, 'airplay'), 'ON'), 'ON', 'a stream player again: still on');
  t.equal((await admin.del(`/api/players/${stream.id}`)).status, 204);
  await hub.until(() => left().length === 0, 'every receiver topic of the deleted player cleared');
});

t.test('a receiver command topic names one of the three kinds, its player in either letter case', async (t) => {
  const topics = new Topics(BASE, 'homeassistant');
  const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
  t.same(topics.parseCommand(`${BASE}/player/${id.toUpperCase()}/receiver/upnp/set`), {
    kind: 'receiver',
    id,
    receiver: 'upnp',
  });
  t.equal(topics.parseCommand(`${BASE}/player/${id}/receiver/chromecast/set`), undefined, 'no such kind');
  t.equal(topics.parseCommand(`${BASE}/player/${id}/receiver/set`), undefined, 'no kind');
  t.equal(topics.parseCommand(`${BASE}/zone/${id}/receiver/airplay/set`), undefined, 'zones have none');
});
