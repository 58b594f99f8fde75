// `azcd --help` and docs/configuration.md come from the settings' schemas: every setting is listed with its flag,
// variable and key, every flag and variable azcd ever had still works, and the committed reference is up to date.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { SETTINGS } from '../../daemon/config/catalog.js';
import { flagText } from '../../daemon/config/help.js';
import { withSettingsReference } from '../../daemon/config/reference.js';
import { helpText, loadConfig } from '../../daemon/config.js';
import { DRIVER_FAMILIES } from '../../drivers/index.js';
import { ROOT } from '../helpers/paths.js';

const CWD = '/srv/azcd';
const HELP = helpText('1.2.3');
const helpLines = HELP.split('\n');

/** Flags and variables of the hand-written configuration this one replaced, with a value each accepts. */
const EARLIER_FLAGS: Array<[string, string | undefined]> = [
  ['--host', '127.0.0.1'],
  ['--port', '9000'],
  ['--state-dir', 'state'],
  ['--export-dir', 'exports'],
  ['--driver', 'simulated'],
  ['--log-level', 'warn'],
  ['--friendly-name', 'Den'],
  ['--ssdp-interfaces', 'eth0,wlan0'],
  ['--allowed-host', 'audio.lan'],
  ['--ssdp', undefined],
  ['--no-ssdp', undefined],
  ['--mqtt-url', 'mqtt://broker:1883'],
  ['--mqtt-username', 'azcd'],
  ['--mqtt-account', 'hub'],
  ['--mqtt-base-topic', 'azc/den'],
  ['--mqtt-discovery-prefix', 'ha'],
  ['--mqtt-ca', 'ca.pem'],
  ['--mqtt-cert', 'cert.pem'],
  ['--mqtt-key', 'key.pem'],
];
const EARLIER_VARIABLES: Record<string, string> = {
  AZC_HOST: '127.0.0.1',
  AZC_PORT: '9000',
  AZC_STATE_DIR: 'state',
  AZC_EXPORT_DIR: 'exports',
  AZC_DRIVER: 'simulated',
  AZC_LOG_LEVEL: 'warn',
  AZC_FRIENDLY_NAME: 'Den',
  AZC_SSDP: 'true',
  AZC_SSDP_INTERFACES: 'eth0',
  AZC_ALLOWED_HOSTS: 'audio.lan',
  AZC_MQTT_URL: 'mqtt://broker:1883',
  AZC_MQTT_USERNAME: 'azcd',
  AZC_MQTT_PASSWORD: 'secret',
  AZC_MQTT_ACCOUNT: 'hub',
  AZC_MQTT_BASE_TOPIC: 'azc/den',
  AZC_MQTT_DISCOVERY_PREFIX: 'ha',
  AZC_MQTT_CA: 'ca.pem',
  AZC_MQTT_CERT: 'cert.pem',
  AZC_MQTT_KEY: 'key.pem',
};

t.test(
  '--help lists every setting with its flag, variable and config-file key on one line, and its description',
  async (t) => {
    for (const setting of SETTINGS) {
      const names = [flagText(setting), setting.env, setting.fileKey && `"${setting.fileKey}"`].filter(
        Boolean,
      ) as string[];
      const at = helpLines.findIndex((line) => names.every((name) => line.includes(name)));
      t.ok(at >= 0, `${setting.path}: ${names.join(', ')}`);
      const description = helpLines
        .slice(at + 1, at + 5)
        .join(' ')
        .replace(/\s+/g, ' ');
      t.ok(
        description.includes(setting.schema.description!.split(' ').slice(0, 6).join(' ')),
        `${setting.path}: its description follows`,
      );
    }
  },
);

t.test('--help names the config file, the precedence, and no setting twice', async (t) => {
  t.match(HELP, /--config FILE {2}· {2}AZC_CONFIG/);
  t.match(HELP, /defaults < the config file < AZC_\* environment variables < flags/);
  const flags = helpLines.map((line) => /^ {2}--([a-z-]+)/.exec(line)?.[1]).filter(Boolean);
  t.same(flags.length, new Set(flags).size);
});

t.test("--help lists every driver family with each option's range and default", async (t) => {
  t.match(HELP, /^ {4}port {20}the amplifier's serial device (.*\n){1,2}.*\(required\)/m);
  for (const family of DRIVER_FAMILIES) {
    const start = helpLines.indexOf(`  ${family.name}`);
    t.ok(start > 0, family.name);
    const end = helpLines.findIndex((line, i) => i > start && /^ {2}\S/.test(line));
    const block = helpLines.slice(start, end < 0 ? undefined : end).join('\n');
    for (const option of Object.keys(family.options.properties).filter((key) => key !== 'serialPort')) {
      t.match(block, new RegExp(`^ {4}${option} `, 'm'), `${family.name}.${option}`);
    }
  }
  t.match(HELP, /^ {4}zones {19}8, or 16 .*\n.*\(one of 8, 16; default 8\)/m);
  t.match(HELP, /^ {4}baudRate .*\n.*default the model's\)/m, "xantech's baud rate follows the model");
});

t.test('every flag of the earlier hand-written configuration is in --help and still accepted', async (t) => {
  for (const [flag, value] of EARLIER_FLAGS) {
    t.match(HELP, new RegExp(`(^|\\s)${flag}(\\s|$)`, 'm'), `${flag} in --help`);
    t.doesNotThrow(() => loadConfig(value === undefined ? [flag] : [flag, value], {}, CWD), flag);
  }
});

t.test('every variable of the earlier hand-written configuration is in --help and still taken', async (t) => {
  for (const variable of Object.keys(EARLIER_VARIABLES)) {
    t.match(HELP, new RegExp(`\\b${variable}\\b`), `${variable} in --help`);
  }
  const { config } = loadConfig([], EARLIER_VARIABLES, CWD);
  t.match(config, {
    host: '127.0.0.1',
    port: 9000,
    stateDir: '/srv/azcd/state',
    ssdp: true,
    allowedHosts: ['audio.lan'],
  });
  t.match(config.mqtt, {
    url: 'mqtt://broker:1883',
    password: 'secret',
    caFile: '/srv/azcd/ca.pem',
    keyFile: '/srv/azcd/key.pem',
  });
});

t.test('docs/configuration.md holds the settings as the schemas give them now (npm run docs:config)', async (t) => {
  const document = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
  t.ok(
    document === withSettingsReference(document),
    'docs/configuration.md is out of date: run npm run docs:config and commit it',
  );
  for (const setting of SETTINGS) if (setting.env) t.match(document, `\`${setting.env}\``, setting.env);
});
