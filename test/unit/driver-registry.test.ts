// The driver registry: every family registered once with its options and factory, the factories checking their
// options as the configuration does, the installer reading the same names, and the daemon seeing only the seam.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../daemon/config.js';
import type { DriverOptions } from '../../drivers/driver.js';
import { createDriver, DRIVER_FAMILIES, DRIVER_NAMES, driverFamily } from '../../drivers/index.js';
import { configFile, errorOf } from '../helpers/config-files.js';
import { ROOT } from '../helpers/paths.js';

/** The rejection message of a driver build, or 'built' (the driver is stopped again). */
async function buildError(name: string, options: Record<string, unknown>): Promise<string> {
  try {
    const driver = await createDriver(name, options as DriverOptions);
    await driver.stop();
    return 'built';
  } catch (err) {
    return (err as Error).message;
  }
}

t.test('the registry lists each family once, by its name, with a description and an option schema', async (t) => {
  t.same(DRIVER_NAMES, ['simulated', 'monoprice', 'rnet', 'xantech']);
  for (const family of DRIVER_FAMILIES) {
    t.equal(driverFamily(family.name), family);
    t.ok(family.description.length > 20, `${family.name} says what it drives`);
    for (const [key, schema] of Object.entries(family.options.properties)) {
      t.ok(schema.description, `${family.name}.${key} has a description`);
      const required = family.options.required?.includes(key);
      t.ok(
        required || schema.default !== undefined || schema.defaultText !== undefined,
        `${family.name}.${key} is required or has a default`,
      );
    }
  }
});

t.test('a driver is built by its family, not started', async (t) => {
  const builds: Array<[string, Record<string, unknown>]> = [
    ['simulated', {}],
    ['monoprice', { serialPort: '/dev/null' }],
    ['rnet', { serialPort: 'tcp://127.0.0.1:9' }],
    ['xantech', { serialPort: '/dev/null', model: 'mx88' }],
  ];
  for (const [name, options] of builds) {
    const driver = await createDriver(name, options as DriverOptions);
    t.equal(driver.name, name);
    t.equal(driver.online, false, `${name} is not started`);
    await driver.stop();
  }
});

t.test('an unknown family is refused with the families there are', async (t) => {
  t.equal(await buildError('sonos', {}), 'unknown driver "sonos": choose one of simulated, monoprice, rnet, xantech');
});

t.test('a factory refuses options its schema does not take, naming each', async (t) => {
  t.equal(
    await buildError('rnet', { serialPort: '/dev/null', modle: 'x', baudRate: 300 }),
    [
      'rnet driver option "modle": unknown setting; known here: serialPort, baudRate, pollIntervalMs, commandTimeoutMs, interCommandGapMs, reconnectMinMs, reconnectMaxMs, offlineAfterTimeouts',
      'rnet driver option "baudRate": must be an integer from 1200 to 115200, got 300',
    ].join('\n'),
  );
  t.equal(
    await buildError('simulated', { serialPort: '/dev/ttyUSB0' }),
    'simulated driver option "serialPort": unknown setting; known here: zones, applyDelayMs',
  );
  t.match(
    await buildError('monoprice', {}),
    /^monoprice driver option "serialPort": is required: the amplifier's serial device/,
  );
});

t.test('a bad option fails the same way built by a factory and read from the config file', async (t) => {
  const option = { zones: 12 };
  const built = await buildError('xantech', { serialPort: '/dev/null', ...option });
  const file = configFile(t, { amplifiers: [{ name: 'Den', driver: 'xantech', port: '/dev/null', ...option }] });
  const configured = errorOf(() => loadConfig(['--config', file], {}, '/srv/azcd'));
  t.equal(built, 'xantech driver option "zones": must be one of 8, 16, got 12');
  t.equal(configured, `config file ${file}, key "amplifiers[0].zones": must be one of 8, 16, got 12`);
});

t.test('systemd/install.sh reads the same family names from drivers/index.ts before anything is built', async (t) => {
  const install = readFileSync(path.join(ROOT, 'systemd', 'install.sh'), 'utf8');
  const line = install.split('\n').find((l) => l.startsWith('KNOWN_DRIVERS='));
  t.ok(line, 'install.sh sets KNOWN_DRIVERS');
  const run = spawnSync('bash', ['-c', `${line}\nprintf '%s' "$KNOWN_DRIVERS"`], {
    env: { SRC_DIR: ROOT, PATH: process.env.PATH },
    encoding: 'utf8',
  });
  t.equal(run.stdout, DRIVER_NAMES.join(' '));
});

t.test(
  'the daemon reaches the drivers only through the registry, the driver seam and the stream-player contract',
  async (t) => {
    // The three entries ARCHITECTURE.md names (driver-entry): families by name, the amplifier interface, playback's contract.
    const allowed = new Set(['drivers/index.ts', 'drivers/driver.ts', 'drivers/playback.ts']);
    const crossings: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const file = path.posix.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts')) {
          for (const [, from, imported] of readFileSync(path.join(ROOT, file), 'utf8').matchAll(
            /from '([^']+)'|import\('([^']+)'\)/g,
          )) {
            const target = from ?? imported!;
            if (!target.startsWith('.')) continue;
            const resolved = path.posix
              .normalize(path.posix.join(path.posix.dirname(file), target))
              .replace(/\.js$/, '.ts');
            if (resolved.startsWith('drivers/') && !allowed.has(resolved)) crossings.push(`${file} -> ${resolved}`);
          }
        }
      }
    };
    walk('daemon');
    t.same(crossings, []);
  },
);
