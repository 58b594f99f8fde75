// Shared set-up for the MQTT bridge tests: a broker, a daemon bridged to it as a named account, a hub-like watcher.

import { defaultConfig } from '../../daemon/config.js';
import { type Client, client, createUser } from '../helpers/client.js';
import { type StartOptions, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { type Broker, startBroker, Watcher } from '../helpers/mosquitto.js';

export const BASE = 'azc/test';
export const PREFIX = 'homeassistant';

interface T {
  teardown(fn: () => unknown): void;
}

export interface Bridged {
  broker: Broker;
  d: TestDaemon;
  admin: Client;
  hub: Watcher;
  zones: Array<{ id: string; name: string }>;
  /** The discovery node id: `azc_` + the UDN's hex digits. */
  nodeId: string;
}

/**
 * A daemon whose bridge acts as `account` (an Operator `hub` assigned every zone and player unless `role` or
 * `assign` say otherwise), a broker, and a watcher subscribed to everything.
 */
export async function bridged(
  t: T,
  options: {
    role?: 'Admin' | 'Operator' | 'Viewer';
    account?: string | null;
    players?: number;
    start?: StartOptions;
    broker?: Broker;
  } = {},
): Promise<Bridged> {
  const broker = options.broker ?? (await startBroker(t));
  const account = options.account === undefined ? 'hub' : options.account;
  const d = await startTestDaemon(t, {
    ...options.start,
    config: {
      mqtt: {
        ...defaultConfig().mqtt,
        url: broker.url,
        account: account ?? undefined,
        baseTopic: BASE,
        reconnectMinMs: 100,
        reconnectMaxMs: 400,
      },
      ...options.start?.config,
    },
  });
  const admin = client(d.base, d.adminKey);
  const playerIds: string[] = [];
  for (let i = 1; i <= (options.players ?? 2); i++) {
    const res = await admin.post('/api/players', { name: `Player ${i}`, input: { channel: i } });
    playerIds.push(res.body.id);
  }
  const zones = ((await admin.get('/api/zones')).body as Array<{ id: string; name: string }>).map(({ id, name }) => ({
    id,
    name,
  }));
  if (account === 'hub') {
    await createUser(admin, 'hub', options.role ?? 'Operator', { playerIds, zoneIds: zones.map((z) => z.id) });
  }
  const hub = await Watcher.connect(t, broker.url);
  const nodeId = `azc_${d.daemon.services.udn.replace(/^uuid:/, '').replace(/-/g, '')}`;
  return { broker, d, admin, hub, zones, nodeId };
}

export const configTopic = (component: string, nodeId: string, objectId: string) =>
  `${PREFIX}/${component}/${nodeId}/${objectId}/config`;

/**
 * How many discovery configs a bridge publishes: twelve entities per zone of the simulated amplifier (volume, power,
 * mute, source, sleep timer; bass, treble, balance and loudness, which it has; paging, do-not-disturb and party mode,
 * which it reports), a volume per player, one per scene, a link sensor per amplifier and the all-zones-off button.
 */
export const configCount = ({
  zones,
  players = 0,
  scenes = 0,
  amplifiers = 1,
}: {
  zones: number;
  players?: number;
  scenes?: number;
  amplifiers?: number;
}) => zones * ZONE_ENTITIES + players + scenes + amplifiers + 1;

/** The entities of one zone of the simulated amplifier, by component and field (`zone_<id>_<field>`). */
export const SIMULATED_ZONE_ENTITIES: ReadonlyArray<readonly [string, string]> = [
  ['number', 'volume'],
  ['switch', 'power'],
  ['switch', 'mute'],
  ['select', 'source'],
  ['number', 'sleep'],
  ['number', 'bass'],
  ['number', 'treble'],
  ['number', 'balance'],
  ['switch', 'loudness'],
  ['binary_sensor', 'paging'],
  ['binary_sensor', 'do_not_disturb'],
  ['binary_sensor', 'party'],
];
const ZONE_ENTITIES = SIMULATED_ZONE_ENTITIES.length;

/** The discovery config topics a watcher holds now. */
export const configs = (hub: Watcher) =>
  [...hub.latest.keys()].filter((topic) => topic.startsWith(`${PREFIX}/`) && topic.endsWith('/config'));
