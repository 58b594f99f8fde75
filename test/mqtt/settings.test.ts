// The bridge settings an admin edits (GET/PUT /api/settings/mqtt): applied at once over a real mosquitto, checked,
// the broker password sealed at rest and never shown, and start-up settings winning field by field.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/wait-for.js';
import { BASE, configCount, configs } from './setup.js';

/** Follows GET /api/health until the bridge reports the state (each poll is a real request). */
async function bridgeState(d: TestDaemon, state: string): Promise<{ state: string; detail?: string }> {
  return waitFor(
    async () => {
      const mqtt = (await client(d.base).get('/api/health')).body.mqtt;
      return mqtt?.state === state ? mqtt : undefined;
    },
    undefined,
    { what: `the bridge to be ${state}` },
  );
}

/** A daemon without any MQTT setting at start, its base topic fixed for the watchers. */
const plainDaemon = (t: Parameters<typeof startTestDaemon>[0]) =>
  startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE, reconnectMinMs: 100, reconnectMaxMs: 400 } },
  });

t.test('only an admin reads the settings; with nothing set the bridge is off', async (t) => {
  const d = await plainDaemon(t);
  const admin = client(d.base, d.adminKey);
  const res = await admin.get('/api/settings/mqtt');
  t.equal(res.status, 200);
  t.same(res.body, {
    url: null,
    username: null,
    passwordSet: false,
    account: null,
    locked: [],
    baseTopic: BASE,
    discoveryPrefix: 'homeassistant',
    status: null,
  });
  const operator = await createUser(admin, 'kitchen', 'Operator');
  t.equal((await client(d.base, operator.apiKey).get('/api/settings/mqtt')).status, 403);
  t.equal(
    (await client(d.base, operator.apiKey).put('/api/settings/mqtt', { url: 'mqtt://127.0.0.1:1883' })).status,
    403,
  );
  t.equal((await client(d.base).get('/api/settings/mqtt')).status, 401);
  t.notOk('mqtt' in (await client(d.base).get('/api/health')).body, 'health has no mqtt field while the bridge is off');
});

t.test(
  'saving a broker and an account starts the bridge without a restart; changing the account changes the entities',
  async (t) => {
    const broker = await startBroker(t);
    const hub = await Watcher.connect(t, broker.url);
    const d = await plainDaemon(t);
    const admin = client(d.base, d.adminKey);
    const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
    await createUser(admin, 'all-rooms', 'Operator', { playerIds: [], zoneIds: zones.map((z) => z.id) });
    await createUser(admin, 'one-room', 'Operator', { playerIds: [], zoneIds: [zones[2]!.id] });

    const saved = await admin.put('/api/settings/mqtt', { url: broker.url, account: 'all-rooms' });
    t.equal(saved.status, 200);
    t.match(saved.body, { url: broker.url, account: 'all-rooms', status: { state: /connecting|connected/ } });
    await hub.value(`${BASE}/status`, 'online');
    await hub.until((w) => configs(w).length === configCount({ zones: 6 }));
    t.match(await bridgeState(d, 'connected'), { state: 'connected' });

    t.equal((await admin.put('/api/settings/mqtt', { account: 'one-room' })).status, 200);
    await hub.until((w) => configs(w).length === configCount({ zones: 1 }), 'the other account’s entities cleared');
    t.ok(
      configs(hub).every((topic) => !topic.includes('/zone_') || topic.includes(zones[2]!.id)),
      'what is left is the one room',
    );

    t.equal((await admin.put('/api/settings/mqtt', { url: null })).status, 200);
    await hub.value(`${BASE}/status`, 'offline');
    t.notOk('mqtt' in (await client(d.base).get('/api/health')).body, 'the bridge is off again');
    t.ok(
      d.logs.some((line) => /MQTT bridge settings changed/.test(line) && /"by":"admin"/.test(line)),
      'each change is logged with who made it',
    );
  },
);

t.test('bad settings are refused with problem details per field and change nothing', async (t) => {
  const d = await plainDaemon(t);
  const admin = client(d.base, d.adminKey);
  t.equal((await admin.put('/api/settings/mqtt', { url: 'mqtt://127.0.0.1:1', account: 'admin' })).status, 200);
  const before = (await admin.get('/api/settings/mqtt')).body;
  const cases: Array<[unknown, string, RegExp]> = [
    [{}, 'body', /send at least one of "url", "username", "password", "account"/],
    [{ url: 'http://broker:1883' }, 'url', /must look like mqtt:\/\/host:1883/],
    [{ url: 'mqtt://bro\u0000ker:1883' }, 'url', /must look like mqtt:\/\/host:1883/],
    [{ url: 'mqtt://user:pw@broker:1883' }, 'url', /must not carry credentials/],
    [{ url: 'http://user:secret-in-url@broker/x' }, 'url', /^must not carry credentials/],
    [{ url: 42 }, 'url', /must be a string of at most 256 characters, or null/],
    [{ account: 'nobody-here' }, 'account', /no azcd user is named "nobody-here": create it first/],
    [{ password: 'lonely-password' }, 'password', /a broker password needs a broker username/],
    [{ password: '' }, 'password', /must be 1 to 1024 characters/],
    [{ username: 'bad\u0000name' }, 'username', /without control characters/],
  ];
  for (const [body, field, message] of cases) {
    const res = await admin.put('/api/settings/mqtt', body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.match(res.body.errors?.[field]?.[0], message, `${JSON.stringify(body)}: ${field}`);
    t.notOk(res.text.includes('secret-in-url'), 'a login in a URL is not echoed');
  }
  t.same((await admin.get('/api/settings/mqtt')).body, before, 'nothing changed');
  t.notOk(
    d.logs.some((line) => line.includes('secret-in-url')),
    'a URL with a login in it is not logged',
  );
  t.notOk(
    d.logs.some((line) => line.includes('lonely-password')),
    'a refused password is not logged either',
  );
});

t.test('a setting given at start wins: the dashboard cannot change it (409), and fills in the rest', async (t) => {
  const broker = await startBroker(t);
  const hub = await Watcher.connect(t, broker.url);
  const d = await startTestDaemon(t, {
    config: {
      mqtt: { ...defaultConfig().mqtt, url: broker.url, baseTopic: BASE, reconnectMinMs: 100, reconnectMaxMs: 400 },
    },
  });
  const admin = client(d.base, d.adminKey);
  t.match((await client(d.base).get('/api/health')).body.mqtt, { state: 'misconfigured', detail: /no bridge account/ });
  const view = (await admin.get('/api/settings/mqtt')).body;
  t.same(view.locked, ['url']);
  const moved = await admin.put('/api/settings/mqtt', { url: 'mqtt://elsewhere:1883' });
  t.equal(moved.status, 409);
  t.match(moved.body.detail, /"url" is set at start by --mqtt-url .* change or remove it there and restart/);
  t.equal(
    (await admin.put('/api/settings/mqtt', { url: broker.url, account: 'admin' })).status,
    200,
    'sending the value it has is no change',
  );
  await hub.value(`${BASE}/status`, 'online');
  await bridgeState(d, 'connected');
  t.same((await admin.get('/api/settings/mqtt')).body.url, broker.url);
});

/** Every file of the state directory (the database, its WAL), as bytes. */
const stateBytes = (dir: string) =>
  Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith('azc.db'))
      .map((f) => readFileSync(path.join(dir, f))),
  );

t.test('the broker password is stored sealed, never answered or logged, and survives a restart', async (t) => {
  const auth = { username: 'azcd', password: 'broker-secret-1' };
  const broker = await startBroker(t, { auth });
  const hub = await Watcher.connect(t, broker.url, ['#'], auth);
  const d = await plainDaemon(t);
  const admin = client(d.base, d.adminKey);
  const saved = await admin.put('/api/settings/mqtt', {
    url: broker.url,
    username: auth.username,
    password: auth.password,
    account: 'admin',
  });
  t.equal(saved.status, 200);
  t.match(saved.body, { username: 'azcd', passwordSet: true });
  t.notOk(saved.text.includes(auth.password), 'the answer does not carry the password');
  t.notOk((await admin.get('/api/settings/mqtt')).text.includes(auth.password));
  await hub.value(`${BASE}/status`, 'online');
  await bridgeState(d, 'connected');
  t.notOk(
    d.logs.some((line) => line.includes(auth.password)),
    'the log does not carry it',
  );
  t.notOk(stateBytes(d.stateDir).includes(Buffer.from(auth.password)), 'the database holds it sealed, not in clear');

  await d.stop();
  await hub.value(`${BASE}/status`, 'offline');
  const again = await startTestDaemon(t, {
    stateDir: d.stateDir,
    config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE } },
  });
  await hub.value(`${BASE}/status`, 'online');
  t.match(
    await bridgeState(again, 'connected'),
    { state: 'connected' },
    'the saved settings, password included, apply after a restart',
  );

  t.equal(
    (await client(again.base, again.adminKey).put('/api/settings/mqtt', { username: null, password: null })).status,
    200,
  );
  t.match((await client(again.base, again.adminKey).get('/api/settings/mqtt')).body, {
    username: null,
    passwordSet: false,
  });
  t.match(
    await bridgeState(again, 'reconnecting'),
    { detail: /Not authorized|Bad username or password/i },
    'without the login the broker refuses it',
  );
});
