// The MQTT settings: flags, environment and config file, the password never from a flag, and clear errors.

import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { errorOf } from '../helpers/config-files.js';
import { tempDir } from '../helpers/daemon.js';

const CWD = '/srv/azcd';

t.test('the bridge is off by default with documented defaults', async (t) => {
  const { config } = loadConfig([], {}, CWD);
  t.match(config.mqtt, {
    url: '',
    account: undefined,
    password: undefined,
    baseTopic: '',
    discoveryPrefix: 'homeassistant',
  });
});

t.test('flags set the broker, account and topics', async (t) => {
  const { config } = loadConfig(
    [
      '--mqtt-url',
      'mqtt://broker.lan:1883',
      '--mqtt-account',
      'hub',
      '--mqtt-username',
      'azcd',
      '--mqtt-base-topic',
      'azc/living',
      '--mqtt-discovery-prefix',
      'ha',
    ],
    {},
    CWD,
  );
  t.match(config.mqtt, {
    url: 'mqtt://broker.lan:1883',
    account: 'hub',
    username: 'azcd',
    baseTopic: 'azc/living',
    discoveryPrefix: 'ha',
  });
});

t.test('the password comes from AZC_MQTT_PASSWORD or a file, never a flag', async (t) => {
  t.equal(loadConfig([], { AZC_MQTT_PASSWORD: 's3cret-pass' }, CWD).config.mqtt.password, 's3cret-pass');
  const dir = tempDir('azc-mqtt-config-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'password');
  writeFileSync(file, 'from-a-file\n');
  t.equal(
    loadConfig(['--mqtt-password-file', file], {}, CWD).config.mqtt.password,
    'from-a-file',
    'the trailing newline is dropped',
  );
  t.match(
    errorOf(() => loadConfig(['--mqtt-password', 'visible-in-ps'], {}, CWD)),
    /process list.*AZC_MQTT_PASSWORD.*--mqtt-password-file/,
  );
  t.equal(
    errorOf(() => loadConfig(['--mqtt-password-file', path.join(dir, 'missing')], {}, CWD)),
    `flag --mqtt-password-file: cannot read ${path.join(dir, 'missing')} (ENOENT)`,
  );
  writeFileSync(path.join(dir, 'empty'), '\n');
  t.equal(
    errorOf(() => loadConfig([], { AZC_MQTT_PASSWORD_FILE: path.join(dir, 'empty') }, CWD)),
    `environment AZC_MQTT_PASSWORD_FILE: ${path.join(dir, 'empty')} is empty`,
  );
});

t.test(
  'a password file named in a higher layer wins over AZC_MQTT_PASSWORD; both in the environment are refused',
  async (t) => {
    const dir = tempDir('azc-mqtt-config-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'password');
    writeFileSync(file, 'from-a-file');
    t.equal(
      loadConfig(['--mqtt-password-file', file], { AZC_MQTT_PASSWORD: 'from-env' }, CWD).config.mqtt.password,
      'from-a-file',
    );
    const both = { AZC_MQTT_PASSWORD: 'from-env', AZC_MQTT_PASSWORD_FILE: file };
    t.equal(
      errorOf(() => loadConfig([], both, CWD)),
      'environment AZC_MQTT_PASSWORD_FILE: the password is given directly too; give one of them',
    );
  },
);

t.test('a config file sets the mqtt section, and refuses a password in it', async (t) => {
  const dir = tempDir('azc-mqtt-config-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azcd.json');
  writeFileSync(path.join(dir, 'broker-password'), 'pw-1');
  writeFileSync(
    file,
    JSON.stringify({
      mqtt: {
        url: 'mqtts://broker:8883',
        account: 'hub',
        passwordFile: 'broker-password',
        caFile: 'ca.pem',
        reconnectMaxMs: 30000,
      },
    }),
  );
  const { config } = loadConfig(['--config', file], {}, CWD);
  t.match(config.mqtt, {
    url: 'mqtts://broker:8883',
    account: 'hub',
    password: 'pw-1',
    caFile: path.join(dir, 'ca.pem'),
    reconnectMaxMs: 30000,
  });
  writeFileSync(file, JSON.stringify({ mqtt: { password: 'plain' } }));
  t.match(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    new RegExp(`^config file ${file}, key "mqtt.password": .*copied around.*AZC_MQTT_PASSWORD`),
  );
  t.notMatch(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    /plain/,
    'the password is not shown',
  );
  writeFileSync(file, JSON.stringify({ mqtt: { colour: 'blue' } }));
  t.match(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    new RegExp(
      `^config file ${file}, key "mqtt.colour": unknown setting; known here: url, username, passwordFile, account`,
    ),
  );
});

t.test('bad broker URLs and topic prefixes are refused with the fix', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--mqtt-url', 'http://broker:1883'], {}, CWD)),
    'flag --mqtt-url: must look like mqtt://host:1883 or mqtts://host:8883, got "http://broker:1883"',
  );
  const withLogin = errorOf(() => loadConfig(['--mqtt-url', 'mqtt://user:pw@broker:1883'], {}, CWD));
  t.match(withLogin, /^flag --mqtt-url: must not carry credentials/);
  t.notMatch(withLogin, /pw@/, 'the login is not echoed');
  for (const topic of ['azc/#', 'azc/+/x', '/azc', 'azc/', 'a//b']) {
    t.match(
      errorOf(() => loadConfig(['--mqtt-base-topic', topic], {}, CWD)),
      /^flag --mqtt-base-topic: must be topic levels/,
      topic,
    );
  }
  t.match(
    errorOf(() => loadConfig([], { AZC_MQTT_DISCOVERY_PREFIX: 'home#' }, CWD)),
    /^environment AZC_MQTT_DISCOVERY_PREFIX: must be topic levels/,
  );
});
