// The serial port setting: device paths and tcp://host:port for network serial pass; a malformed tcp:// is refused at start.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import { configError } from '../helpers/config-files.js';
import { tempDir } from '../helpers/daemon.js';

const CWD = '/srv/azcd';

t.test('--serial-port tcp://host:port with the monoprice driver is taken as given', async (t) => {
  for (const serialPort of ['tcp://192.168.1.50:4999', 'tcp://amp-bridge.local:4001', 'tcp://[fd00::50]:4999']) {
    const { config } = loadConfig(['--driver', 'monoprice', '--serial-port', serialPort], {}, CWD);
    t.match(config, { driver: 'monoprice', serialPort }, serialPort);
  }
});

t.test('a serial device path is still accepted', async (t) => {
  const { config } = loadConfig(
    ['--driver', 'monoprice', '--serial-port', '/dev/serial/by-id/usb-FTDI-if00-port0'],
    {},
    CWD,
  );
  t.equal(config.serialPort, '/dev/serial/by-id/usb-FTDI-if00-port0');
});

t.test('a malformed tcp:// serial port is a ConfigError that shows the right form', async (t) => {
  for (const serialPort of [
    'tcp://192.168.1.50',
    'tcp://192.168.1.50:0',
    'tcp://192.168.1.50:70000',
    'tcp://::1:4999',
    'tcp:192.168.1.50:4999',
  ]) {
    const err = configError(() => loadConfig(['--driver', 'monoprice', '--serial-port', serialPort], {}, CWD));
    t.ok(err, `${serialPort} is refused`);
    t.match(
      err?.message,
      /^flag --serial-port: ".+" is not a valid network serial port: write tcp:\/\/host:port with a port from 1 to 65535/,
    );
  }
});

t.test('a malformed tcp:// serial port is refused from the environment and the config file too', async (t) => {
  const env = configError(() => loadConfig(['--driver', 'monoprice'], { AZC_SERIAL_PORT: 'tcp://amp:' }, CWD));
  t.match(env?.message, /^environment AZC_SERIAL_PORT: "tcp:\/\/amp:" is not a valid network serial port/);

  const dir = tempDir('azc-config-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'azcd.json');
  writeFileSync(file, JSON.stringify({ driver: 'monoprice', serialPort: 'tcp://amp:123456' }));
  const fromFile = configError(() => loadConfig(['--config', file], {}, CWD));
  t.match(
    fromFile?.message,
    /^config file .*, key "serialPort": "tcp:\/\/amp:123456" is not a valid network serial port/,
  );
});
