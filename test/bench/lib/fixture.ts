// Puts a benchmark daemon into a realistic state through its API: players routed to zones, playlists with tracks.
import { type Client, client } from '../../helpers/client.js';

export interface Fixture {
  api: Client;
  playerIds: string[];
  zoneIds: string[];
  /** The player whose volume the benchmarks change (2 zones attached: 3 events per change). */
  playerId: string;
  zoneId: string;
}

async function expect<T>(
  what: string,
  status: number,
  reply: Promise<{ status: number; body: T; text: string }>,
): Promise<T> {
  const res = await reply;
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

/** Four players on inputs 1-4; player 1 drives zones 1+2, player 2 zone 3, player 3 zone 4, player 4 zone 5. */
export async function setupPlayers(base: string, adminKey: string): Promise<Fixture> {
  const api = client(base, adminKey);
  const zones = await expect<Array<{ id: string; output: { channel: number } }>>(
    'GET /api/zones',
    200,
    api.get('/api/zones'),
  );
  const zoneIds = zones.sort((a, b) => a.output.channel - b.output.channel).map((z) => z.id);
  if (zoneIds.length < 5) throw new Error(`the simulated amplifier should have 6 zones, found ${zoneIds.length}`);
  const playerIds: string[] = [];
  for (let channel = 1; channel <= 4; channel++) {
    const player = await expect<{ id: string }>(
      'POST /api/players',
      201,
      api.post('/api/players', { name: `Bench player ${channel}`, input: { channel } }),
    );
    playerIds.push(player.id);
  }
  const routes: Array<[string, string[]]> = [
    [playerIds[0]!, [zoneIds[0]!, zoneIds[1]!]],
    [playerIds[1]!, [zoneIds[2]!]],
    [playerIds[2]!, [zoneIds[3]!]],
    [playerIds[3]!, [zoneIds[4]!]],
  ];
  for (const [playerId, ids] of routes) {
    await expect('attach-zones', 204, api.post(`/api/players/${playerId}/attach-zones`, { zoneIds: ids }));
  }
  return { api, playerIds, zoneIds, playerId: playerIds[0]!, zoneId: zoneIds[0]! };
}

export async function createPlaylist(api: Client, name: string, tracks: number): Promise<string> {
  const list = Array.from({ length: tracks }, (_, i) => ({
    title: `Track ${i + 1}`,
    uri: `file:///music/${i + 1}.flac`,
    durationMs: 200_000 + i,
  }));
  const playlist = await expect<{ id: string }>(
    'POST /api/playlists',
    201,
    api.post('/api/playlists', { name, tracks: list }),
  );
  return playlist.id;
}
