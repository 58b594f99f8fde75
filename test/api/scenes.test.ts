// Scenes from outside: save, edit, delete, apply and undo, with limits, permissions and events.
import t, { type Test } from 'tap';
import { type AmplifierConfig, amplifierKey, defaultConfig } from '../../daemon/config.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { type Client, createUser, injectClient } from '../helpers/inject.js';
import { eventOf, isEvent, openStream, type SseClient } from '../helpers/sse.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

interface Zone {
  id: string;
  volume: number;
  muted: boolean;
  power: boolean;
  playerId: string | null;
  output: { amplifier: string; channel: number };
  tone: { bass: number; treble: number; balance: number; loudness: boolean };
}

interface SceneZone {
  zoneId: string;
  power: boolean;
  volume: number;
  muted: boolean;
  playerId: string | null;
  tone?: { bass?: number; treble?: number; balance?: number; loudness?: boolean };
}

/** Sets a zone's power, volume and mute through the API (power first: it can bring a turn-on volume). */
async function setZone(
  api: Client,
  id: string,
  state: { power: boolean; volume: number; muted: boolean },
): Promise<void> {
  for (const [path, body] of [
    ['power', { power: state.power }],
    ['volume', { volume: state.volume }],
    ['mute', { muted: state.muted }],
  ] as const) {
    const res = await api.put(`/api/zones/${id}/${path}`, body);
    if (res.status !== 204) throw new Error(`setting ${path} of zone ${id}: ${res.status} ${res.text}`);
  }
}

/** A zone as a scene captures it (the simulated amplifier has every tone control). */
const captured = (zone: Zone): SceneZone => ({
  zoneId: zone.id,
  power: zone.power,
  volume: zone.volume,
  muted: zone.muted,
  playerId: zone.playerId,
  tone: zone.tone,
});

async function setup(t: Test, config = {}) {
  const d = await startTestDaemon(t, { config });
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Zone[];
  const ids = zones.map((z) => z.id);
  const zone = async (id: string) => (await api.get(`/api/zones/${id}`)).body as Zone;
  /** Saves a scene and deletes it when the test ends, so every test starts from the same list. */
  const newScene = async (t: Test, name: string, zoneIds?: string[]) => {
    const res = await api.post('/api/scenes', { name, zoneIds });
    if (res.status !== 201) throw new Error(`saving scene ${name}: ${res.status} ${res.text}`);
    t.teardown(() => api.del(`/api/scenes/${res.body.id}`));
    return res.body as { id: string; name: string; zones: SceneZone[]; createdAt: string; updatedAt: string };
  };
  return { d, api, zones, ids, zone, newScene };
}

t.test('scenes', async (t) => {
  const { d, api, ids, zone, newScene } = await setup(t);
  const [z1, z2, z3, z4] = ids as [string, string, string, string];
  const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 2 } })).body as { id: string };
  const hidden = (await api.post('/api/players', { name: 'Not for operators', input: { channel: 3 } })).body as {
    id: string;
  };
  const operator = await createUser(api, 'scene-op', 'Operator', { playerIds: [player.id], zoneIds: [z1, z2] });
  const viewer = await createUser(api, 'scene-viewer', 'Viewer', { playerIds: [player.id], zoneIds: [z1, z2] });
  const op = injectClient(d.daemon, operator.apiKey);
  const view = injectClient(d.daemon, viewer.apiKey);

  t.test('an admin saves the current state of the chosen zones as a scene', async (t) => {
    await setZone(api, z1, { power: true, volume: 0.4, muted: false });
    await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [z1] });
    await setZone(api, z2, { power: false, volume: 0.2, muted: true });
    const scene = await newScene(t, 'Dinner', [z2, z1, z2]);
    t.match(scene, { name: 'Dinner', createdAt: String, updatedAt: String });
    t.same(
      scene.zones,
      [captured(await zone(z1)), captured(await zone(z2))],
      'both zones, in the amplifier order, duplicates ignored',
    );
    t.match(scene.zones[0], { zoneId: z1, power: true, volume: 0.4, muted: false, playerId: player.id });
    t.same((await api.get(`/api/scenes/${scene.id}`)).body, scene);
  });

  t.test('a scene saved without zone ids captures every zone', async (t) => {
    const scene = await newScene(t, 'Everything');
    t.same(
      scene.zones.map((z) => z.zoneId),
      ids,
    );
  });

  t.test('scene names are unique whatever their letter case, and trimmed', async (t) => {
    const scene = await newScene(t, '  Morning ', [z1]);
    t.equal(scene.name, 'Morning');
    const again = await api.post('/api/scenes', { name: 'MORNING', zoneIds: [z2] });
    t.equal(again.status, 409);
    t.match(again.body.detail, /"Morning" already exists/);
    const other = await newScene(t, 'Evening', [z2]);
    t.equal((await api.put(`/api/scenes/${other.id}`, { name: 'morning' })).status, 409, 'nor by renaming');
    t.equal(
      (await api.put(`/api/scenes/${scene.id}`, { name: 'MORNING' })).status,
      200,
      'a scene may change its own case',
    );
  });

  t.test('a blank or overlong name, or an unknown zone id, is a 400 and saves nothing', async (t) => {
    const before = (await api.get('/api/scenes')).body.length;
    for (const body of [
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(65) },
      { name: 42 },
      {},
      { name: 'Ok', zoneIds: [UNKNOWN] },
      { name: 'Ok', zoneIds: [] },
    ]) {
      const res = await api.post('/api/scenes', body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.ok(res.body.errors, 'names the field');
    }
    t.equal((await api.get('/api/scenes')).body.length, before);
  });

  t.test('the list is sorted by name regardless of letter case', async (t) => {
    for (const name of ['beta', 'Alpha', 'gamma']) await newScene(t, name, [z1]);
    const names = ((await api.get('/api/scenes')).body as Array<{ name: string }>)
      .map((s) => s.name)
      .filter((n) => ['beta', 'Alpha', 'gamma'].includes(n));
    t.same(names, ['Alpha', 'beta', 'gamma']);
  });

  t.test('an admin renames a scene and replaces its captured values', async (t) => {
    const scene = await newScene(t, 'Party', [z1]);
    const zones = [
      { zoneId: z3, power: true, volume: 0.7, muted: false, playerId: player.id },
      { zoneId: z4, power: false, volume: 0.1, muted: true, playerId: null },
    ];
    const res = await api.put(`/api/scenes/${scene.id}`, { name: 'Loud party', zones });
    t.equal(res.status, 200);
    t.match(res.body, { id: scene.id, name: 'Loud party', zones });
    t.equal(res.body.zones.length, 2, 'the old zone is gone');
    t.ok(res.body.updatedAt >= scene.createdAt);
    t.same((await api.get(`/api/scenes/${scene.id}`)).body, res.body);
  });

  t.test(
    'editing with unknown zones or players, a zone twice or nothing to change is a 400 and changes nothing',
    async (t) => {
      const scene = await newScene(t, 'Fixed', [z1]);
      const state = { power: true, volume: 0.5, muted: false };
      const bodies = [
        {},
        { zones: [] },
        { zones: [{ zoneId: UNKNOWN, ...state, playerId: null }] },
        { zones: [{ zoneId: z1, ...state, playerId: UNKNOWN }] },
        {
          zones: [
            { zoneId: z1, ...state, playerId: null },
            { zoneId: z1, ...state, playerId: null },
          ],
        },
        { zones: [{ zoneId: z1, ...state, volume: 1.5, playerId: null }] },
        { zones: [{ zoneId: z1, power: true, volume: 0.5, playerId: null }] },
      ];
      for (const body of bodies) {
        const res = await api.put(`/api/scenes/${scene.id}`, body);
        t.equal(res.status, 400, JSON.stringify(body));
        t.match(res.headers.get('content-type'), /problem\+json/);
      }
      const unknown = await api.put(`/api/scenes/${scene.id}`, {
        zones: [{ zoneId: z1, ...state, playerId: UNKNOWN }],
      });
      t.match(unknown.body.detail, UNKNOWN, 'the detail names the id');
      t.same((await api.get(`/api/scenes/${scene.id}`)).body, scene);
      t.equal((await api.put(`/api/scenes/${UNKNOWN}`, { name: 'x' })).status, 404);
    },
  );

  t.test('a deleted scene is gone', async (t) => {
    const scene = (await api.post('/api/scenes', { name: 'Short-lived', zoneIds: [z1] })).body;
    t.equal((await api.del(`/api/scenes/${scene.id}`)).status, 204);
    t.equal((await api.get(`/api/scenes/${scene.id}`)).status, 404);
    t.equal((await api.del(`/api/scenes/${scene.id}`)).status, 404);
    t.notOk((await api.get('/api/scenes')).body.some((s: { id: string }) => s.id === scene.id));
  });

  t.test('applying a scene puts its zones in the captured state, on the amplifier too', async (t) => {
    const scene = await newScene(t, 'Kitchen on', [z3, z4]);
    await api.put(`/api/scenes/${scene.id}`, {
      zones: [
        { zoneId: z3, power: true, volume: 0.6, muted: false, playerId: player.id },
        { zoneId: z4, power: false, volume: 0.25, muted: true, playerId: null },
      ],
    });
    await setZone(api, z3, { power: false, volume: 0.1, muted: true });
    await setZone(api, z4, { power: true, volume: 0.9, muted: false });
    const res = await api.post(`/api/scenes/${scene.id}/apply`);
    t.equal(res.status, 200);
    t.same(res.body, { applied: scene.id, zoneIds: [z3, z4], skipped: [] });
    t.match(await zone(z3), { power: true, volume: 0.6, muted: false, playerId: player.id });
    t.match(await zone(z4), { power: false, volume: 0.25, muted: true, playerId: null });
    await d.driver.settled();
    t.match(d.driver.hardwareState(3), { power: true, muted: false, source: 2 });
    t.equal(Math.round(d.driver.hardwareState(3)!.volume * 38), Math.round(0.6 * 38));
    t.match(d.driver.hardwareState(4), { power: false });
  });

  t.test("a scene volume above a zone's limit is applied clamped to it", async (t) => {
    t.teardown(() => api.put(`/api/zones/${z3}`, { maxVolume: 1 }));
    const scene = await newScene(t, 'Too loud', [z3]);
    await api.put(`/api/scenes/${scene.id}`, {
      zones: [{ zoneId: z3, power: true, volume: 0.9, muted: false, playerId: null }],
    });
    t.equal((await api.put(`/api/zones/${z3}`, { maxVolume: 0.5 })).status, 200);
    t.equal((await api.post(`/api/scenes/${scene.id}/apply`)).status, 200);
    t.equal((await zone(z3)).volume, 0.5);
    t.equal((await api.get(`/api/scenes/${scene.id}`)).body.zones[0].volume, 0.9, 'the scene keeps what was captured');
  });

  t.test('undo restores what an apply replaced, and a second undo redoes the apply', async (t) => {
    await setZone(api, z3, { power: true, volume: 0.3, muted: false });
    const scene = await newScene(t, 'Quiet', [z3]);
    await api.put(`/api/scenes/${scene.id}`, {
      zones: [{ zoneId: z3, power: true, volume: 0.15, muted: true, playerId: null }],
    });
    t.equal((await api.post(`/api/scenes/${scene.id}/apply`)).status, 200);
    t.match(await zone(z3), { volume: 0.15, muted: true });
    const undo = await api.post('/api/scenes/undo');
    t.equal(undo.status, 200);
    t.same(undo.body, { applied: 'undo', zoneIds: [z3], skipped: [] });
    t.match(await zone(z3), { power: true, volume: 0.3, muted: false }, 'as before the apply');
    t.equal((await api.post('/api/scenes/undo')).status, 200);
    t.match(await zone(z3), { volume: 0.15, muted: true }, 'redone');
  });

  t.test('applies run one at a time: an undo after two applies returns to the state between them', async (t) => {
    await setZone(api, z4, { power: true, volume: 0.2, muted: false });
    const first = await newScene(t, 'First', [z4]);
    const second = await newScene(t, 'Second', [z4]);
    await api.put(`/api/scenes/${first.id}`, {
      zones: [{ zoneId: z4, power: true, volume: 0.4, muted: false, playerId: null }],
    });
    await api.put(`/api/scenes/${second.id}`, {
      zones: [{ zoneId: z4, power: true, volume: 0.6, muted: false, playerId: null }],
    });
    const [a, b] = await Promise.all([
      api.post(`/api/scenes/${first.id}/apply`),
      api.post(`/api/scenes/${second.id}/apply`),
    ]);
    t.same([a.status, b.status], [200, 200]);
    t.equal((await zone(z4)).volume, 0.6);
    await api.post('/api/scenes/undo');
    t.equal((await zone(z4)).volume, 0.4, 'the second apply saved what the first one left');
  });

  t.test('an operator sees and applies only the scenes whose zones it may all see', async (t) => {
    const mine = await newScene(t, 'Operator zones', [z1, z2]);
    const mixed = await newScene(t, 'Mixed zones', [z1, z3]);
    const listed = ((await op.get('/api/scenes')).body as Array<{ id: string }>).map((s) => s.id);
    t.ok(listed.includes(mine.id));
    t.notOk(listed.includes(mixed.id));
    t.equal((await op.get(`/api/scenes/${mixed.id}`)).status, 404);
    t.equal((await op.post(`/api/scenes/${mixed.id}/apply`)).status, 404);
    t.equal((await op.post(`/api/scenes/${mine.id}/apply`)).status, 200);
  });

  t.test('an operator does not see a player outside its assignments in a scene', async (t) => {
    const scene = await newScene(t, 'Hidden player', [z1]);
    await api.put(`/api/scenes/${scene.id}`, {
      zones: [{ zoneId: z1, power: true, volume: 0.3, muted: false, playerId: hidden.id }],
    });
    t.equal((await op.get(`/api/scenes/${scene.id}`)).body.zones[0].playerId, null);
    t.equal((await api.get(`/api/scenes/${scene.id}`)).body.zones[0].playerId, hidden.id);
  });

  t.test('an operator cannot undo an apply that covered zones outside its assignments', async (t) => {
    const scene = await newScene(t, 'Admin only', [z1, z3]);
    t.equal((await api.post(`/api/scenes/${scene.id}/apply`)).status, 200);
    const res = await op.post('/api/scenes/undo');
    t.equal(res.status, 404);
    t.match(res.body.detail, /outside your assignments/);
  });

  t.test('only admins save, edit and delete scenes; a viewer cannot apply or undo', async (t) => {
    const scene = await newScene(t, 'Guarded', [z1]);
    t.equal((await op.post('/api/scenes', { name: 'Mine', zoneIds: [z1] })).status, 403);
    t.equal((await op.put(`/api/scenes/${scene.id}`, { name: 'Renamed' })).status, 403);
    t.equal((await op.del(`/api/scenes/${scene.id}`)).status, 403);
    t.equal((await view.get(`/api/scenes/${scene.id}`)).status, 200, 'a viewer reads it');
    t.equal((await view.post(`/api/scenes/${scene.id}/apply`)).status, 403);
    t.equal((await view.post('/api/scenes/undo')).status, 403);
    t.equal((await api.get(`/api/scenes/${scene.id}`)).body.name, 'Guarded');
  });

  t.test('scene events reach admins, and operators only for scenes whose zones they all see', async (t) => {
    const admin = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
    const oper = openStream(d.base, '/api/stream/events', { 'X-API-Key': operator.apiKey });
    t.teardown(() => {
      admin.close();
      oper.close();
    });
    for (const stream of [admin, oper]) await stream.next((m) => m.retry !== undefined);
    const hiddenScene = (await api.post('/api/scenes', { name: 'Hidden', zoneIds: [z3] })).body;
    await api.put(`/api/scenes/${hiddenScene.id}`, { name: 'Still hidden' });
    await api.post(`/api/scenes/${hiddenScene.id}/apply`);
    await api.del(`/api/scenes/${hiddenScene.id}`);
    const shown = (await api.post('/api/scenes', { name: 'Shown', zoneIds: [z1] })).body;
    await api.put(`/api/scenes/${shown.id}`, { name: 'Shown again' });
    await api.post(`/api/scenes/${shown.id}/apply`);
    await api.del(`/api/scenes/${shown.id}`);

    const sceneEvents = async (stream: SseClient) => {
      await stream.next(isEvent('scene.deleted', (p) => p.sceneId === shown.id));
      return stream.messages
        .map(eventOf)
        .filter((e) => e?.type.startsWith('scene.'))
        .map((e) => [e!.type, e!.payload.scene?.id ?? e!.payload.sceneId]);
    };
    const sequence = (id: string) => [
      ['scene.created', id],
      ['scene.updated', id],
      ['scene.applied', id],
      ['scene.deleted', id],
    ];
    t.same(await sceneEvents(admin), [...sequence(hiddenScene.id), ...sequence(shown.id)]);
    t.same(await sceneEvents(oper), sequence(shown.id), 'the operator saw only the scene of its zones');
    const applied = eventOf(oper.messages.find(isEvent('scene.applied'))!)!;
    t.same(applied.payload, { sceneId: shown.id, zoneIds: [z1] });
  });
});

t.test('undo with nothing to undo is a conflict', async (t) => {
  const { api } = await setup(t);
  const res = await api.post('/api/scenes/undo');
  t.equal(res.status, 409);
  t.match(res.body.detail, /nothing to undo/);
});

t.test('the number of scenes is capped by limits.scenes', async (t) => {
  const { api, ids } = await setup(t, { limits: { ...defaultConfig().limits, scenes: 2 } });
  for (const name of ['One', 'Two']) t.equal((await api.post('/api/scenes', { name, zoneIds: [ids[0]] })).status, 201);
  const res = await api.post('/api/scenes', { name: 'Three', zoneIds: [ids[0]] });
  t.equal(res.status, 409);
  t.match(res.body.detail, /at most 2 scenes/);
  t.equal((await api.get('/api/scenes')).body.length, 2);
});

t.test('a scene cannot route a player to a zone of another amplifier', async (t) => {
  const simulated = (name: string): AmplifierConfig => ({
    name,
    key: amplifierKey(name),
    driver: 'simulated',
    port: undefined,
    options: {},
  });
  const d = await startTestDaemon(t, {
    configuredAmplifiers: true,
    config: { amplifiers: [simulated('Main'), simulated('Garage')] },
  });
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Zone[];
  const garageZone = zones.find((z) => z.output.amplifier === 'Garage')!;
  const mainPlayer = (
    await api.post('/api/players', { name: 'Main streamer', input: { amplifier: 'Main', channel: 1 } })
  ).body;
  const scene = (await api.post('/api/scenes', { name: 'Garage', zoneIds: [garageZone.id] })).body;
  const res = await api.put(`/api/scenes/${scene.id}`, {
    zones: [{ zoneId: garageZone.id, power: true, volume: 0.3, muted: false, playerId: mainPlayer.id }],
  });
  t.equal(res.status, 400);
  t.match(res.body.detail, /feeds amplifier Main, but zone .* is on amplifier Garage/);
  t.same((await api.get(`/api/scenes/${scene.id}`)).body, scene);
});
