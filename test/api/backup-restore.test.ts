// Backup and restore, black-box: a backup from one daemon restores on a fresh one with every user, key, zone, limit,
// playlist and scene; a bad document changes nothing; a restore keeps a private copy and ends sessions and streams.

import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { BACKUP_VERSION, restoreBodyBytes } from '../../daemon/domain/backup/backup-format.js';
import { volumeToStep } from '../../drivers/driver.js';
import { client } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { type Client, createUser, injectClient } from '../helpers/inject.js';
import { openStream } from '../helpers/sse.js';
import { WAIT_MS, within } from '../helpers/wait-for.js';

const PASSPHRASE = 'correct horse battery staple';

interface Setup {
  d: TestDaemon;
  api: Client;
  operator: { id: string; apiKey: string; password: string };
  viewer: { id: string; apiKey: string; password: string };
  zoneIds: string[];
  playerId: string;
}

/** A daemon with some of everything: users with assignments, a renamed zone with limits, a player, a playlist, a scene. */
async function populated(t: Test): Promise<Setup> {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const zoneIds = zones.map((z) => z.id);
  const player = await api.post('/api/players', { name: 'Streamer', input: { channel: 2 } });
  t.equal(player.status, 201, 'player created');
  const playerId = player.body.id as string;
  t.equal((await api.post(`/api/players/${playerId}/attach-zones`, { zoneIds: [zoneIds[0], zoneIds[1]] })).status, 204);
  t.equal(
    (await api.put(`/api/zones/${zoneIds[0]}`, { name: 'Kitchen', maxVolume: 0.6, turnOnVolume: 0.25 })).status,
    200,
    'zone limits set',
  );
  t.equal((await api.put(`/api/zones/${zoneIds[0]}/volume`, { volume: 0.5 })).status, 204);
  t.equal(
    (await api.put(`/api/zones/${zoneIds[0]}/tone`, { bass: 0.5, balance: -0.2, loudness: true })).status,
    204,
    'zone tone set',
  );
  const operator = await createUser(api, 'operator1', 'Operator', {
    playerIds: [playerId],
    zoneIds: [zoneIds[0]!, zoneIds[1]!],
  });
  const viewer = await createUser(api, 'viewer1', 'Viewer');
  const playlist = await api.post('/api/playlists', {
    name: 'Dinner',
    tracks: [
      { title: 'One', uri: 'http://example.invalid/1.mp3', durationMs: 1000 },
      { title: 'Two', uri: 'http://example.invalid/2.mp3' },
    ],
  });
  t.equal(playlist.status, 201, 'playlist created');
  const scene = await api.post('/api/scenes', { name: 'Dinner', zoneIds: [zoneIds[0], zoneIds[1]] });
  t.equal(scene.status, 201, 'scene created');
  return { d, api, operator, viewer, zoneIds, playerId };
}

/** Everything an admin can read, for before/after comparisons. */
async function fullState(api: Client): Promise<Record<string, unknown>> {
  const get = async (p: string) => {
    const res = await api.get(p);
    if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  const playlists = (await get('/api/playlists')) as Array<{ id: string }>;
  return {
    users: await get('/api/users'),
    players: await get('/api/players'),
    zones: await get('/api/zones'),
    inputDevices: await get('/api/input-devices'),
    playlists: await Promise.all(playlists.map((p) => get(`/api/playlists/${p.id}`))),
    scenes: await get('/api/scenes'),
  };
}

/** A zone as configured: what a restore brings back (a restored zone comes back powered off; timers do not travel). */
const configured = (zones: Array<Record<string, unknown>>) =>
  zones.map(({ power: _p, sleepUntil: _s, ...rest }) => rest);
const playersConfigured = (players: Array<Record<string, unknown>>) => players.map(({ state: _s, ...rest }) => rest);

t.test('an admin downloads the configuration as a versioned document without secrets', async (t) => {
  const { d, api } = await populated(t);
  const res = await api.get('/api/backup');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.match(
    res.headers.get('content-disposition'),
    /^attachment; filename="azcd-backup-plain-\d{4}-\d{2}-\d{2}-\d{6}\.json"$/,
  );
  t.equal(res.headers.get('cache-control'), 'no-store');
  const doc = res.body;
  t.equal(doc.format, 'azcd-backup');
  t.equal(doc.version, BACKUP_VERSION);
  t.equal(doc.schemaVersion, d.daemon.services.store.schemaVersion);
  t.same(doc.users.map((u: { username: string }) => u.username).sort(), ['admin', 'operator1', 'viewer1']);
  t.match(
    doc.zones.find((z: { name: string }) => z.name === 'Kitchen'),
    { maxVolume: 0.6, turnOnVolume: 0.25 },
  );
  t.equal(doc.playlists[0].tracks.length, 2);
  t.equal(doc.scenes[0].name, 'Dinner');
  t.notOk('secrets' in doc, 'no secrets');
  t.notMatch(res.text, /scrypt\$|svc_[0-9a-f]{48}|sst_/, 'no password hash, API key or session token anywhere');
});

t.test('operators and viewers can neither download nor restore a backup', async (t) => {
  const { api, operator, viewer } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  for (const who of [operator, viewer]) {
    t.equal((await api.get('/api/backup', { key: who.apiKey })).status, 403);
    t.equal((await api.post('/api/backup', { passphrase: PASSPHRASE }, { key: who.apiKey })).status, 403);
    t.equal((await api.post('/api/restore', { backup: doc }, { key: who.apiKey })).status, 403);
  }
});

t.test(
  'a backup with a passphrase restores on a fresh daemon with every user, password, API key, zone, playlist and scene',
  async (t) => {
    const a = await populated(t);
    const sealed = await a.api.post('/api/backup', { passphrase: PASSPHRASE });
    t.equal(sealed.status, 200);
    t.match(sealed.body.secrets, { kdf: { name: 'scrypt', N: 32768, r: 8, p: 1 }, cipher: 'nacl-secretbox' });
    t.notMatch(sealed.text, /scrypt\$|svc_[0-9a-f]{48}/, 'the secrets are sealed, not readable');
    const before = await fullState(a.api);

    const b = await startTestDaemon(t);
    const apiB = injectClient(b.daemon, b.adminKey);
    const res = await apiB.post('/api/restore', { backup: sealed.body, passphrase: PASSPHRASE });
    t.equal(res.status, 200, res.text);
    t.match(res.body, {
      restored: { users: 3, players: 1, playlists: 1, tracks: 2, scenes: 1 },
      secretsRestored: true,
      usersWithoutPassword: [],
    });

    t.equal((await apiB.get('/api/users/me')).status, 401, "the fresh daemon's own admin is replaced by the backup's");
    const asA = injectClient(b.daemon, a.d.adminKey);
    const after = await fullState(asA);
    t.same(after.users, before.users, 'users, roles, assignments and (masked) keys');
    t.same(
      configured(after.zones as never),
      configured(before.zones as never),
      'zone names, limits, volumes and routes',
    );
    t.same(playersConfigured(after.players as never), playersConfigured(before.players as never), 'players');
    t.same(after.playlists, before.playlists, 'playlists with their tracks');
    t.same(after.scenes, before.scenes, 'scenes');
    t.same(after.inputDevices, before.inputDevices, 'input devices');

    for (const [username, password, key] of [
      ['admin', a.d.adminPassword, a.d.adminKey],
      ['operator1', a.operator.password, a.operator.apiKey],
      ['viewer1', a.viewer.password, a.viewer.apiKey],
    ] as const) {
      const login = await asA.post('/api/auth/login', { username, password });
      t.equal(login.status, 200, `${username} signs in with its password`);
      const me = await asA.get('/api/users/me', { key });
      t.equal(me.status, 200, `${username}'s API key works`);
      t.equal(me.body.username, username);
    }
    t.equal(
      (await asA.get(`/api/users/${a.operator.id}/api-key`)).body.apiKey,
      a.operator.apiKey,
      'admins read the same full key',
    );
  },
);

t.test('without a passphrase secrets stay out, and users that exist keep their password and key', async (t) => {
  const { d, api, operator, zoneIds } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  t.equal((await api.put(`/api/zones/${zoneIds[0]}`, { name: 'Renamed' })).status, 200);
  const later = await createUser(api, 'later1', 'Operator');

  const res = await api.post('/api/restore', { backup: doc });
  t.equal(res.status, 200, res.text);
  t.match(res.body, { secretsRestored: false, usersWithoutPassword: [] });
  t.equal((await api.get('/api/users/me')).status, 200, 'the restoring admin keeps its key');
  t.equal((await api.get(`/api/zones/${zoneIds[0]}`)).body.name, 'Kitchen', 'the change after the backup is undone');
  t.equal((await api.get(`/api/users/${later.id}`)).status, 404, 'a user made after the backup is gone');
  t.equal((await api.get('/api/users/me', { key: later.apiKey })).status, 401, 'and so is its key');
  t.equal(
    (await api.post('/api/auth/login', { username: 'operator1', password: operator.password })).status,
    200,
    'operator keeps its password',
  );
  t.equal((await api.get('/api/users/me', { key: operator.apiKey })).status, 200, 'and its key');
  t.equal((await api.post('/api/auth/login', { username: 'admin', password: d.adminPassword })).status, 200);
});

t.test('an account made without a password travels in a sealed backup and still has none', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const hub = (await api.post('/api/users', { username: 'hub-account', role: 'Operator' })).body as { apiKey: string };
  const sealed = await api.post('/api/backup', { passphrase: PASSPHRASE });
  t.equal(sealed.status, 200);
  const fresh = await startTestDaemon(t);
  const restored = await injectClient(fresh.daemon, fresh.adminKey).post('/api/restore', {
    backup: sealed.body,
    passphrase: PASSPHRASE,
  });
  t.equal(restored.status, 200, restored.text);
  t.equal(
    (await injectClient(fresh.daemon, hub.apiKey).get('/api/users/me')).body.username,
    'hub-account',
    'its key came along',
  );
  t.equal(
    (
      await injectClient(fresh.daemon).post('/api/auth/login', {
        username: 'hub-account',
        password: 'not a password of anyone',
      })
    ).status,
    401,
    'still no password',
  );
});

t.test('a backup with secrets restored without its passphrase restores as a plain one', async (t) => {
  const { api, operator } = await populated(t);
  const sealed = (await api.post('/api/backup', { passphrase: PASSPHRASE })).body;
  const res = await api.post('/api/restore', { backup: sealed });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.secretsRestored, false);
  t.equal(
    (await api.post('/api/auth/login', { username: 'operator1', password: operator.password })).status,
    200,
    'existing users keep their password',
  );
});

t.test('users new to the appliance restored without secrets get no password and a new key', async (t) => {
  const a = await populated(t);
  const doc = (await a.api.get('/api/backup')).body;
  const b = await startTestDaemon(t);
  const apiB = injectClient(b.daemon, b.adminKey);
  const me = (await apiB.get('/api/users/me')).body;
  const lockedOut = await apiB.post('/api/restore', { backup: doc });
  t.equal(lockedOut.status, 409, 'refused: none of the restored Admins could sign in');
  t.match(
    lockedOut.body.detail,
    /no enabled Admin of the backup \(admin\) could sign in here.*make the backup with a passphrase.*nothing was changed/,
  );
  t.equal((await apiB.get('/api/users/me')).body.id, me.id, "B's admin is still there");
  // B's admin joins the document, so one Admin the restore keeps can still sign in.
  doc.users.push({
    id: me.id,
    username: 'admin-b',
    role: 'Admin',
    isEnabled: true,
    passwordChangeRequired: false,
    createdAt: me.createdAt,
    assignments: { playerIds: [], zoneIds: [] },
  });
  const res = await apiB.post('/api/restore', { backup: doc });
  t.equal(res.status, 200, res.text);
  t.same(res.body.usersWithoutPassword.sort(), ['admin', 'operator1', 'viewer1']);
  t.equal((await apiB.get('/api/users/me')).body.username, 'admin-b', "B's admin keeps its key");
  t.equal(
    (await apiB.post('/api/auth/login', { username: 'operator1', password: a.operator.password })).status,
    401,
    'no password yet',
  );
  t.equal(
    (await apiB.get('/api/users/me', { key: a.operator.apiKey })).status,
    401,
    "the old daemon's key does not work",
  );
  const operator = (await apiB.get(`/api/users/${a.operator.id}`)).body;
  t.equal(operator.passwordChangeRequired, true);
  const key = (await apiB.get(`/api/users/${a.operator.id}/api-key`)).body.apiKey;
  t.equal((await apiB.get('/api/users/me', { key })).body.username, 'operator1', 'the new key works');
  t.equal((await apiB.put(`/api/users/${a.operator.id}/password`, { newPassword: 'a-new-password' })).status, 200);
  t.equal(
    (await apiB.post('/api/auth/login', { username: 'operator1', password: 'a-new-password' })).status,
    200,
    'an admin sets one',
  );
});

t.test(
  'a restore hands the restored state to the amplifier, every zone powered off and within its limit',
  async (t) => {
    const { d, api, zoneIds } = await populated(t);
    t.equal((await api.put(`/api/zones/${zoneIds[1]}/power`, { power: true })).status, 204);
    const doc = (await api.get('/api/backup')).body;
    const kitchen = doc.zones.find((z: { id: string }) => z.id === zoneIds[0]);
    kitchen.volume = 0.9; // above its maxVolume of 0.6, as an edited document might say
    t.equal((await api.put(`/api/zones/${zoneIds[1]}/volume`, { volume: 0.8 })).status, 204);
    t.equal((await api.post('/api/restore', { backup: doc })).status, 200);
    await d.driver.settled();
    const zones = (await api.get('/api/zones')).body as Array<{
      id: string;
      power: boolean;
      volume: number;
      output: { channel: number };
    }>;
    t.ok(
      zones.every((z) => !z.power),
      'every zone is off: a restore never starts sound in a room',
    );
    const byId = new Map(zones.map((z) => [z.id, z]));
    t.equal(byId.get(zoneIds[0]!)!.volume, 0.6, 'a volume above the limit is restored at the limit');
    const backupVolume = doc.zones.find((z: { id: string }) => z.id === zoneIds[1]).volume;
    t.equal(byId.get(zoneIds[1]!)!.volume, backupVolume, "the backup's volume, not the one set after it");
    const steps = d.driver.describe().volumeSteps;
    for (const id of [zoneIds[0]!, zoneIds[1]!]) {
      const zone = byId.get(id)!;
      const hardware = d.driver.hardwareState(zone.output.channel)!;
      t.equal(hardware.power, false, `the amplifier has zone ${zone.output.channel} off`);
      t.equal(volumeToStep(hardware.volume, steps), volumeToStep(zone.volume, steps), `and at the restored volume`);
    }
  },
);

t.test("a backup carries each zone's tone, and a restore brings it back to the zone and the amplifier", async (t) => {
  const { d, api, zoneIds } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  t.same(
    doc.zones.find((z: { id: string }) => z.id === zoneIds[0]).tone,
    { bass: 0.5, treble: 0, balance: -0.2, loudness: true },
    'the whole tone the zone shows',
  );
  t.equal((await api.put(`/api/zones/${zoneIds[0]}/tone`, { bass: -1, balance: 1, loudness: false })).status, 204);
  t.equal((await api.post('/api/restore', { backup: doc })).status, 200);
  await d.driver.settled();
  const kitchen = (await api.get(`/api/zones/${zoneIds[0]}`)).body;
  t.same(kitchen.tone, { bass: 0.5, treble: 0, balance: -0.2, loudness: true });
  t.match(
    d.driver.hardwareTone!(kitchen.output.channel),
    { bass: 4 / 7, balance: -0.2, loudness: true },
    'the amplifier has the tone again (at its nearest step)',
  );
});

t.test('a backup from before tone controls (format version 2, no tone) restores as before', async (t) => {
  const { api, zoneIds } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  for (const zone of doc.zones) delete zone.tone;
  for (const scene of doc.scenes) for (const zone of scene.zones) delete zone.tone;
  const res = await api.post('/api/restore', { backup: { ...doc, version: 2 } });
  t.equal(res.status, 200, res.text);
  t.equal(
    (await api.get(`/api/zones/${zoneIds[1]}`)).body.name,
    doc.zones.find((z: { id: string }) => z.id === zoneIds[1]).name,
  );
});

t.test(
  'zones of an amplifier not configured here are kept, unavailable; channels this amplifier lacks are refused',
  async (t) => {
    const { api } = await populated(t);
    const doc = (await api.get('/api/backup')).body;
    const elsewhere = {
      id: '44444444-4444-4444-8444-444444444444',
      name: 'Garage',
      output: { amplifier: 'garage-amp', driver: 'monoprice', channel: 11 },
      maxVolume: 1,
      turnOnVolume: null,
      volume: 0.2,
      muted: false,
      power: false,
      source: 1,
      playerId: null,
      createdAt: doc.createdAt,
    };
    const outOfRange = JSON.parse(JSON.stringify(doc));
    outOfRange.zones[0].output.channel = 9;
    const refused = await api.post('/api/restore', { backup: outOfRange });
    t.equal(refused.status, 400);
    t.match(
      refused.body.detail,
      /"backup\.zones\.0\.output" channel 9 is not a zone output of amplifier "simulated" here \(it has 1, 2, 3, 4, 5, 6\)/,
    );

    doc.zones.push(elsewhere);
    const res = await api.post('/api/restore', { backup: doc });
    t.equal(res.status, 200, res.text);
    t.same(res.body.unconfiguredAmplifiers, [
      { amplifier: 'garage-amp', driver: 'monoprice', zones: 1, players: 0, inputDevices: 0 },
    ]);
    t.match(
      (await api.get(`/api/zones/${elsewhere.id}`)).body,
      {
        name: 'Garage',
        available: false,
        unavailableReason: 'amplifier "garage-amp" (driver monoprice) is not configured',
      },
      'listed as unavailable, like any zone of an amplifier that is not configured',
    );
    const again = (await api.get('/api/backup')).body;
    t.ok(
      again.zones.some((z: { id: string }) => z.id === elsewhere.id),
      'but kept, and in the next backup',
    );
  },
);

t.test('a passphrase must be 8 to 1024 characters and is never echoed', async (t) => {
  const { api } = await populated(t);
  for (const passphrase of ['short', 'x'.repeat(1025)]) {
    const res = await api.post('/api/backup', { passphrase });
    t.equal(res.status, 400);
    t.match(res.body.detail, /"passphrase" must be a string of 8 to 1024 characters/);
    t.notMatch(res.text, passphrase, 'the passphrase is not in the answer');
  }
  t.equal((await api.post('/api/backup', {})).status, 400, 'required');
});

t.test('an admin disabled while the restore derives its key changes nothing', async (t) => {
  const { d, api, zoneIds } = await populated(t);
  const other = await createUser(api, 'admin2', 'Admin');
  const me = (await api.get('/api/users/me')).body;
  const sealed = (await api.post('/api/backup', { passphrase: PASSPHRASE })).body;
  t.equal((await api.put(`/api/zones/${zoneIds[0]}`, { name: 'After the backup' })).status, 200);
  const restoring = api.post('/api/restore', { backup: sealed, passphrase: PASSPHRASE });
  // Runs to its end before the key derivation (on the thread pool) can report back.
  t.equal((await api.put(`/api/users/${me.id}`, { isEnabled: false }, { key: other.apiKey })).status, 200);
  t.equal((await restoring).status, 401, 'the restore re-checks its caller after the await');
  t.equal(
    (await api.get(`/api/zones/${zoneIds[0]}`, { key: other.apiKey })).body.name,
    'After the backup',
    'nothing was restored',
  );
  t.notOk(existsSync(path.join(d.stateDir, 'backups')), 'not even the copy was made');
});

t.test('an output the backup has no zone for gets one, unless the backup marks it deleted', async (t) => {
  const { api } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  const channelOf = (z: { output: { channel: number } }) => z.output.channel;
  doc.zones = doc.zones.filter((z: { output: { channel: number } }) => channelOf(z) < 5);
  doc.settings.deletedChannels.push({ kind: 'zone', amplifier: 'simulated', driver: 'simulated', channel: 6 });
  t.equal((await api.post('/api/restore', { backup: doc })).status, 200);
  const zones = (await api.get('/api/zones')).body as Array<{ output: { channel: number } }>;
  t.same(zones.map(channelOf), [1, 2, 3, 4, 5], 'output 5 has a zone again, output 6 stays deleted');
  t.same((await api.get('/api/backup')).body.settings.deletedChannels, [
    { kind: 'zone', amplifier: 'simulated', driver: 'simulated', channel: 6 },
  ]);
});

t.test('restores run one at a time', async (t) => {
  const { api } = await populated(t);
  const sealed = (await api.post('/api/backup', { passphrase: PASSPHRASE })).body;
  const first = api.post('/api/restore', { backup: sealed, passphrase: PASSPHRASE });
  const second = api.post('/api/restore', { backup: sealed, passphrase: PASSPHRASE });
  t.equal((await second).status, 409, 'the second waits for nothing: it is refused');
  t.match((await second).body.detail, /a restore is already under way/);
  t.equal((await first).status, 200);
});

t.test('a document that is not a good backup is refused with a clear problem and nothing changes', async (t) => {
  const { d, api, playerId } = await populated(t);
  const plain = (await api.get('/api/backup')).body;
  const sealed = (await api.post('/api/backup', { passphrase: PASSPHRASE })).body;
  const before = await fullState(api);
  const copy = () => JSON.parse(JSON.stringify(plain));
  const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, RegExp]> = [
    [
      'corrupted JSON',
      () => api.call('POST', '/api/restore', { raw: JSON.stringify({ backup: plain }).slice(0, 500) }),
      400,
      /not valid JSON/,
    ],
    [
      'a foreign document',
      () => api.post('/api/restore', { backup: { format: 'amplipi-config', version: 1, zones: [] } }),
      400,
      /not an azcd backup/,
    ],
    [
      'no document at all',
      () => api.post('/api/restore', { backup: [1, 2] }),
      400,
      /must be the JSON object of an azcd backup/,
    ],
    [
      'a newer format version',
      () => api.post('/api/restore', { backup: { ...copy(), version: BACKUP_VERSION + 1 } }),
      400,
      new RegExp(`format version ${BACKUP_VERSION + 1}, newer than this azcd reads.*update azcd`),
    ],
    [
      'a zone routed to a player the backup does not have',
      () => {
        const doc = copy();
        doc.zones[0].playerId = '99999999-9999-4999-8999-999999999999';
        return api.post('/api/restore', { backup: doc });
      },
      400,
      /"backup\.zones\.0\.playerId" names no player of the backup/,
    ],
    [
      'a scene of a zone the backup does not have',
      () => {
        const doc = copy();
        doc.scenes[0].zones[0].zoneId = '99999999-9999-4999-8999-999999999999';
        return api.post('/api/restore', { backup: doc });
      },
      400,
      /"backup\.scenes\.0\.zones\.0\.zoneId" names no zone/,
    ],
    [
      'an assignment of a player the backup does not have',
      () => {
        const doc = copy();
        doc.players = doc.players.filter((p: { id: string }) => p.id !== playerId);
        return api.post('/api/restore', { backup: doc });
      },
      400,
      /names no player of the backup/,
    ],
    [
      'an id that is not a UUID',
      () => {
        const doc = copy();
        doc.playlists[0].tracks[1].id = 'track-2';
        return api.post('/api/restore', { backup: doc });
      },
      400,
      /"backup\.playlists\.0\.tracks\.1\.id" must be a UUID/,
    ],
    [
      'a wrong passphrase',
      () => api.post('/api/restore', { backup: sealed, passphrase: 'not the passphrase' }),
      400,
      /passphrase does not open/,
    ],
    [
      'a passphrase for a backup without secrets',
      () => api.post('/api/restore', { backup: plain, passphrase: PASSPHRASE }),
      400,
      /carries no secrets/,
    ],
    [
      'secrets that were altered',
      () => {
        const doc = JSON.parse(JSON.stringify(sealed));
        const box = Buffer.from(doc.secrets.box, 'base64');
        box[box.length - 1] ^= 1;
        doc.secrets.box = box.toString('base64');
        return api.post('/api/restore', { backup: doc, passphrase: PASSPHRASE });
      },
      400,
      /passphrase does not open the secrets of this backup \(or they were altered\)/,
    ],
    [
      'no enabled Admin',
      () => {
        const doc = copy();
        for (const user of doc.users) if (user.role === 'Admin') user.isEnabled = false;
        return api.post('/api/restore', { backup: doc });
      },
      409,
      /no enabled Admin/,
    ],
  ];
  for (const [what, send, status, detail] of cases) {
    const res = await send();
    t.equal(res.status, status, `${what}: ${status}`);
    t.match(res.body?.detail, detail, `${what}: says what is wrong`);
    t.match(
      res.body?.detail ?? '',
      /nothing was changed|not an azcd backup|newer than|not valid JSON|JSON object|carries no secrets/,
      `${what}: says nothing changed or why`,
    );
  }
  t.same(await fullState(api), before, 'the configuration is exactly as before');
  t.notOk(existsSync(path.join(d.stateDir, 'backups')), 'no copy of the database was even made');
});

t.test(
  'a restore body may be as large as a backup of the largest configuration the limits allow, and only on the restore route',
  async (t) => {
    const limits = { ...(await defaultLimits()), playlists: 2, tracksPerPlaylist: 300, restoreBytes: 64 * 1024 };
    const d = await startTestDaemon(t, { config: { limits } });
    const api = client(d.base, d.adminKey);
    const doc = (await api.get('/api/backup')).body;
    const track = (i: number) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      title: `Track ${i}`,
      uri: `http://example.invalid/${'x'.repeat(400)}/${i}.mp3`,
      durationMs: null,
    });
    doc.playlists = [
      {
        id: '11111111-0000-4000-8000-000000000000',
        name: 'Long',
        isFavorite: false,
        createdAt: doc.createdAt,
        tracks: Array.from({ length: 300 }, (_, i) => track(i)),
      },
    ];
    const body = JSON.stringify({ backup: doc });
    t.ok(body.length > 64 * 1024, `the body is ${body.length} bytes`);
    const res = await api.call('POST', '/api/restore', { raw: body });
    t.equal(res.status, 200, res.text);
    t.equal(
      (await api.get('/api/playlists/11111111-0000-4000-8000-000000000000')).body.tracks.length,
      300,
      'restored over a real socket',
    );

    const limit = restoreBodyBytes(limits);
    const tooLarge = `${body}${' '.repeat(limit - body.length + 1)}`;
    const refused = await api.call('POST', '/api/restore', { raw: tooLarge });
    t.equal(refused.status, 413);
    t.match(refused.body.detail, new RegExp(`limit is ${limit}|limit of ${limit}`));
    const inProcess = await injectClient(d.daemon, d.adminKey).call('POST', '/api/restore', { raw: tooLarge });
    t.equal(inProcess.status, 413, 'the same cap in-process');
    const otherRoute = await api.call('POST', '/api/playlists', {
      raw: JSON.stringify({ name: 'x'.repeat(70 * 1024) }),
    });
    t.equal(otherRoute.status, 413, 'every other route keeps the 64 KiB cap');

    const bigHead = JSON.stringify({
      backup: { ...doc, playlists: [], settings: { ...doc.settings, note: 'x'.repeat(70 * 1024) } },
    });
    const headRefused = await api.call('POST', '/api/restore', { raw: bigHead });
    t.equal(headRefused.status, 400, 'the document apart from its tracks is bounded by limits.restoreBytes');
    t.match(headRefused.body.detail, /apart from its tracks is larger than 65536/);
  },
);

t.test('a restore ends every session and closes open event streams', async (t) => {
  const { d, api, zoneIds } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  const web = client(d.base);
  const login = await web.post('/api/auth/login', { username: 'admin', password: d.adminPassword });
  t.equal(login.status, 200);
  const token = login.body.token as string;
  t.equal((await web.get('/api/users/me', { token })).status, 200);
  const byKey = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  const bySession = openStream(d.base, '/api/stream/events', { Authorization: `Bearer ${token}` });
  t.teardown(() => {
    byKey.close();
    bySession.close();
  });
  t.equal(await byKey.status, 200);
  t.equal(await bySession.status, 200);
  t.equal((await api.put(`/api/zones/${zoneIds[0]}/mute`, { muted: true })).status, 204);
  const seen = await byKey.next(
    (m) => m.data?.includes('zone.mutedChanged') ?? false,
    5000,
    'an event before the restore',
  );

  t.equal((await web.post('/api/restore', { backup: doc }, { key: d.adminKey })).status, 200);
  await t.resolves(
    within(Promise.all([byKey.closed, bySession.closed]), WAIT_MS, 'both streams to end'),
    'both streams were ended',
  );
  t.equal((await web.get('/api/users/me', { token })).status, 401, 'the session is gone');
  t.equal(
    (await web.get('/api/users/me', { key: d.adminKey })).status,
    200,
    'the API key of a restored admin still works',
  );

  const resumed = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey, 'Last-Event-ID': seen.id! });
  t.teardown(() => resumed.close());
  const first = await resumed.next((m) => m.data !== undefined, 5000, 'the first message after resuming');
  t.equal(JSON.parse(first.data!).type, 'stream.reset', 'a client resuming from before the restore is told to refetch');
});

t.test('a restore keeps a private copy of the database as it was, the last five', async (t) => {
  const previous = process.umask(0o022);
  t.teardown(() => void process.umask(previous));
  const { d, api, zoneIds } = await populated(t);
  const doc = (await api.get('/api/backup')).body;
  t.equal((await api.put(`/api/zones/${zoneIds[0]}`, { name: 'Before the restore' })).status, 200);
  t.equal((await api.post('/api/restore', { backup: doc })).status, 200);
  const dir = path.join(d.stateDir, 'backups');
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the directory is 0700');
  const first = readdirSync(dir).filter((n) => n.startsWith('pre-restore-'));
  t.equal(first.length, 1);
  t.equal(statSync(path.join(dir, first[0]!)).mode & 0o777, 0o600, 'the copy is 0600');
  const copy = new Database(path.join(dir, first[0]!), { readonly: true });
  t.equal(
    (copy.prepare('SELECT name FROM zones WHERE id = ?').get(zoneIds[0]) as { name: string }).name,
    'Before the restore',
    'the copy holds the state before',
  );
  copy.close();
  t.same(
    readdirSync(dir).filter((n) => n.startsWith('pre-restore-')),
    first,
    'one self-contained file (no -wal or -shm beside it)',
  );
  for (let i = 0; i < 5; i++) t.equal((await api.post('/api/restore', { backup: doc })).status, 200);
  const kept = readdirSync(dir)
    .filter((n) => n.startsWith('pre-restore-'))
    .sort();
  t.equal(kept.length, 5, `five copies are kept: ${kept.join(', ')}`);
  t.notOk(kept.includes(first[0]!), 'the oldest went first');
});

async function defaultLimits() {
  const { defaultConfig } = await import('../../daemon/config.js');
  return defaultConfig().limits;
}
