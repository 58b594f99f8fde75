// A realistic session over a real socket, every answer checked against /api/openapi.json as a validating proxy checks
// it: every operation is called, the error cases each route can meet are provoked, and a gap in the document fails.
// A new route fails the coverage check below until the session calls it; a new status fails until it is documented.

import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Validator as OpenApiValidator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { coverReceiver } from '../helpers/cover-receiver.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { MPD, musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { OpenApiCheck } from '../helpers/openapi-check.js';
import { eventOf, openStream, type SseClient } from '../helpers/sse.js';
import { waitFor, within } from '../helpers/wait-for.js';

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';
// Small stream caps, so the session can meet both (429 for one user, 503 for the appliance).
const limits = { ...defaultConfig().limits, streamsPerUser: 2, streamsTotal: 3 };
// The bridge account given at start (no broker URL: the bridge stays off), so the settings route meets its 409.
const mqtt = { ...defaultConfig().mqtt, account: 'admin' };

/**
 * Answers the session must provoke beside calling every operation, so none of them drops out of it unnoticed: writes
 * to zones whose unit does not answer, a Host outside the allow-list, requests while a restore writes, a bridge
 * setting given at start.
 */
const REQUIRED = [
  'PUT /api/zones/{id}/volume 409',
  'PUT /api/zones/{id}/mute 409',
  'PUT /api/zones/{id}/power 409',
  'PUT /api/zones/{id}/sleep 409',
  'PUT /api/zones/{id}/tone 409',
  'PUT /api/zones/{id}/tone 400',
  'POST /api/players/{id}/attach-zones 409',
  'POST /api/players/{id}/detach-zones 409',
  'PUT /api/players/{id}/volume 409',
  'POST /api/scenes 409',
  'POST /api/scenes/{id}/apply 409',
  'GET /api/health 421',
  'GET /api/players 503',
  'POST /api/auth/login 503',
  'PUT /api/settings/mqtt 409',
  'PUT /api/settings/mqtt 400',
  'GET /api/players/{id}/playback 409',
  'POST /api/players/{id}/play 409',
  'POST /api/players/{id}/play 400',
  'POST /api/players/{id}/seek 400',
  'POST /api/players/{id}/seek 409',
  'GET /api/library 404',
  'POST /api/announcements 400',
  'DELETE /api/announcements/{id} 409',
  'GET /api/players/{id}/receivers 409',
  'PUT /api/players/{id}/receivers/{kind} 400',
  'PUT /api/players/{id}/cast-settings 400',
];

/** Over node:http, which sends the Host header given (fetch sends the URL's own). */
function withHost(
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const received = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) received.set(name, String(value));
        resolve({ status: res.statusCode ?? 0, headers: received, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('a session replayed against the OpenAPI document', async (t) => {
  const driver = new SimulatedDriver({ applyDelayMs: 1 });
  // Stream players are played by the real MPD, from a music folder of sox tones.
  const playback = { ...defaultConfig().playback, mpdPath: MPD, musicDir: musicFolder(t) };
  // AirPlay's receiver is a stand-in that casts a cover (test/helpers/cover-receiver.ts): the other kinds start none.
  const castingOptions = { kinds: { airplay: coverReceiver } };
  const d = await startTestDaemon(t, { driver, config: { limits, mqtt, playback }, castingOptions });
  const document = await (await fetch(`${d.base}/api/openapi.json`)).json();

  t.test('the document is a valid OpenAPI 3.1 document', async (t) => {
    const result = await new OpenApiValidator().validate(document as Parameters<OpenApiValidator['validate']>[0]);
    t.ok(result.valid, JSON.stringify(result.errors ?? []).slice(0, 2000));
  });

  const check = new OpenApiCheck(document);
  const problems: string[] = [];
  const streams: SseClient[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));

  interface Call {
    key?: string;
    token?: string;
    body?: unknown;
    /** Sent as it is, with this Content-Type. */
    raw?: { text: string; type: string };
    headers?: Record<string, string>;
    /** Sent as the Host header (no body). */
    host?: string;
  }
  /** Sends one request, checks its answer against the document, and returns it (body parsed when JSON). */
  const call = async (method: string, path: string, expected: number, options: Call = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key ?? (options.token ? undefined : d.adminKey);
    if (key) headers['X-API-Key'] = key;
    if (options.token) headers.Authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.raw) {
      body = options.raw.text;
      headers['Content-Type'] = options.raw.type;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    const res = options.host
      ? await withHost(d.base + path, method, { ...headers, Host: options.host })
      : await fetch(d.base + path, { method, headers, body }).then(async (r) => ({
          status: r.status,
          headers: r.headers,
          text: await r.text(),
        }));
    const { text } = res;
    const where = `${method} ${path}`;
    if (res.status !== expected)
      problems.push(`${where}: expected ${expected}, got ${res.status}: ${text.slice(0, 300)}`);
    problems.push(
      ...check.checkResponse({ method, path: path.split('?')[0]!, status: res.status, headers: res.headers, text }),
    );
    // What the daemon took, the document accepts: a request body the schema refuses must not have succeeded.
    if (options.body !== undefined && res.status < 300) {
      problems.push(
        ...check
          .checkRequest(method, path.split('?')[0]!, options.body)
          .map((p) => `${where}: the document refuses a body the daemon took: ${p}`),
      );
    }
    return {
      status: res.status,
      headers: res.headers,
      body: /json/.test(res.headers.get('content-type') ?? '') && text ? JSON.parse(text) : undefined,
    };
  };
  /** A body the daemon refuses with 400 that the document's schema refuses as well (the rule is schema, not prose). */
  const schemaRefuses = async (method: string, path: string, body: unknown) => {
    await call(method, path, 400, { body });
    if (check.checkRequest(method, path, body).length === 0)
      problems.push(`${method} ${path}: the document accepts ${JSON.stringify(body)}, the daemon refuses it`);
  };

  // Every event the session causes, as an admin's stream receives it.
  const events = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  streams.push(events);
  await events.next((m) => m.retry !== undefined, 5000, 'the admin stream');

  await t.test('system, discovery and the HTTP layer', async () => {
    await call('GET', '/api/health', 200, { key: '' });
    await call('GET', '/api/openapi.json', 200, { key: '' });
    await call('GET', '/api/health', 421, { key: '', host: 'rebind.attacker.example' });
    await call('GET', '/description.xml', 200, { key: '' });
    await call('GET', '/api/users/me', 401, { key: '' });
    await call('GET', '/api/users/me', 401, { key: 'svc_0000' });
    await call('PATCH', '/api/players', 405);
    await call('DELETE', '/api/health', 405);
    await call('POST', '/api/users', 415, { raw: { text: 'username=x', type: 'application/x-www-form-urlencoded' } });
    await call('POST', '/api/users', 413, {
      raw: { text: JSON.stringify({ username: 'x'.repeat(70_000) }), type: 'application/json' },
    });
    await call('POST', '/api/users', 400, { raw: { text: '{"username":', type: 'application/json' } });
  });

  const viewer = (
    await call('POST', '/api/users', 201, {
      body: { username: 'replay-viewer', password: 'viewer-pass-1', role: 'Viewer' },
    })
  ).body;
  const victim = (
    await call('POST', '/api/users', 201, {
      body: { username: 'replay-victim', password: 'victim-pass-1', role: 'Operator' },
    })
  ).body;

  await t.test('auth and users', async () => {
    const session = (
      await call('POST', '/api/auth/login', 200, { key: '', body: { username: 'admin', password: d.adminPassword } })
    ).body.token;
    // Five failed logins, then the throttle (per username and per address).
    for (let i = 0; i < 5; i++)
      await call('POST', '/api/auth/login', 401, {
        key: '',
        body: { username: 'replay-victim', password: `wrong-${i}` },
      });
    await call('POST', '/api/auth/login', 429, {
      key: '',
      body: { username: 'replay-victim', password: 'wrong-again' },
    });
    await call('GET', '/api/users/me', 200, { token: session });
    await call('POST', '/api/auth/logout', 400);
    await call('POST', '/api/auth/logout', 204, { token: session });
    await call('GET', '/api/users', 200);
    await call('GET', '/api/users', 403, { key: viewer.apiKey });
    await call('GET', `/api/users/${victim.id}`, 200);
    await call('GET', '/api/users/not-a-uuid', 400);
    await call('GET', `/api/users/${NO_SUCH_ID}`, 404);
    await call('PUT', `/api/users/${victim.id}`, 200, { body: { isEnabled: true } });
    await schemaRefuses('PUT', `/api/users/${victim.id}`, {});
    await call('PUT', `/api/users/${victim.id}/password`, 200, { body: { newPassword: 'victim-pass-2' } });
    await call('PUT', `/api/users/${viewer.id}/password`, 403, {
      key: viewer.apiKey,
      body: { newPassword: 'viewer-pass-2' },
    });
    await call('POST', '/api/users', 409, {
      body: { username: 'replay-viewer', password: 'viewer-pass-1', role: 'Viewer' },
    });
    // A user without a password (a hub): it uses its API key only, until an admin gives it one.
    const hub = (await call('POST', '/api/users', 201, { body: { username: 'replay-hub', role: 'Operator' } })).body;
    await call('GET', '/api/users/me', 200, { key: hub.apiKey });
    await call('PUT', `/api/users/${hub.id}/password`, 200, { body: { newPassword: 'hub-pass-1' } });
    await call('GET', `/api/users/${victim.id}/api-key`, 200);
    await call('POST', `/api/users/${victim.id}/api-key`, 200);
    await call('DELETE', `/api/users/${victim.id}/api-key`, 204);
    await call('GET', `/api/users/${victim.id}/api-key`, 404);
    await call('PUT', `/api/users/${victim.id}/assignments`, 200, { body: { playerIds: [], zoneIds: [] } });
    await call('PUT', `/api/users/${victim.id}/assignments`, 400, { body: { playerIds: [NO_SUCH_ID], zoneIds: [] } });
    await call('DELETE', `/api/users/${victim.id}`, 204);
    await call('DELETE', `/api/users/${victim.id}`, 404);
  });

  const zones = (await call('GET', '/api/zones', 200)).body as Array<{ id: string; output: { channel: number } }>;
  const player = (await call('POST', '/api/players', 201, { body: { name: 'Streamer', input: { channel: 1 } } })).body;

  await t.test('players and zones', async () => {
    await call('GET', '/api/players', 200);
    await call('GET', `/api/players/${player.id}`, 200);
    await call('POST', '/api/players', 409, { body: { name: 'Again', input: { channel: 1 } } });
    await call('PUT', `/api/players/${player.id}`, 200, { body: { name: 'Living streamer' } });
    await call('POST', `/api/players/${player.id}/attach-zones`, 204, {
      body: { zoneIds: [zones[0]!.id, zones[1]!.id] },
    });
    await call('POST', `/api/players/${player.id}/attach-zones`, 400, { body: { zoneIds: [NO_SUCH_ID] } });
    await call('PUT', `/api/players/${player.id}/volume`, 204, { body: { volume: 0.4 } });
    await call('PUT', `/api/players/${player.id}/volume`, 204, { body: { delta: 0.05 } });
    await schemaRefuses('PUT', `/api/players/${player.id}/volume`, { volume: 0.5, delta: 0.1 });
    await schemaRefuses('PUT', `/api/players/${player.id}/volume`, {});
    await call('PUT', `/api/players/${player.id}/volume`, 403, { key: viewer.apiKey, body: { volume: 0.4 } });
    await call('POST', `/api/players/${player.id}/detach-zones`, 204, { body: { zoneIds: [zones[1]!.id] } });
    await call('GET', `/api/zones/${zones[0]!.id}`, 200);
    await call('PUT', `/api/zones/${zones[0]!.id}`, 200, { body: { name: 'Kitchen', maxVolume: 0.9 } });
    await schemaRefuses('PUT', `/api/zones/${zones[0]!.id}`, {});
    await schemaRefuses('PUT', `/api/zones/${zones[0]!.id}/volume`, { volume: 0.2, delta: -0.1 });
    await call('PUT', `/api/zones/${zones[0]!.id}/volume`, 204, { body: { volume: 0.3 } });
    await call('PUT', `/api/zones/${zones[0]!.id}/mute`, 204, { body: { muted: true } });
    await call('PUT', `/api/zones/${zones[0]!.id}/tone`, 204, {
      body: { bass: 0.5, treble: -0.5, balance: 0, loudness: true },
    });
    await schemaRefuses('PUT', `/api/zones/${zones[0]!.id}/tone`, {});
    await schemaRefuses('PUT', `/api/zones/${zones[0]!.id}/tone`, { bass: 1.5 });
    await call('PUT', `/api/zones/${zones[0]!.id}/tone`, 400, { body: { bas: 0.5 } });
    await call('PUT', `/api/zones/${zones[0]!.id}/tone`, 403, { key: viewer.apiKey, body: { bass: 0 } });
    await call('PUT', `/api/zones/${NO_SUCH_ID}/tone`, 404, { body: { bass: 0 } });
    await call('PUT', `/api/zones/${zones[0]!.id}/power`, 204, { body: { power: true } });
    await call('PUT', `/api/zones/${zones[0]!.id}/sleep`, 200, { body: { minutes: 30 } });
    await call('PUT', `/api/zones/${zones[5]!.id}/sleep`, 409, { body: { minutes: 30 } });
    await call('POST', '/api/zones/all-off', 200);
    await call('POST', '/api/zones', 409, { body: { name: 'Twice', output: { channel: zones[5]!.output.channel } } });
    await call('DELETE', `/api/zones/${zones[5]!.id}`, 204);
    await call('POST', '/api/zones', 201, { body: { name: 'Patio', output: { channel: zones[5]!.output.channel } } });
    await call('GET', `/api/zones/${NO_SUCH_ID}`, 404);
    const spare = (await call('POST', '/api/players', 201, { body: { name: 'Spare', input: { channel: 2 } } })).body;
    await call('DELETE', `/api/players/${spare.id}`, 204);
    await call('DELETE', `/api/players/${spare.id}`, 404);
  });

  await t.test('scenes', async () => {
    await call('GET', '/api/scenes', 200);
    const scene = (await call('POST', '/api/scenes', 201, { body: { name: 'Dinner', zoneIds: [zones[0]!.id] } })).body;
    await call('POST', '/api/scenes', 409, { body: { name: 'dinner' } });
    await call('GET', `/api/scenes/${scene.id}`, 200);
    await call('PUT', `/api/scenes/${scene.id}`, 200, { body: { name: 'Supper' } });
    await schemaRefuses('PUT', `/api/scenes/${scene.id}`, {});
    await call('POST', '/api/scenes/undo', 409);
    await call('POST', `/api/scenes/${scene.id}/apply`, 200);
    await call('POST', '/api/scenes/undo', 200);
    await call('DELETE', `/api/scenes/${scene.id}`, 204);
    await call('GET', `/api/scenes/${scene.id}`, 404);
  });

  await t.test('zones whose unit does not answer', async (t) => {
    const [kitchen, den, study] = [zones[0]!, zones[2]!, zones[3]!];
    const denPlayer = (
      await call('POST', '/api/players', 201, { body: { name: 'Den streamer', input: { channel: 3 } } })
    ).body;
    await call('POST', `/api/players/${denPlayer.id}/attach-zones`, 204, { body: { zoneIds: [den.id] } });
    await call('PUT', `/api/zones/${study.id}/power`, 204, { body: { power: true } });
    const both = (
      await call('POST', '/api/scenes', 201, { body: { name: 'Both rooms', zoneIds: [kitchen.id, den.id] } })
    ).body;
    const denOnly = (await call('POST', '/api/scenes', 201, { body: { name: 'Den alone', zoneIds: [den.id] } })).body;
    driver.simulateUnit([den.output.channel, study.output.channel], false, 'unit 2 does not answer');
    t.teardown(() => driver.simulateUnit([den.output.channel, study.output.channel], true));

    t.match((await call('GET', `/api/zones/${den.id}`, 200)).body, {
      available: false,
      unavailableReason: /unit 2 does not answer/,
    });
    await call('PUT', `/api/zones/${den.id}/volume`, 409, { body: { volume: 0.2 } });
    await call('PUT', `/api/zones/${den.id}/mute`, 409, { body: { muted: true } });
    await call('PUT', `/api/zones/${den.id}/tone`, 409, { body: { treble: 0.25 } });
    await call('PUT', `/api/zones/${den.id}/power`, 409, { body: { power: true } });
    await call('PUT', `/api/zones/${den.id}/sleep`, 409, { body: { minutes: 10 } });
    await call('POST', `/api/players/${player.id}/attach-zones`, 409, { body: { zoneIds: [study.id] } });
    await call('POST', `/api/players/${denPlayer.id}/detach-zones`, 409, { body: { zoneIds: [den.id] } });
    await call('PUT', `/api/players/${denPlayer.id}/volume`, 409, { body: { volume: 0.3 } });
    await call('POST', '/api/scenes', 409, { body: { name: 'Study', zoneIds: [study.id] } });
    await call('POST', `/api/scenes/${denOnly.id}/apply`, 409);
    const applied = (await call('POST', `/api/scenes/${both.id}/apply`, 200)).body;
    t.same(
      applied.skipped?.map((s: { zoneId: string }) => s.zoneId),
      [den.id],
      'the scene skipped the zone that cannot answer',
    );
    const off = (await call('POST', '/api/zones/all-off', 200)).body;
    t.same(
      off.skipped?.map((s: { zoneId: string }) => s.zoneId).sort(),
      [den.id, study.id].sort(),
      'all off skipped the zones that were on (the attached one and the one powered) and cannot answer',
    );

    driver.simulateUnit([den.output.channel, study.output.channel], true);
    t.match((await call('GET', `/api/zones/${den.id}`, 200)).body, { available: true, unavailableReason: null });
    await call('PUT', `/api/players/${denPlayer.id}/volume`, 204, { body: { volume: 0.3 } });
    await call('DELETE', `/api/scenes/${both.id}`, 204);
    await call('DELETE', `/api/scenes/${denOnly.id}`, 204);
  });

  await t.test('the Home Assistant bridge settings', async () => {
    await call('GET', '/api/settings/mqtt', 200);
    await call('GET', '/api/settings/mqtt', 403, { key: viewer.apiKey });
    await call('PUT', '/api/settings/mqtt', 200, { body: { username: 'hub-login' } });
    await call('PUT', '/api/settings/mqtt', 400, { body: { url: 'http://broker:1883' } });
    await schemaRefuses('PUT', '/api/settings/mqtt', {});
    await call('PUT', '/api/settings/mqtt', 409, { body: { account: 'replay-viewer' } });
    await call('PUT', '/api/settings/mqtt', 200, { body: { username: null } });
  });

  await t.test('playlists and input devices', async () => {
    const tracks = [
      { title: 'One', uri: 'file:///music/1.flac', durationMs: 1000 },
      { title: 'Two', uri: 'file:///music/2.flac' },
    ];
    const list = (await call('POST', '/api/playlists', 201, { body: { name: 'Evening', tracks } })).body;
    await call('POST', '/api/playlists', 201, { body: { name: 'Morning' } });
    const paged = await call('GET', '/api/playlists?limit=1', 200);
    if (!paged.headers.get('link'))
      problems.push('GET /api/playlists?limit=1: no Link to the next page, so the replay did not see one');
    await call('GET', '/api/playlists?limit=abc', 400);
    await call('GET', `/api/playlists/${list.id}`, 200);
    const added = (
      await call('POST', `/api/playlists/${list.id}/tracks`, 200, {
        body: { tracks: [{ title: 'Three', uri: 'file:///music/3.flac' }] },
      })
    ).body;
    await call('DELETE', `/api/playlists/${list.id}/tracks`, 204, { body: { trackIds: [added.tracks[2].id] } });
    await call('POST', `/api/playlists/${list.id}/reorder`, 204, { body: { newOrder: [1, 0] } });
    await call('POST', `/api/playlists/${list.id}/reorder`, 400, { body: { newOrder: [0, 0] } });
    await call('PUT', `/api/playlists/${list.id}/favorite`, 204, { body: { isFavorite: true } });
    await call('POST', `/api/playlists/${list.id}/export`, 204, { body: { filePath: 'rooms/evening.m3u8' } });
    await call('POST', `/api/playlists/${list.id}/export`, 400, { body: { filePath: '../evening.m3u8' } });
    await call('GET', `/api/playlists/${list.id}/m3u`, 200);
    await call('DELETE', `/api/playlists/${list.id}`, 204);
    await call('GET', `/api/playlists/${list.id}`, 404);

    await call('GET', '/api/zones/free-outputs', 200);
    const inputs = (await call('GET', '/api/input-devices', 200)).body as Array<{
      id: string;
      input: { channel: number };
    }>;
    await call('GET', `/api/input-devices/${inputs[0]!.id}`, 200);
    await call('PUT', `/api/input-devices/${inputs[0]!.id}/favorite`, 204, { body: { isFavorite: true } });
    await call('PUT', `/api/input-devices/${inputs[0]!.id}`, 200, { body: { name: 'Record player', kind: 'phono' } });
    await call('POST', '/api/input-devices', 409, {
      body: { name: 'Again', input: { channel: inputs[0]!.input.channel } },
    });
    await call('DELETE', `/api/input-devices/${inputs[0]!.id}`, 204);
    await call('POST', '/api/input-devices', 201, {
      body: { name: 'Turntable', kind: 'phono', input: { channel: inputs[0]!.input.channel } },
    });
  });

  await t.test('stream players, their playback, the library and announcements', async (t) => {
    const stream = (
      await call('POST', '/api/players', 201, {
        body: { name: 'Pi DAC', input: { channel: 4 }, output: { kind: 'null' } },
      })
    ).body;
    await call('POST', '/api/players', 400, {
      body: { name: 'No FIFO', input: { channel: 5 }, output: { kind: 'fifo' } },
    });
    await waitFor(
      async () => (await call('GET', `/api/players/${stream.id}/playback`, 200)).body.engine.state === 'up',
      undefined,
      { what: 'its MPD to be up' },
    );
    await call('PUT', `/api/players/${stream.id}`, 200, { body: { output: { kind: 'null' } } });
    await call('GET', `/api/players/${player.id}/playback`, 409);
    // Receivers switched off only: the session starts no receiver program.
    await call('GET', `/api/players/${stream.id}/receivers`, 200);
    await call('GET', `/api/players/${player.id}/receivers`, 409);
    await call('PUT', `/api/players/${stream.id}/receivers/squeezelite`, 200, { body: { enabled: false } });
    await call('PUT', `/api/players/${stream.id}/receivers/airplay`, 400, {
      body: { enabled: false, server: 'lms.lan' },
    });
    await call('GET', `/api/players/${stream.id}/cast-settings`, 200);
    // A cast's cover: a player on a FIFO whose (stand-in) AirPlay receiver sends one, served and revalidated.
    const fifos = tempDir('azc-replay-fifo-');
    t.teardown(() => rmSync(fifos, { recursive: true, force: true }));
    const fifo = path.join(fifos, 'cover.pcm');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const covered = (
      await call('POST', '/api/players', 201, {
        body: { name: 'Covered', input: { channel: 6 }, output: { kind: 'fifo', path: fifo } },
      })
    ).body;
    await call('GET', `/api/players/${covered.id}/artwork`, 404);
    await call('PUT', `/api/players/${covered.id}/receivers/airplay`, 200, { body: { enabled: true } });
    const artwork: string = await waitFor(
      async () => (await call('GET', `/api/players/${covered.id}/playback`, 200)).body.artwork,
      undefined,
      { what: "the cast's cover" },
    );
    const cover = await call('GET', artwork, 200);
    await call('GET', artwork, 304, { headers: { 'If-None-Match': cover.headers.get('etag') ?? '' } });
    await call('PUT', `/api/players/${covered.id}/receivers/airplay`, 200, { body: { enabled: false } });
    await call('DELETE', `/api/players/${covered.id}`, 204);
    await call('PUT', `/api/players/${stream.id}/cast-settings`, 200, {
      body: { wakeZoneIds: null, offAfterMinutes: 10 },
    });
    await call('PUT', `/api/players/${stream.id}/cast-settings`, 400, {
      body: { wakeZoneIds: [NO_SUCH_ID], offAfterMinutes: null },
    });
    const top = await call('GET', '/api/library?folder=tones&limit=1', 200);
    if (!top.headers.get('link')) problems.push('GET /api/library?folder=tones&limit=1: no Link to the next page');
    await call('GET', '/api/library?folder=nowhere', 404);
    await call('GET', '/api/library?limit=9999', 400);
    await call('POST', '/api/library/rescan', 202);
    const tones = [TRACKS.a, TRACKS.b, TRACKS.long].map((track) => ({ title: track, uri: `file:${track}` }));
    const list = (await call('POST', '/api/playlists', 201, { body: { name: 'Tones', tracks: tones } })).body;
    const at = (command: string) => `/api/players/${stream.id}/${command}`;
    await call('POST', at('seek'), 409, { body: { positionMs: 1000 } });
    await call('POST', at('play'), 200, { body: { playlistId: list.id, trackId: list.tracks[1].id } });
    await schemaRefuses('POST', at('play'), {});
    await call('POST', `/api/players/${player.id}/play`, 409, { body: { uri: `file:${TRACKS.a}` } });
    for (const command of ['pause', 'resume', 'next', 'previous']) await call('POST', at(command), 200);
    await call('POST', at('seek'), 200, { body: { positionMs: 1000 } });
    await call('POST', at('seek'), 400, { body: { positionMs: 600_000 } });
    await call('POST', at('stop'), 200);
    await call('POST', at('play'), 200, { body: { uri: `file:${TRACKS.long}` } });
    const announcement = { uri: `file:${TRACKS.long}`, zoneIds: [zones[0]!.id], volume: 0.3 };
    const queued = (await call('POST', '/api/announcements', 202, { body: announcement })).body;
    await call('POST', '/api/announcements', 400, {
      body: { ...announcement, uri: 'ftp://example.invalid/chime.mp3' },
    });
    await call('GET', '/api/announcements', 200);
    await call('GET', `/api/announcements/${queued.id}`, 200);
    await call('DELETE', `/api/announcements/${queued.id}`, 200);
    const ended = (m: Parameters<typeof eventOf>[0]) =>
      eventOf(m)?.type === 'announcement.ended' && eventOf(m)?.payload.announcement.id === queued.id;
    await events.next(ended, 20_000, 'the cancelled announcement to end');
    await call('DELETE', `/api/announcements/${queued.id}`, 409);
    await call('GET', `/api/announcements/${NO_SUCH_ID}`, 404);
  });

  await t.test('the event stream: its answer, its caps, every event it carried', async () => {
    const stream = async (key: string, expected: number) => {
      const s = openStream(d.base, '/api/stream/events', { 'X-API-Key': key });
      streams.push(s);
      const status = await s.status;
      if (status !== expected) problems.push(`GET /api/stream/events: expected ${expected}, got ${status}`);
      const headers = new Headers(await s.headers);
      // A stream's body never ends and is checked event by event below; a refusal's problem details are read whole.
      const length = Number(headers.get('content-length') ?? 0);
      if (status !== 200)
        await waitFor(() => Buffer.byteLength(s.body()) >= length, undefined, { what: `the ${status} body` });
      const text = status === 200 ? '' : s.body();
      problems.push(...check.checkResponse({ method: 'GET', path: '/api/stream/events', status, headers, text }));
      return s;
    };
    await stream(viewer.apiKey, 200);
    await stream(viewer.apiKey, 200);
    await stream(viewer.apiKey, 429);
    await stream(d.adminKey, 503);
    await stream('svc_0000', 401);
    // The session's events reached the admin's stream; each is what the document says an event is.
    const seen = events.messages.map(eventOf).filter((e) => e !== undefined);
    t.ok(seen.length > 20, `${seen.length} events seen`);
    for (const event of seen) problems.push(...check.checkComponent('Event', event));
  });

  await t.test('backup and restore', async (t) => {
    // With a track, the restore's transaction syncs the database file between its slices (settleLong).
    await call('POST', '/api/playlists', 201, {
      body: { name: 'Kept', tracks: [{ title: 'One', uri: 'file:///music/1.flac' }] },
    });
    const backup = (await call('GET', '/api/backup', 200)).body;
    await call('POST', '/api/backup', 200, { body: { passphrase: 'a long passphrase' } });
    await call('POST', '/api/backup', 403, { key: viewer.apiKey, body: { passphrase: 'a long passphrase' } });
    await call('POST', '/api/restore', 400, { body: { backup: { format: 'something else' } } });
    // The restore is held while it writes (at its first sync), so requests meanwhile meet the 503 for certain.
    const store = d.daemon.services.store;
    const settle = store.settleLong.bind(store);
    let reached!: () => void;
    const writing = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    store.settleLong = async () => {
      reached();
      await released;
      return settle();
    };
    t.teardown(() => {
      release();
      store.settleLong = settle;
    });
    const restored = call('POST', '/api/restore', 200, { body: { backup } });
    await within(writing, undefined, 'the restore to write');
    const busy = await call('GET', '/api/players', 503);
    t.match(busy.headers.get('retry-after'), /^\d+$/, 'a 503 while the restore writes says when to retry');
    await call('POST', '/api/auth/login', 503, { key: '', body: { username: 'admin', password: d.adminPassword } });
    await call('GET', '/api/health', 200, { key: '' });
    release();
    await within(restored, undefined, 'the restore to finish');
    await call('GET', '/api/players', 200);
  });

  t.test('every answer matched the document', async (t) => {
    t.same(problems, []);
  });

  t.test('each answer the session must provoke was met', async (t) => {
    t.same(
      REQUIRED.filter((pair) => !check.seen.has(pair)),
      [],
      'statuses the session never met',
    );
  });

  t.test('every operation of the document was called and answered with success', async (t) => {
    const succeeded = new Set(
      [...check.seen].filter((s) => /\s[23]\d\d$/.test(s)).map((s) => s.replace(/\s\d{3}$/, '')),
    );
    t.same(
      check.operations.filter((op) => !succeeded.has(op)),
      [],
      'operations the session never called with success',
    );
    t.comment(`${check.seen.size} operation and status pairs checked`);
  });
});
