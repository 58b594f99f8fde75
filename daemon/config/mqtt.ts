// The MQTT bridge's settings (docs/home-assistant.md): broker, login, account, topics, TLS files and timings; off
// while no broker URL is set.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { usernameProblem } from '../names.js';
import { ms } from './sections.js';
import './setting-options.js';

/** What is wrong with a broker URL (the config and the dashboard's bridge settings check it alike), or undefined. */
export function mqttUrlProblem(url: string): string | undefined {
  // Checked first: a URL with a login in it is never echoed back.
  if (url.includes('@'))
    return 'must not carry credentials (they would show in the process list and logs): give the broker login as its username and password';
  if (!/^mqtts?:\/\/[^/\s\u0000-\u001f\u007f]+(\/)?$/.test(url))
    return `must look like mqtt://host:1883 or mqtts://host:8883, got ${JSON.stringify(url).slice(0, 120)}`;
  return undefined;
}

/** A topic prefix: levels without wildcards, no leading or trailing slash. */
function topicProblem(topic: string): string | undefined {
  if (
    topic.length <= 128 &&
    !/[+#\u0000]/.test(topic) &&
    !topic.startsWith('/') &&
    !topic.endsWith('/') &&
    !topic.includes('//')
  )
    return undefined;
  return `must be topic levels like azc/living-room (no +, #, empty levels or leading/trailing /), got ${JSON.stringify(topic).slice(0, 140)}`;
}

const file = (description: string, flag: string) =>
  Type.Optional(
    Type.String({
      minLength: 1,
      relativePath: true,
      valueName: 'FILE',
      flag,
      env: `AZC_${flag.toUpperCase().replaceAll('-', '_')}`,
      description,
    }),
  );

export const MQTT = Type.Object({
  url: Type.String({
    minLength: 1,
    default: '',
    valueName: 'URL',
    defaultText: 'off',
    description: 'broker of the Home Assistant bridge: mqtt://host:1883 or mqtts://host:8883',
    check: mqttUrlProblem,
  }),
  username: Type.Optional(
    Type.String({
      minLength: 1,
      valueName: 'NAME',
      description: 'broker login (a user the broker knows, not an azcd user)',
    }),
  ),
  password: Type.Optional(
    Type.String({
      minLength: 1,
      writeOnly: true,
      flag: false,
      fileKey: false,
      description: 'broker password',
      refused:
        'would show in the process list (a flag) or be copied around (the config file): set AZC_MQTT_PASSWORD, or name a file holding it with --mqtt-password-file or "mqtt.passwordFile"',
    }),
  ),
  passwordFile: Type.Optional(
    Type.String({
      minLength: 1,
      relativePath: true,
      valueName: 'FILE',
      description: 'file holding the broker password (a trailing newline is dropped)',
    }),
  ),
  account: Type.Optional(
    Type.String({
      minLength: 1,
      valueName: 'USER',
      description: 'the azcd user the bridge acts as (give it an Operator); without one the bridge does not start',
      // The users' own rule: a name no user can have would leave the bridge waiting for an account nobody can create.
      check: usernameProblem,
    }),
  ),
  baseTopic: Type.String({
    minLength: 1,
    default: '',
    valueName: 'TOPIC',
    defaultText: 'azc/<first 8 hex digits of the device UDN>',
    description: 'prefix of every state and command topic',
    check: topicProblem,
  }),
  discoveryPrefix: Type.String({
    minLength: 1,
    default: 'homeassistant',
    valueName: 'TOPIC',
    description: 'Home Assistant discovery prefix',
    check: topicProblem,
  }),
  caFile: file('PEM file of a private CA that signed the broker certificate (mqtts://)', 'mqtt-ca'),
  certFile: file('PEM client certificate, for a broker that asks for one (mqtts://)', 'mqtt-cert'),
  keyFile: file('PEM key of the client certificate (mqtts://)', 'mqtt-key'),
  keepaliveS: Type.Integer({ minimum: 5, maximum: 3600, default: 30, description: 'MQTT keep-alive, in seconds' }),
  connectTimeoutMs: ms('how long a connection attempt may take', 100, 600_000, 10_000),
  reconnectMinMs: ms('first delay before reconnecting to the broker; it doubles per failed attempt', 50, 600_000, 1000),
  reconnectMaxMs: ms('longest delay between reconnect attempts', 50, 3_600_000, 60_000),
});

/** The broker password from its file; a trailing newline (from `echo secret > file`) is not part of it. */
export function readPasswordFile(file: string): { password: string } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { problem: `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const password = text.replace(/\r?\n$/, '');
  return password ? { password } : { problem: `${file} is empty` };
}
