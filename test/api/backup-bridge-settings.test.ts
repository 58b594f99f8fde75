// A backup carries the Home Assistant bridge settings saved in the dashboard — broker URL, broker username, bridge
// account — and, only when sealed under a passphrase, the broker password; a restore puts them back and the bridge
// runs on them at once. Real mosquitto with a password on loopback.
import t, { type Test } from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { client } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';
import { startBroker } from '../helpers/mosquitto.js';
import { waitFor } from '../helpers/wait-for.js';

const PASSPHRASE = 'correct horse battery staple';
const auth = { username: 'azcd-bridge', password: 'broker-secret-in-a-backup' };

/** A daemon without MQTT settings at start, reconnecting quickly. */
const daemon = (t: Parameters<typeof startTestDaemon>[0]) =>
  startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, reconnectMinMs: 100, reconnectMaxMs: 400 } } });

/** Follows GET /api/health until the bridge reports `state`. */
const bridgeState = (d: TestDaemon, state: string) =>
  waitFor(
    async () => {
      const mqtt = (await client(d.base).get('/api/health')).body.mqtt;
      return mqtt?.state === state ? mqtt : undefined;
    },
    undefined,
    { what: `the bridge to be ${state}` },
  );

/** A daemon whose bridge is set up in the dashboard and connected to a broker that wants a password. */
async function bridged(t: Test) {
  const broker = await startBroker(t, { auth });
  const a = await daemon(t);
  const api = injectClient(a.daemon, a.adminKey);
  const saved = await api.put('/api/settings/mqtt', {
    url: broker.url,
    username: auth.username,
    password: auth.password,
    account: 'admin',
  });
  t.equal(saved.status, 200, saved.text);
  await bridgeState(a, 'connected');
  return { broker, a, api };
}

t.test(
  'a sealed backup carries the bridge settings and the broker password, and a fresh appliance connects with them',
  async (t) => {
    const { broker, a, api } = await bridged(t);
    const sealed = await api.post('/api/backup', { passphrase: PASSPHRASE });
    t.equal(sealed.status, 200);
    t.same(sealed.body.settings.mqtt, { url: broker.url, username: auth.username, account: 'admin' });
    t.notOk(sealed.text.includes(auth.password), 'the password is only inside the sealed secrets');
    await a.stop();

    const b = await daemon(t);
    const res = await injectClient(b.daemon, b.adminKey).post('/api/restore', {
      backup: sealed.body,
      passphrase: PASSPHRASE,
    });
    t.equal(res.status, 200, res.text);
    t.match((await injectClient(b.daemon, a.adminKey).get('/api/settings/mqtt')).body, {
      url: broker.url,
      username: auth.username,
      passwordSet: true,
      account: 'admin',
    });
    t.match(
      await bridgeState(b, 'connected'),
      { state: 'connected' },
      'the broker takes the restored password, with no restart',
    );
  },
);

t.test('a plain backup carries the bridge settings without the password, and restores them without one', async (t) => {
  const { broker, a, api } = await bridged(t);
  const plain = await api.get('/api/backup');
  t.equal(plain.status, 200);
  t.same(plain.body.settings.mqtt, { url: broker.url, username: auth.username, account: 'admin' });
  t.notOk(plain.text.includes(auth.password), 'no password in a plain backup');
  t.equal(
    (await api.put('/api/settings/mqtt', { url: null, username: null, password: null, account: null })).status,
    200,
    'the settings removed',
  );

  const res = await api.post('/api/restore', { backup: plain.body });
  t.equal(res.status, 200, res.text);
  t.match((await api.get('/api/settings/mqtt')).body, {
    url: broker.url,
    username: auth.username,
    passwordSet: false,
    account: 'admin',
  });
  t.match(
    await bridgeState(a, 'reconnecting'),
    { detail: /Not authorized|Bad username or password/i },
    'the bridge runs on them at once; without the password the broker refuses it',
  );
});

t.test(
  'a plain backup restored where it was made keeps the password saved here for the same broker and login',
  async (t) => {
    const { broker, a, api } = await bridged(t);
    const plain = (await api.get('/api/backup')).body;
    t.equal((await api.put('/api/settings/mqtt', { account: null })).status, 200, 'a change after the backup');
    t.equal((await api.post('/api/restore', { backup: plain })).status, 200);
    t.match((await api.get('/api/settings/mqtt')).body, {
      url: broker.url,
      username: auth.username,
      passwordSet: true,
      account: 'admin',
    });
    await bridgeState(a, 'connected');
  },
);

t.test('a plain backup naming another broker drops the password saved here', async (t) => {
  const { api } = await bridged(t);
  const plain = (await api.get('/api/backup')).body;
  plain.settings.mqtt.url = 'mqtt://127.0.0.1:1';
  t.equal((await api.post('/api/restore', { backup: plain })).status, 200);
  t.match((await api.get('/api/settings/mqtt')).body, { url: 'mqtt://127.0.0.1:1', passwordSet: false });
});

t.test('a backup from before it carried bridge settings leaves those saved here as they are', async (t) => {
  const { broker, api } = await bridged(t);
  const plain = (await api.get('/api/backup')).body;
  delete plain.settings.mqtt;
  t.equal((await api.post('/api/restore', { backup: plain })).status, 200);
  t.match((await api.get('/api/settings/mqtt')).body, {
    url: broker.url,
    username: auth.username,
    passwordSet: true,
    account: 'admin',
  });
});

t.test('bridge settings a backup could not have been made with are refused, and nothing changes', async (t) => {
  const { api } = await bridged(t);
  const before = (await api.get('/api/settings/mqtt')).body;
  const plain = (await api.get('/api/backup')).body;
  for (const [mqtt, field, message] of [
    [{ url: 'http://user:pw@broker/' }, 'backup.settings.mqtt.url', /must not carry credentials/],
    [{ account: 'ha' }, 'backup.settings.mqtt.account', /must be 3 to 64 characters/],
    [{ username: 'bad\u0000name' }, 'backup.settings.mqtt.username', /without control characters/],
  ] as const) {
    const res = await api.post('/api/restore', { backup: { ...plain, settings: { ...plain.settings, mqtt } } });
    t.equal(res.status, 400, JSON.stringify(mqtt));
    t.match(res.body.errors?.[field]?.[0], message, field);
  }
  t.same((await api.get('/api/settings/mqtt')).body, before, 'the bridge settings are as they were');
});
