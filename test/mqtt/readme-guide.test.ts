// The Home Assistant guide (docs/home-assistant.md), run as it is written against a fresh daemon and a real mosquitto that wants a
// login: every block a user pastes works, and the hub ends up with the entities of the account the guide creates.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { runBash, shellBlocks } from '../helpers/readme.js';
import { waitFor } from '../helpers/wait-for.js';
import { configCount, configs } from './setup.js';

/** The blocks a user pastes into a terminal; the one that starts the daemon with flags is the other way to do it. */
const guideBlocks = () =>
  shellBlocks('## Set it up, from zero', 'docs/home-assistant.md').filter((block) => !block.includes('npm start'));

t.test('the Home Assistant guide works as pasted, from a fresh appliance to entities in the hub', async (t) => {
  const blocks = guideBlocks();
  t.ok(blocks.length >= 4, `the guide has its steps (${blocks.length} blocks)`);
  const login = { username: 'azcd', password: 'broker-secret-guide' };
  const broker = await startBroker(t, { auth: login });
  const hub = await Watcher.connect(t, broker.url, ['#'], login);
  const d = await startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, baseTopic: 'azc/guide' } } });

  const result = await runBash(blocks.join('\n'), {
    ...process.env,
    AZC_URL: d.base,
    AZC_STATE_DIR: d.stateDir,
    MQTT_URL: broker.url,
    MQTT_USER: login.username,
    MQTT_PASSWORD: login.password,
  });
  t.equal(result.code, 0, `the guide exits cleanly (stderr: ${result.stderr.slice(0, 400)})`);
  t.equal(result.stderr, '', 'nothing is written to stderr');
  t.equal(
    result.stdout.split('\n').filter((line) => /^zone {4}[0-9a-f-]{36} {2}Zone \d$/.test(line)).length,
    6,
    'it lists the zone ids with their names',
  );
  t.match(
    result.stdout,
    /\{"username":"home-assistant","role":"Operator","assignments":\{"playerIds":\[\],"zoneIds":\["[0-9a-f-]{36}"/,
    'it creates the bridge account',
  );
  t.match(
    result.stdout,
    new RegExp(
      `\\{"url":"${broker.url}","username":"azcd","passwordSet":true,"account":"home-assistant","baseTopic":"azc/guide"\\}`,
    ),
    'it saves the bridge settings',
  );
  t.notOk(result.stdout.includes(login.password), 'the password is never printed');

  await hub.value('azc/guide/status', 'online');
  await hub.until((w) => configs(w).length === configCount({ zones: 6 }), 'the entities of every zone');
  const health = await waitFor(
    async () => ((await client(d.base).get('/api/health')).body.mqtt?.state === 'connected' ? true : undefined),
    undefined,
    {
      what: 'the bridge to be connected',
    },
  );
  t.ok(health, 'health says connected');
});

t.test('the guide works for a broker that needs no login: an empty password leaves the login out', async (t) => {
  const blocks = guideBlocks();
  const broker = await startBroker(t);
  const hub = await Watcher.connect(t, broker.url);
  const d = await startTestDaemon(t, { config: { mqtt: { ...defaultConfig().mqtt, baseTopic: 'azc/open' } } });
  const result = await runBash(blocks.join('\n'), {
    ...process.env,
    AZC_URL: d.base,
    AZC_STATE_DIR: d.stateDir,
    MQTT_URL: broker.url,
    MQTT_PASSWORD: '',
  });
  t.equal(result.code, 0, `the guide exits cleanly (stderr: ${result.stderr.slice(0, 400)})`);
  t.match(result.stdout, /"username":null,"passwordSet":false,"account":"home-assistant"/);
  await hub.until((w) => configs(w).length === configCount({ zones: 6 }), 'the entities of every zone');
});
