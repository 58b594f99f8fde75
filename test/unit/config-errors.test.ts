// Configuration errors: a name nobody knows is refused with the known one it most likely means, at every level of the
// config file, among flags and among AZC_* variables; each message names where its value came from and nothing else.
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { configError, configFile, errorOf } from '../helpers/config-files.js';

const CWD = '/srv/azcd';

/** The problems a load reports, one line each; none when it loads. */
const problemsOf = (argv: string[], env: NodeJS.ProcessEnv = {}): string[] =>
  configError(() => loadConfig(argv, env, CWD))?.problems ?? [];

t.test('misspelt top-level keys in the config file are refused with the key each most likely means', async (t) => {
  const file = configFile(t, { pollIntervallMs: 2000, logLevl: 'debug' });
  t.same(problemsOf(['--config', file]), [
    `config file ${file}, key "pollIntervallMs": unknown setting; did you mean "pollIntervalMs"?`,
    `config file ${file}, key "logLevl": unknown setting; did you mean "logLevel"?`,
  ]);
});

t.test('misspelt nested keys are refused the same way, at their path', async (t) => {
  const file = configFile(t, {
    amplifiers: [{ name: 'Den', driver: 'monoprice', port: '/dev/ttyUSB0', serialPrt: '/dev/ttyUSB1' }],
    mqtt: { usernme: 'azcd' },
    limits: { playlist: 10 },
  });
  t.same(problemsOf(['--config', file]), [
    `config file ${file}, key "mqtt.usernme": unknown setting; did you mean "username"?`,
    `config file ${file}, key "limits.playlist": unknown setting; did you mean "playlists"?`,
    `config file ${file}, key "amplifiers[0].serialPrt": unknown setting; did you mean "port"?`,
  ]);
});

t.test('a key written as another source spells it, or in another case, is told the file key', async (t) => {
  const file = configFile(t, {
    poll_interval_ms: 2000,
    LOGLEVEL: 'warn',
    amplifiers: [{ name: 'Den', driver: 'rnet', serialPort: '/dev/ttyUSB0' }],
  });
  t.same(problemsOf(['--config', file]), [
    `config file ${file}, key "poll_interval_ms": unknown setting; did you mean "pollIntervalMs"?`,
    `config file ${file}, key "LOGLEVEL": unknown setting; did you mean "logLevel"?`,
    `config file ${file}, key "amplifiers[0].serialPort": unknown setting; did you mean "port"?`,
    `config file ${file}, key "amplifiers[0].port": is required: the amplifier's serial device (best a /dev/serial/by-id/... path) or tcp://host:port for an IP-serial adapter`,
  ]);
});

t.test('a top-level key that belongs in a section is pointed to it', async (t) => {
  const file = configFile(t, { streamsPerUser: 4 });
  t.equal(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    `config file ${file}, key "streamsPerUser": unknown setting; did you mean "limits.streamsPerUser"?`,
  );
});

t.test('a key like no known one is refused without a guess', async (t) => {
  const file = configFile(t, { futureSetting: { x: 1 }, sse: { colour: 'red' } });
  t.same(problemsOf(['--config', file]), [
    `config file ${file}, key "futureSetting": unknown setting`,
    `config file ${file}, key "sse.colour": unknown setting; known here: retryMs, pingIntervalMs, maxBufferedBytes, replayEvents, recheckIntervalMs`,
  ]);
});

t.test('values of the wrong type name their key, the expected type and the value', async (t) => {
  const file = configFile(t, {
    port: '8080',
    ssdp: 'yes',
    allowedHosts: 'a.lan',
    mqtt: { keepaliveS: 2.5 },
    limits: 5,
    logLevel: 3,
  });
  t.same(problemsOf(['--config', file]), [
    `config file ${file}, key "port": must be an integer from 0 to 65535, got "8080"`,
    `config file ${file}, key "ssdp": must be true or false, got "yes"`,
    `config file ${file}, key "allowedHosts": must be a list, got "a.lan"`,
    `config file ${file}, key "mqtt.keepaliveS": must be an integer from 5 to 3600, got 2.5`,
    `config file ${file}, key "limits": must be an object like { "streamsPerUser": … }, got 5`,
    `config file ${file}, key "logLevel": must be one of fatal, error, warn, info, debug, trace, silent, got 3`,
  ]);
});

t.test('out-of-range values from every source are all reported, each naming only its own source', async (t) => {
  const file = configFile(t, { sse: { replayEvents: 10 } });
  t.same(problemsOf(['--config', file, '--limits-scenes', '0'], { AZC_PORT: '70000' }), [
    `config file ${file}, key "sse.replayEvents": must be an integer from 1024 to 65536, got 10`,
    'environment AZC_PORT: must be an integer from 0 to 65535, got 70000',
    'flag --limits-scenes: must be an integer from 1 to 2147483648, got 0',
  ]);
});

t.test('a choice misspelt by one letter is told the choice it most likely means', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--log-level', 'wran'], {}, CWD)),
    'flag --log-level: must be one of fatal, error, warn, info, debug, trace, silent, got "wran"; did you mean "warn"?',
  );
});

t.test('a JSON syntax error gives the line and column where the file goes wrong, and why', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['a trailing comma', '{\n  "port": 8080,\n}\n', 'line 2, column 15: a comma before "}" is one too many in JSON'],
    [
      'a missing comma',
      '{\n  "port": 8080\n  "host": "::"\n}\n',
      'line 3, column 3: expected "," or "}" after a value, found a string',
    ],
    ['a missing value', '{ "port": }', 'line 1, column 11: expected a value after ":", found "}"'],
    [
      'single quotes',
      '{\n  "host": \'::\'\n}',
      'line 2, column 11: expected a value after ":"; JSON strings take double quotes',
    ],
    ['a comment', '// azcd\n{}', 'line 1, column 1: JSON has no comments'],
    [
      'the end of the file',
      '{\n  "port": 8080',
      'line 2, column 15: the file ends where "," or "}" after a value should be',
    ],
    ['an unquoted key', '{ port: 8080 }', 'line 1, column 3: expected a key in double quotes, found "port"'],
    [
      'a line break in a string',
      '{ "friendlyName": "Living\nRoom" }',
      'line 1, column 26: a line break or control character inside a string (write it as \\n or \\uXXXX)',
    ],
    ['text after the object', '{ "port": 8080 } x', 'line 1, column 18: more text after the end of the JSON value'],
    [
      'a column counted in characters',
      '{ "friendlyName": "Küche – Süd", "port": 80 80 }',
      'line 1, column 45: expected "," or "}" after a value, found "80"',
    ],
  ];
  for (const [what, text, where] of cases) {
    const file = configFile(t, text);
    t.equal(
      errorOf(() => loadConfig(['--config', file], {}, CWD)),
      `config file ${file}, ${where}`,
      what,
    );
  }
});

t.test('a byte order mark before the JSON is not an error', async (t) => {
  const file = configFile(t, '\ufeff{ "port": 9000 }');
  t.equal(loadConfig(['--config', file], {}, CWD).config.port, 9000);
});

t.test('unknown flags are refused with the nearest flag, and the value after one is not reported again', async (t) => {
  t.same(problemsOf(['--prot', '80']), ['flag --prot: unknown flag; did you mean --port?']);
  t.same(problemsOf(['--pollIntervalMs=1000']), [
    'flag --pollIntervalMs: unknown flag; did you mean --poll-interval-ms?',
  ]);
  t.same(problemsOf(['--colour']), ['flag --colour: unknown flag']);
  t.same(problemsOf(['--confg', 'azcd.json']), ['flag --confg: unknown flag; did you mean --config?']);
  t.same(problemsOf(['-p', '80']), ['flag -p: unknown flag']);
  t.same(problemsOf(['--no-port']), ['flag --no-port: unknown flag'], 'only a boolean has a --no- form');
});

t.test('an argument that is not a flag is refused', async (t) => {
  t.same(problemsOf(['--port', '80', '8080']), ['argument "8080": not a flag (flags start with --)']);
});

t.test('an AZC_ variable that looks like a misspelt setting is refused; others are left alone', async (t) => {
  const env = {
    AZC_PROT: '80',
    AZC_LOG_LEVL: 'debug',
    AZC_MQTTURL: 'mqtt://b:1883',
    AZC_URL: 'http://appliance:8080',
    AZC_DEVICE_TYPE: 'x',
  };
  t.same(problemsOf([], env), [
    'environment AZC_PROT: unknown variable; did you mean AZC_PORT?',
    'environment AZC_LOG_LEVL: unknown variable; did you mean AZC_LOG_LEVEL?',
    'environment AZC_MQTTURL: unknown variable; did you mean AZC_MQTT_URL?',
  ]);
  t.same(
    problemsOf([], { AZC_URL: 'http://appliance:8080', AZC_INSTALL_DIR: '/tmp/x' }),
    [],
    'variables of other tools start the daemon',
  );
});

t.test('secrets are refused from the sources that would expose them, and never echoed', async (t) => {
  const flag = errorOf(() => loadConfig(['--mqtt-password', 'hunter2'], {}, CWD));
  t.match(flag, /^flag --mqtt-password: would show in the process list .* AZC_MQTT_PASSWORD/);
  t.notMatch(flag, /hunter2/);
  t.match(
    errorOf(() => loadConfig(['--admin-password=hunter2'], {}, CWD)),
    /^flag --admin-password: is taken only from AZC_ADMIN_PASSWORD/,
  );
  const file = configFile(t, { adminPassword: 'hunter2' });
  t.equal(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    `config file ${file}, key "adminPassword": is taken only from AZC_ADMIN_PASSWORD: a flag shows in the process list and a config file gets copied around`,
  );
  t.equal(loadConfig([], { AZC_ADMIN_PASSWORD: 'hunter2-long' }, CWD).config.adminPassword, 'hunter2-long');
});
