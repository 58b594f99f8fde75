// Property-based fuzzing of every route: arbitrary bodies and path parameters never give a 5xx,
// a rejected request changes nothing, and the daemon stays healthy.

import fc from 'fast-check';
import t from 'tap';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

/** Every table a request could change, dumped in a stable order. */
function snapshot(db: import('better-sqlite3').Database): string {
  const tables = ['users', 'assignments', 'players', 'zones', 'input_devices', 'playlists', 'tracks', 'meta'];
  return JSON.stringify(
    tables.map((table) => db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()),
    (_k, v) => (Buffer.isBuffer(v) ? v.toString('hex') : v),
  );
}

t.test('fuzzing every route', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const player = (await api.post('/api/players', { name: 'Fuzzed', input: { channel: 1 } })).body;
  const playlist = (
    await api.post('/api/playlists', {
      name: 'Fuzzed',
      tracks: [
        { title: 'a', uri: 'u:a' },
        { title: 'b', uri: 'u:b' },
      ],
    })
  ).body;
  const me = (await api.get('/api/users/me')).body;
  const realIds = [player.id, zones[0]!.id, playlist.id, playlist.tracks[0].id, me.id];

  // Values that look like what each route wants, and values that do not.
  const jsonish = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.integer({ min: -5, max: 300 }),
      fc.string({ maxLength: 40 }),
      fc.constantFrom(...realIds, 'Admin', 'viewer', 'x.m3u8', '../x.m3u8', 0.5, 1, 0, -1),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(
        fc.constantFrom(
          'volume',
          'zoneIds',
          'trackIds',
          'newOrder',
          'isFavorite',
          'filePath',
          'name',
          'tracks',
          'role',
          'isEnabled',
          'username',
          'password',
          'newPassword',
          'playerIds',
          'muted',
          'power',
          'input',
          'output',
          'channel',
          'title',
          'uri',
        ),
        tie('value'),
        { maxKeys: 4 },
      ),
    ),
  })).value;
  const pathParam = fc.oneof(
    fc.constantFrom(...realIds, '00000000-0000-4000-8000-000000000000'),
    fc.string({ maxLength: 50 }),
    fc.uuid(),
  );
  const body = fc.oneof(
    jsonish,
    fc.string({ maxLength: 100 }).map((raw) => ({ __raw: raw })),
  );

  const routes = d.daemon.services.server.routes.filter((r) => r.kind !== 'raw' && r.path !== '/api/auth/logout');
  let requests = 0;
  let fiveHundreds = 0;
  for (const route of routes) {
    await fc
      .assert(
        fc.asyncProperty(pathParam, body, async (id, value) => {
          const path = route.path.replace('{id}', encodeURIComponent(id) || 'x');
          const before = snapshot(d.daemon.services.store.db);
          const raw =
            typeof value === 'object' && value !== null && '__raw' in value
              ? String((value as { __raw: string }).__raw)
              : JSON.stringify(value);
          const res = await api.call(route.method, path, route.body || route.method !== 'GET' ? { raw } : {});
          requests++;
          if (process.env.DEBUG_FUZZ) console.log('FZ', route.method, path, res.status, res.text.slice(0, 120));
          if (res.status >= 500) fiveHundreds++;
          if (res.status >= 500) return false;
          if (res.status >= 400) {
            if (!/problem\+json/.test(res.headers.get('content-type') ?? '')) return false;
            return snapshot(d.daemon.services.store.db) === before;
          }
          return true;
        }),
        { numRuns: 40, seed: 20261122, endOnFailure: true },
      )
      .catch((err: Error) => {
        t.fail(`${route.method} ${route.path}: ${err.message.split('\n').slice(0, 12).join(' | ')}`);
      });
  }
  t.ok(requests >= routes.length * 40, `sent ${requests} fuzzed requests`);
  t.equal(fiveHundreds, 0, 'no 5xx');
  const health = await api.get('/api/health');
  t.equal(health.status, 200, 'healthy afterwards');
  t.equal(health.body.status, 'ok');
});

t.test('a thousand malformed requests give no 5xx and leave the daemon healthy', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const player = (await api.post('/api/players', { name: 'P', input: { channel: 1 } })).body;
  const playlist = (await api.post('/api/playlists', { name: 'L' })).body;
  const before = snapshot(d.daemon.services.store.db);
  const malformed: Array<[string, string, string | undefined, string | undefined]> = [
    ['PUT', `/api/players/${player.id}/volume`, '{"volume":', 'application/json'],
    ['PUT', `/api/players/${player.id}/volume`, '{"volume":"loud"}', 'application/json'],
    ['PUT', `/api/players/${player.id}/volume`, '{"volume":2}', 'application/json'],
    ['PUT', `/api/players/${player.id}/volume`, 'volume=0.5', 'application/x-www-form-urlencoded'],
    ['PUT', `/api/players/${player.id}/volume`, undefined, undefined],
    ['POST', `/api/players/${player.id}/attach-zones`, '{"zoneIds":"all"}', 'application/json'],
    ['POST', `/api/players/${player.id}/attach-zones`, '{"zoneIds":[null]}', 'application/json'],
    ['POST', `/api/players/not-a-uuid/attach-zones`, '{"zoneIds":[]}', 'application/json'],
    ['POST', `/api/playlists/${playlist.id}/reorder`, '{"newOrder":[0,0]}', 'application/json'],
    ['POST', `/api/playlists/${playlist.id}/export`, '{"filePath":"../../etc/passwd.m3u"}', 'application/json'],
    ['DELETE', `/api/playlists/${playlist.id}/tracks`, '{"trackIds":{}}', 'application/json'],
    ['PUT', `/api/input-devices/${player.id}/favorite`, '[]', 'application/json'],
    ['POST', '/api/users', '{"username":"x","role":"God"}', 'application/json'],
    ['PUT', `/api/users/${player.id}`, '{}', 'application/json'],
    ['POST', '/api/playlists', `{"name":"${'n'.repeat(70_000)}"}`, 'application/json'],
    ['POST', '/api/playlists', '\u0000\u0001\u0002', 'application/json'],
    ['GET', '/api/players/%ZZ', undefined, undefined],
    ['PATCH', '/api/zones', undefined, undefined],
  ];
  const statuses = new Map<number, number>();
  for (let i = 0; i < 1000; i++) {
    const [method, path, raw, contentType] = malformed[i % malformed.length]!;
    const res = await api.call(method, path, raw === undefined ? {} : { raw, contentType });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
  t.notOk(
    [...statuses.keys()].some((s) => s >= 500),
    `statuses seen: ${JSON.stringify([...statuses])}`,
  );
  t.ok(
    [...statuses.keys()].every((s) => s >= 400),
    'every one was refused',
  );
  t.equal(snapshot(d.daemon.services.store.db), before, 'nothing changed');
  t.equal((await api.get('/api/health')).body.status, 'ok');
});
