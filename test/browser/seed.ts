// Gives a fresh simulated appliance realistic rooms, sources, playlists and users for the dashboard tests.
import { type Client, client, createUser } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

export interface Seeded {
  zones: Record<string, string>;
  players: Record<string, string>;
  inputs: Record<string, string>;
  playlists: Record<string, string>;
  users: Record<'operator' | 'viewer' | 'hub', { id: string; apiKey: string; password: string; username: string }>;
}

const ROOMS = ['Living room', 'Kitchen', 'Dining room', 'Patio', 'Office', 'Bedroom'];
const INPUTS: Array<[string, string]> = [
  ['Streamer', 'network'],
  ['AirPlay receiver', 'network'],
  ['TV', 'optical'],
  ['Turntable', 'turntable'],
  ['Front aux', 'line-in'],
  ['Bluetooth', 'bluetooth'],
];

const track = (title: string, seconds: number, n: number) => ({
  title,
  uri: `file:///music/${n}.flac`,
  durationMs: seconds * 1000,
});

async function ok<T>(reply: Promise<{ status: number; body: T; text: string }>, what: string): Promise<T> {
  const res = await reply;
  if (res.status >= 300) throw new Error(`${what} failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function seed(api: Client): Promise<Seeded> {
  const zones: Record<string, string> = {};
  // The simulated amplifier names its outputs "Zone N": name them after rooms.
  for (const zone of await ok<Array<{ id: string; output: { channel: number } }>>(
    api.get('/api/zones'),
    'list zones',
  )) {
    const name = ROOMS[zone.output.channel - 1]!;
    await ok(api.put(`/api/zones/${zone.id}`, { name }), 'rename zone');
    zones[name] = zone.id;
  }
  const inputs: Record<string, string> = {};
  for (const input of await ok<Array<{ id: string; input: { channel: number } }>>(
    api.get('/api/input-devices'),
    'list inputs',
  )) {
    await ok(api.del(`/api/input-devices/${input.id}`), 'delete input');
    const [name, kind] = INPUTS[input.input.channel - 1]!;
    inputs[name] = (
      await ok<{ id: string }>(
        api.post('/api/input-devices', { name, kind, input: { channel: input.input.channel } }),
        'create input',
      )
    ).id;
  }
  await ok(api.put(`/api/input-devices/${inputs.TV}/favorite`, { isFavorite: true }), 'favorite input');

  const players: Record<string, string> = {};
  for (const [name, channel] of [
    ['Main streamer', 1],
    ['AirPlay', 2],
    ['Turntable', 4],
  ] as const) {
    players[name] = (
      await ok<{ id: string }>(api.post('/api/players', { name, input: { channel } }), 'create player')
    ).id;
  }
  const attach = (player: string, rooms: string[]) =>
    ok(api.post(`/api/players/${players[player]}/attach-zones`, { zoneIds: rooms.map((r) => zones[r]) }), 'attach');
  await attach('Main streamer', ['Living room', 'Kitchen', 'Dining room']);
  await attach('AirPlay', ['Patio']);
  await ok(api.put(`/api/players/${players['Main streamer']}/volume`, { volume: 0.3 }), 'player volume');
  await ok(api.put(`/api/zones/${zones.Kitchen}/volume`, { volume: 0.45 }), 'zone volume');
  await ok(api.put(`/api/zones/${zones.Patio}/volume`, { volume: 0.6 }), 'zone volume');
  await ok(api.put(`/api/zones/${zones['Dining room']}/mute`, { muted: true }), 'mute');

  const playlists: Record<string, string> = {};
  const lists: Array<[string, ReturnType<typeof track>[]]> = [
    [
      'Sunday morning',
      [
        track('Harvest Moon', 303, 1),
        track('River Man', 321, 2),
        track('Pink Moon', 124, 3),
        track('Cherry Wine', 232, 4),
        track('Holocene', 337, 5),
      ],
    ],
    ['Dinner party', [track('So What', 562, 6), track('Take Five', 324, 7), track('Blue in Green', 337, 8)]],
    ['Workout', [track('Around the World', 429, 9), track('Harder, Better, Faster', 224, 10)]],
  ];
  for (const [name, tracks] of lists) {
    playlists[name] = (await ok<{ id: string }>(api.post('/api/playlists', { name, tracks }), 'create playlist')).id;
  }
  await ok(api.put(`/api/playlists/${playlists['Dinner party']}/favorite`, { isFavorite: true }), 'favorite playlist');

  const operator = await createUser(api, 'olivia', 'Operator', {
    playerIds: [players.AirPlay!],
    zoneIds: [zones.Patio!],
  });
  const viewer = await createUser(api, 'victor', 'Viewer', {
    playerIds: [players['Main streamer']!],
    zoneIds: [zones['Living room']!, zones.Kitchen!, zones['Dining room']!],
  });
  const hub = await createUser(api, 'home-hub', 'Operator', {
    playerIds: Object.values(players),
    zoneIds: Object.values(zones),
  });
  return {
    zones,
    players,
    inputs,
    playlists,
    users: {
      operator: { ...operator, username: 'olivia' },
      viewer: { ...viewer, username: 'victor' },
      hub: { ...hub, username: 'home-hub' },
    },
  };
}

/** A daemon for one test (stopped in its teardown) seeded as above, with an admin client. */
export async function seededDaemon(t: {
  teardown(fn: () => unknown): void;
}): Promise<{ d: TestDaemon; api: Client; s: Seeded }> {
  const d = await startTestDaemon(t);
  const api = client(d.base, d.adminKey);
  return { d, api, s: await seed(api) };
}
