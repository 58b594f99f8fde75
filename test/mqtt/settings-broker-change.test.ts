// The saved broker password stays with the broker it was saved for: a URL naming another scheme, host or port
// drops it unless the same change gives it again. And the bridge account follows the users' own username rule, at
// start and in the dashboard.

import net from 'node:net';
import t from 'tap';
import { defaultConfig, loadConfig } from '../../daemon/config.js';
import { client } from '../helpers/client.js';
import { errorOf } from '../helpers/config-files.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { within } from '../helpers/wait-for.js';
import { BASE } from './setup.js';

/** The login flags of the first MQTT CONNECT a client sends to this listener (which never answers it). */
async function connectCatcher(t: {
  teardown(fn: () => unknown): void;
}): Promise<{ url: string; login: Promise<{ username: boolean; password: boolean; bytes: Buffer }> }> {
  const sockets = new Set<net.Socket>();
  let caught: (value: { username: boolean; password: boolean; bytes: Buffer }) => void = () => undefined;
  const login = new Promise<{ username: boolean; password: boolean; bytes: Buffer }>((resolve) => (caught = resolve));
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let bytes = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      bytes = Buffer.concat([bytes, chunk]);
      // CONNECT: 0x10, remaining length (one byte for a packet this small), "\0\4MQTT", level, then the flags byte.
      if (bytes.length < 2 || bytes.length < 2 + bytes[1]!) return;
      const flags = bytes[9]!;
      caught({ username: (flags & 0x80) !== 0, password: (flags & 0x40) !== 0, bytes });
    });
    socket.on('error', () => {
      // The daemon may drop the connection; the test reads the login it sent.
    });
  });
  await within(
    new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve())),
    undefined,
    'the catcher to listen',
  );
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `mqtt://127.0.0.1:${(server.address() as net.AddressInfo).port}`, login };
}

const auth = { username: 'azcd', password: 'broker-secret-for-one-host' };

t.test('moving the bridge to another broker without giving the password again drops the saved one', async (t) => {
  const broker = await startBroker(t, { auth });
  const hub = await Watcher.connect(t, broker.url, ['#'], auth);
  const d = await startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE, reconnectMinMs: 100, reconnectMaxMs: 400 } },
  });
  const admin = client(d.base, d.adminKey);
  t.equal(
    (
      await admin.put('/api/settings/mqtt', {
        url: broker.url,
        username: auth.username,
        password: auth.password,
        account: 'admin',
      })
    ).status,
    200,
  );
  await hub.value(`${BASE}/status`, 'online');

  const respelled = await admin.put('/api/settings/mqtt', { url: `${broker.url}/` });
  t.equal(respelled.status, 200);
  t.match(respelled.body, { passwordSet: true }, 'the same broker written with a trailing slash keeps the password');

  const other = await connectCatcher(t);
  const moved = await admin.put('/api/settings/mqtt', { url: other.url });
  t.equal(moved.status, 200);
  t.match(
    moved.body,
    { url: other.url, username: auth.username, passwordSet: false },
    'the answer says no password is set',
  );
  t.match((await admin.get('/api/settings/mqtt')).body, { passwordSet: false }, 'and so do the stored settings');
  const login = await other.login;
  t.ok(login.username, 'the other broker gets the username');
  t.notOk(login.password, 'but no password');
  t.notOk(login.bytes.includes(Buffer.from(auth.password)), 'the password is nowhere in what it was sent');
});

t.test('a change that names another broker and gives the password again keeps that password', async (t) => {
  const broker = await startBroker(t, { auth });
  const d = await startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE, reconnectMinMs: 100, reconnectMaxMs: 400 } },
  });
  const admin = client(d.base, d.adminKey);
  t.equal(
    (
      await admin.put('/api/settings/mqtt', {
        url: 'mqtt://127.0.0.1:1',
        username: auth.username,
        password: 'for-the-first-host',
        account: 'admin',
      })
    ).status,
    200,
  );
  const hub = await Watcher.connect(t, broker.url, ['#'], auth);
  const moved = await admin.put('/api/settings/mqtt', { url: broker.url, password: auth.password });
  t.match(moved.body, { passwordSet: true });
  await hub.value(`${BASE}/status`, 'online');
});

t.test('removing the broker drops the password, so the next broker set does not get it', async (t) => {
  const d = await startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE } } });
  const admin = client(d.base, d.adminKey);
  t.equal(
    (
      await admin.put('/api/settings/mqtt', {
        url: 'mqtt://127.0.0.1:1',
        username: auth.username,
        password: auth.password,
        account: 'admin',
      })
    ).status,
    200,
  );
  t.match((await admin.put('/api/settings/mqtt', { url: null })).body, { passwordSet: false });
  t.match((await admin.put('/api/settings/mqtt', { url: 'mqtt://127.0.0.1:2' })).body, { passwordSet: false });
});

t.test('a bridge account no username could be is refused at start and in the dashboard, naming the rule', async (t) => {
  t.match(
    errorOf(() => loadConfig(['--mqtt-account', 'ha'], {}, '/srv/azcd')),
    /--mqtt-account.*must be 3 to 64 characters of A-Z a-z 0-9 \. _ -, got "ha"/,
  );
  t.match(
    errorOf(() => loadConfig([], { AZC_MQTT_ACCOUNT: 'home assistant' }, '/srv/azcd')),
    /AZC_MQTT_ACCOUNT.*must be 3 to 64 characters/,
  );
  t.equal(
    loadConfig(['--mqtt-account', 'hub'], {}, '/srv/azcd').config.mqtt.account,
    'hub',
    'a name a user can have is taken',
  );

  const d = await startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE } } });
  const admin = client(d.base, d.adminKey);
  const refused = await admin.put('/api/settings/mqtt', { account: 'ha' });
  t.equal(refused.status, 400);
  t.match(
    refused.body.errors?.account?.[0],
    /^must be 3 to 64 characters of A-Z a-z 0-9 \. _ -, got "ha": name an existing azcd user$/,
  );
  t.match((await admin.get('/api/settings/mqtt')).body, { account: null }, 'nothing was saved');
});

t.test(
  'a broker password given at start without the URL pins the broker: the dashboard cannot name one (409)',
  async (t) => {
    const d = await startTestDaemon(t, {
      config: {
        mqtt: {
          ...defaultConfig().mqtt,
          baseTopic: BASE,
          username: auth.username,
          password: 'from-the-environment',
          account: 'admin',
        },
      },
    });
    const admin = client(d.base, d.adminKey);
    const other = await connectCatcher(t);
    const refused = await admin.put('/api/settings/mqtt', { url: other.url });
    t.equal(refused.status, 409);
    t.match(
      refused.body.detail,
      /"url" cannot name another broker while the broker password is set at start by AZC_MQTT_PASSWORD .*: it would be sent to that broker; give the broker URL at start too \(--mqtt-url/,
    );
    t.notOk(refused.text.includes('from-the-environment'), 'the password is not in the answer');
    t.match((await admin.get('/api/settings/mqtt')).body, { url: null }, 'nothing was saved');
    t.notOk('mqtt' in (await client(d.base).get('/api/health')).body, 'and the bridge did not start');
  },
);
