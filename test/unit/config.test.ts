// Configuration layers (defaults < JSON file < AZC_* environment < flags) and the errors for bad values.

import path from 'node:path';
import t from 'tap';
import { defaultConfig, loadConfig } from '../../daemon/config.js';
import { configFile, errorOf } from '../helpers/config-files.js';

const CWD = '/srv/azcd';

t.test('without any setting the documented defaults apply', async (t) => {
  const { config, help } = loadConfig([], {}, CWD);
  t.equal(help, false);
  t.match(config, {
    host: '0.0.0.0',
    port: 8080,
    stateDir: '/srv/azcd/data',
    exportDir: '/srv/azcd/data/exports',
    driver: 'simulated',
    serialPort: undefined,
    ssdp: false,
    logLevel: 'info',
    maxBodyBytes: 65536,
    sessionIdleMs: 12 * 3600_000,
    sessionAbsoluteMs: 7 * 24 * 3600_000,
    loginFreeFailures: 5,
  });
});

t.test('the config file overrides the defaults', async (t) => {
  const file = configFile(t, { host: '127.0.0.1', port: 9000, ssdp: true, logLevel: 'warn' });
  const { config } = loadConfig(['--config', file], {}, CWD);
  t.match(config, { host: '127.0.0.1', port: 9000, ssdp: true, logLevel: 'warn' });
});

t.test('AZC_CONFIG names the config file when no --config flag is given', async (t) => {
  const file = configFile(t, { port: 9001 });
  t.equal(loadConfig([], { AZC_CONFIG: file }, CWD).config.port, 9001);
});

t.test('the environment overrides the config file', async (t) => {
  const file = configFile(t, { host: '127.0.0.1', port: 9000, ssdp: true });
  const { config } = loadConfig(['--config', file], { AZC_PORT: '9100', AZC_SSDP: 'false' }, CWD);
  t.match(config, { host: '127.0.0.1', port: 9100, ssdp: false });
});

t.test('flags override the environment', async (t) => {
  const file = configFile(t, { port: 9000, logLevel: 'warn' });
  const { config } = loadConfig(
    ['--config', file, '--port', '9200', '--log-level=debug'],
    { AZC_PORT: '9100', AZC_LOG_LEVEL: 'error' },
    CWD,
  );
  t.match(config, { port: 9200, logLevel: 'debug' });
});

t.test('--ssdp and --no-ssdp override the environment either way', async (t) => {
  t.equal(loadConfig(['--ssdp'], { AZC_SSDP: 'false' }, CWD).config.ssdp, true);
  t.equal(loadConfig(['--no-ssdp'], { AZC_SSDP: 'true' }, CWD).config.ssdp, false);
  t.equal(loadConfig(['--ssdp', '--no-ssdp'], {}, CWD).config.ssdp, false, 'the last flag wins');
});

t.test('an empty environment variable counts as unset', async (t) => {
  t.equal(loadConfig([], { AZC_PORT: '' }, CWD).config.port, 8080);
});

t.test('relative directories from flags resolve against the working directory', async (t) => {
  const { config } = loadConfig(['--state-dir', 'state'], {}, CWD);
  t.equal(config.stateDir, '/srv/azcd/state');
  t.equal(config.exportDir, '/srv/azcd/state/exports', 'exports follow the state directory');
});

t.test('relative directories in the config file resolve against the file’s folder', async (t) => {
  const file = configFile(t, { stateDir: 'state', exportDir: 'out' });
  const { config } = loadConfig(['--config', file], {}, CWD);
  t.equal(config.stateDir, path.join(path.dirname(file), 'state'));
  t.equal(config.exportDir, path.join(path.dirname(file), 'out'));
});

t.test('an explicit export directory is kept', async (t) => {
  t.equal(
    loadConfig(['--state-dir', '/var/lib/azcd', '--export-dir', '/media/exports'], {}, CWD).config.exportDir,
    '/media/exports',
  );
});

t.test('--help is reported', async (t) => {
  t.equal(loadConfig(['--help'], {}, CWD).help, true);
  t.equal(loadConfig(['-h'], {}, CWD).help, true);
});

t.test('a flag without its value is a ConfigError', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--port'], {}, CWD)),
    'flag --port: needs a value',
  );
  t.equal(
    errorOf(() => loadConfig(['--host', '--port', '80'], {}, CWD)),
    'flag --host: needs a value',
    'another flag is not a value',
  );
});

t.test('a port that is not a number is a ConfigError naming the flag, the range and the value', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--port', 'http'], {}, CWD)),
    'flag --port: must be an integer from 0 to 65535, got "http"',
  );
});

t.test('a port out of range is a ConfigError', async (t) => {
  t.equal(
    errorOf(() => loadConfig([], { AZC_PORT: '70000' }, CWD)),
    'environment AZC_PORT: must be an integer from 0 to 65535, got 70000',
  );
  t.equal(
    errorOf(() => loadConfig(['--port=-1'], {}, CWD)),
    'flag --port: must be an integer from 0 to 65535, got -1',
  );
});

t.test('a port written in another notation than decimal digits is a ConfigError', async (t) => {
  for (const text of ['0x1F90', '8e3', '80.0', ' 80']) {
    t.equal(
      errorOf(() => loadConfig(['--port', text], {}, CWD)),
      `flag --port: must be an integer from 0 to 65535, got "${text}"`,
      text,
    );
  }
});

t.test('a fractional port in the config file is a ConfigError', async (t) => {
  const file = configFile(t, { port: 80.5 });
  t.equal(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    `config file ${file}, key "port": must be an integer from 0 to 65535, got 80.5`,
  );
});

t.test('an unknown log level is a ConfigError listing the levels', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--log-level', 'loud'], {}, CWD)),
    'flag --log-level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
  );
});

t.test('booleans take yes/no words in any case, and refuse anything else', async (t) => {
  t.equal(loadConfig([], { AZC_SSDP: 'Yes' }, CWD).config.ssdp, true);
  t.equal(loadConfig([], { AZC_SSDP: 'off' }, CWD).config.ssdp, false);
  t.equal(loadConfig(['--ssdp=no'], {}, CWD).config.ssdp, false);
  t.equal(
    errorOf(() => loadConfig([], { AZC_SSDP: 'maybe' }, CWD)),
    'environment AZC_SSDP: must be true or false, got "maybe"',
  );
  t.equal(
    errorOf(() => loadConfig(['--no-ssdp=yes'], {}, CWD)),
    'flag --no-ssdp: takes no value',
  );
});

t.test("a poll interval below the driver's minimum is a ConfigError", async (t) => {
  const args = ['--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0', '--poll-interval-ms', '10'];
  t.equal(
    errorOf(() => loadConfig(args, {}, CWD)),
    'flag --poll-interval-ms: must be an integer from 200 to 600000, got 10',
  );
});

t.test('a config file value of the wrong type is a ConfigError naming the key', async (t) => {
  const file = configFile(t, { stateDir: 5 });
  t.equal(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    `config file ${file}, key "stateDir": must be a non-empty string, got 5`,
  );
});

t.test('a config file that is not a JSON object is a ConfigError naming the file', async (t) => {
  const file = configFile(t, '[1, 2]');
  t.equal(
    errorOf(() => loadConfig(['--config', file], {}, CWD)),
    `config file ${file}: must be an object like { "host": … }, got [1,2]`,
  );
});

t.test('a missing config file is a ConfigError naming it and why', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--config', '/nonexistent/azcd.json'], {}, CWD)),
    'config file /nonexistent/azcd.json: cannot be read (ENOENT)',
  );
});

t.test('an unknown driver is a ConfigError listing the drivers', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--driver', 'sonos'], {}, CWD)),
    'flag --driver: must be one of simulated, monoprice, rnet, xantech, got "sonos"',
  );
});

t.test(
  'a serial driver without a serial port names the setting that should hold it, as the driver was given',
  async (t) => {
    const advice =
      "the amplifier's serial device (best a /dev/serial/by-id/... path) or tcp://host:port for an IP-serial adapter";
    t.equal(
      errorOf(() => loadConfig(['--driver', 'monoprice'], {}, CWD)),
      `flag --driver: the monoprice driver needs --serial-port too: ${advice}`,
    );
    t.equal(
      errorOf(() => loadConfig([], { AZC_DRIVER: 'rnet' }, CWD)),
      `environment AZC_DRIVER: the rnet driver needs AZC_SERIAL_PORT too: ${advice}`,
    );
    const file = configFile(t, { driver: 'xantech' });
    t.equal(
      errorOf(() => loadConfig(['--config', file], {}, CWD)),
      `config file ${file}, key "driver": the xantech driver needs "serialPort" too: ${advice}`,
    );
  },
);

t.test('the simulated driver refuses a serial port and a poll interval it would not use', async (t) => {
  t.equal(
    errorOf(() => loadConfig(['--serial-port', '/dev/ttyUSB0'], {}, CWD)),
    'flag --serial-port: the simulated driver takes no serial port; choose a serial driver or drop it',
  );
  t.equal(
    errorOf(() => loadConfig([], { AZC_POLL_INTERVAL_MS: '1000' }, CWD)),
    'environment AZC_POLL_INTERVAL_MS: the simulated driver does not poll; drop it',
  );
});

t.test('the monoprice driver with a serial port from any layer is accepted', async (t) => {
  const { config } = loadConfig(['--driver', 'monoprice'], { AZC_SERIAL_PORT: '/dev/serial/by-id/usb-amp' }, CWD);
  t.match(config, { driver: 'monoprice', serialPort: '/dev/serial/by-id/usb-amp' });
});

t.test('the SSDP interface list is split on commas', async (t) => {
  t.same(loadConfig(['--ssdp-interfaces', 'eth0, wlan0,'], {}, CWD).config.ssdpInterfaces, ['eth0', 'wlan0']);
});

t.test(
  'the config file may raise or lower the limits, one key at a time, and refuses unknown or invalid ones',
  async (t) => {
    const file = configFile(t, { limits: { streamsPerUser: 4 } });
    const { config } = loadConfig(['--config', file], {}, CWD);
    t.equal(config.limits.streamsPerUser, 4, 'the named limit is taken');
    t.equal(config.limits.playlists, defaultConfig().limits.playlists, 'the others keep their defaults');
    const misspelt = configFile(t, { limits: { streamsPerUsr: 4 } });
    t.equal(
      errorOf(() => loadConfig(['--config', misspelt], {}, CWD)),
      `config file ${misspelt}, key "limits.streamsPerUsr": unknown setting; did you mean "streamsPerUser"?`,
    );
    const zero = configFile(t, { limits: { playlists: 0 } });
    t.equal(
      errorOf(() => loadConfig(['--config', zero], {}, CWD)),
      `config file ${zero}, key "limits.playlists": must be an integer from 1 to 2147483648, got 0`,
    );
  },
);
