// Configuration layers (defaults < JSON file < AZC_* environment < flags) and the errors for bad values.
import t from 'tap';
import path from 'node:path';
import { defaultConfig, loadConfig } from '../../daemon/config.js';
import { configError, configFile } from '../helpers/config-files.js';

const CWD = '/srv/azcd';

/** Writes a JSON config file in a fresh directory and returns its path. */
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
  const { config } = loadConfig(['--config', file, '--port', '9200', '--log-level=debug'], { AZC_PORT: '9100', AZC_LOG_LEVEL: 'error' }, CWD);
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
  t.equal(loadConfig(['--state-dir', '/var/lib/azcd', '--export-dir', '/media/exports'], {}, CWD).config.exportDir, '/media/exports');
});

t.test('--help is reported', async (t) => {
  t.equal(loadConfig(['--help'], {}, CWD).help, true);
  t.equal(loadConfig(['-h'], {}, CWD).help, true);
});

t.test('an unknown flag is a ConfigError naming it', async (t) => {
  t.match(configError(() => loadConfig(['--colour'], {}, CWD))?.message, /unknown option --colour/);
});

t.test('a flag without its value is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig(['--port'], {}, CWD))?.message, /--port needs a value/);
});

t.test('a port that is not a number is a ConfigError naming the field, the range and the value', async (t) => {
  t.equal(configError(() => loadConfig(['--port', 'http'], {}, CWD))?.message, '"port" must be an integer from 0 to 65535, got "http"');
});

t.test('a port out of range is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig([], { AZC_PORT: '70000' }, CWD))?.message, /"port" must be an integer from 0 to 65535/);
  t.match(configError(() => loadConfig(['--port=-1'], {}, CWD))?.message, /"port" must be an integer/);
});

t.test('a port written in another notation than decimal digits is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig(['--port', '0x1F90'], {}, CWD))?.message, /"port" must be an integer/);
  t.match(configError(() => loadConfig(['--port', '8e3'], {}, CWD))?.message, /"port" must be an integer/);
  t.match(configError(() => loadConfig(['--port', '80.0'], {}, CWD))?.message, /"port" must be an integer/);
});

t.test('a fractional port in the config file is a ConfigError', async (t) => {
  const file = configFile(t, { port: 80.5 });
  t.match(configError(() => loadConfig(['--config', file], {}, CWD))?.message, /"port" must be an integer from 0 to 65535, got 80.5/);
});

t.test('an unknown log level is a ConfigError listing the levels', async (t) => {
  t.match(configError(() => loadConfig(['--log-level', 'loud'], {}, CWD))?.message, /"logLevel" must be one of fatal, error, warn, info, debug, trace, silent, got "loud"/);
});

t.test('an AZC_SSDP value that is not a boolean is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig([], { AZC_SSDP: 'maybe' }, CWD))?.message, /"ssdp" must be true or false, got "maybe"/);
});

t.test('a poll interval below its minimum is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig(['--poll-interval-ms', '10'], {}, CWD))?.message, /"pollIntervalMs" must be an integer from 200/);
});

t.test('a config file value of the wrong type is a ConfigError naming the field', async (t) => {
  const file = configFile(t, { stateDir: 5 });
  t.match(configError(() => loadConfig(['--config', file], {}, CWD))?.message, /"stateDir" must be a non-empty string/);
});

t.test('a config file that is not a JSON object is a ConfigError naming the file', async (t) => {
  const file = configFile(t, '[1, 2]');
  t.match(configError(() => loadConfig(['--config', file], {}, CWD))?.message, new RegExp(`config file ${file} is not a JSON object`));
  const broken = configFile(t, '{"port": ');
  t.match(configError(() => loadConfig(['--config', broken], {}, CWD))?.message, /is not a JSON object/);
});

t.test('a missing config file is a ConfigError', async (t) => {
  t.match(configError(() => loadConfig(['--config', '/nonexistent/azcd.json'], {}, CWD))?.message, /cannot read config file \/nonexistent\/azcd.json/);
});

t.test('unknown keys in the config file are ignored', async (t) => {
  const file = configFile(t, { port: 9000, futureSetting: { x: 1 } });
  t.equal(loadConfig(['--config', file], {}, CWD).config.port, 9000);
});

t.test('an unknown driver is a ConfigError listing the drivers', async (t) => {
  t.match(configError(() => loadConfig(['--driver', 'sonos'], {}, CWD))?.message, /"driver" must be one of simulated, monoprice, rnet, xantech, got "sonos"/);
});

t.test('the monoprice driver without a serial port is a ConfigError that says how to set one', async (t) => {
  t.match(configError(() => loadConfig(['--driver', 'monoprice'], {}, CWD))?.message, /monoprice driver needs --serial-port/);
});

t.test('the monoprice driver with a serial port from any layer is accepted', async (t) => {
  const { config } = loadConfig(['--driver', 'monoprice'], { AZC_SERIAL_PORT: '/dev/serial/by-id/usb-amp' }, CWD);
  t.match(config, { driver: 'monoprice', serialPort: '/dev/serial/by-id/usb-amp' });
});

t.test('the SSDP interface list is split on commas', async (t) => {
  t.same(loadConfig(['--ssdp-interfaces', 'eth0, wlan0,'], {}, CWD).config.ssdpInterfaces, ['eth0', 'wlan0']);
});

t.test('the config file may raise or lower the limits, one key at a time, and refuses unknown or invalid ones', async (t) => {
  const file = configFile(t, { limits: { streamsPerUser: 4 } });
  const { config } = loadConfig(['--config', file], {}, CWD);
  t.equal(config.limits.streamsPerUser, 4, 'the named limit is taken');
  t.equal(config.limits.playlists, defaultConfig().limits.playlists, 'the others keep their defaults');
  const misspelt = configFile(t, { limits: { streamsPerUsr: 4 } });
  t.match(configError(() => loadConfig(['--config', misspelt], {}, CWD))?.message, /"limits.streamsPerUsr" is not a limit/);
  const zero = configFile(t, { limits: { playlists: 0 } });
  t.match(configError(() => loadConfig(['--config', zero], {}, CWD))?.message, /"limits.playlists" must be an integer from 1/);
});
