// The config file's list of amplifiers: what it yields, the single amplifier of --driver, and the errors for bad lists.
import t from 'tap';
import { amplifierKey, amplifiersOf, loadConfig, MAX_AMPLIFIERS } from '../../daemon/config.js';
import { configFile, errorOf } from '../helpers/config-files.js';

const CWD = '/srv/azcd';

const TWO = [
  { name: 'Main floor', driver: 'rnet', port: 'tcp://10.0.0.5:4999' },
  {
    name: 'Upstairs',
    driver: 'xantech',
    port: '/dev/serial/by-id/usb-FTDI-if00',
    model: 'mx88',
    zones: 16,
    pollIntervalMs: 2000,
  },
];

t.test('a config file lists several amplifiers, each with its name, key, driver, port and options', async (t) => {
  const { config } = loadConfig(['--config', configFile(t, { amplifiers: TWO })], {}, CWD);
  t.same(amplifiersOf(config), [
    { name: 'Main floor', key: 'main-floor', driver: 'rnet', port: 'tcp://10.0.0.5:4999', options: {} },
    {
      name: 'Upstairs',
      key: 'upstairs',
      driver: 'xantech',
      port: '/dev/serial/by-id/usb-FTDI-if00',
      options: { model: 'mx88', zones: 16, pollIntervalMs: 2000 },
    },
  ]);
});

t.test('without a list, --driver and --serial-port describe one amplifier named after its driver', async (t) => {
  const { config } = loadConfig(
    ['--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0', '--poll-interval-ms', '1000'],
    {},
    CWD,
  );
  t.same(amplifiersOf(config), [
    {
      name: 'monoprice',
      key: 'monoprice',
      driver: 'monoprice',
      port: '/dev/ttyUSB0',
      options: { pollIntervalMs: 1000 },
    },
  ]);
  t.same(
    amplifiersOf(loadConfig([], {}, CWD).config).map((a) => a.name),
    ['simulated'],
    'the default is the simulated one',
  );
});

t.test('an amplifier key comes from its name only: case, spaces and punctuation do not matter', async (t) => {
  t.equal(amplifierKey('Main floor'), 'main-floor');
  t.equal(amplifierKey('  MAIN   Floor!'), 'main-floor');
  t.equal(amplifierKey('Küche'), 'kuche');
  t.match(amplifierKey('客厅'), /^amp-[0-9a-f]{8}$/, 'a name without latin letters or digits gets a hash');
  t.not(amplifierKey('客厅'), amplifierKey('厨房'));
});

t.test('a bad amplifier list is refused with an error that names the entry and the fix', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    [
      'not a list',
      { name: 'A', driver: 'simulated' },
      'key "amplifiers": must be a list of 1 to 8 entries, got {"name":"A","driver":"simulated"}',
    ],
    ['an empty list', [], 'key "amplifiers": must be a list of 1 to 8 entries, got 0'],
    [
      'too many',
      Array.from({ length: MAX_AMPLIFIERS + 1 }, (_, i) => ({ name: `Amp ${i}`, driver: 'simulated' })),
      'key "amplifiers": must be a list of 1 to 8 entries, got 9',
    ],
    [
      'an entry that is no object',
      ['Main'],
      'key "amplifiers[0]": must be an object like {"name": "Main floor", "driver": "rnet", "port": "tcp://10.0.0.5:4999"}, got "Main"',
    ],
    [
      'no name',
      [{ driver: 'simulated' }],
      'key "amplifiers[0].name": is required: the name shown in the API and Home Assistant, unique (case, spaces and punctuation aside)',
    ],
    ['a blank name', [{ name: '   ', driver: 'simulated' }], 'key "amplifiers[0].name": must not be blank'],
    [
      'a name too long',
      [{ name: 'x'.repeat(65), driver: 'simulated' }],
      `key "amplifiers[0].name": must be at most 64 characters long, got "${'x'.repeat(56)}...`,
    ],
    [
      'a control character',
      [{ name: 'A\nB', driver: 'simulated' }],
      'key "amplifiers[0].name": must not hold a control character or line break (U+000A at position 1)',
    ],
    [
      'the same name twice',
      [
        { name: 'Main', driver: 'simulated' },
        { name: 'MAIN', driver: 'simulated' },
      ],
      'key "amplifiers[1].name": "MAIN" is too close to "Main": amplifier names must differ in more than case, spaces or punctuation',
    ],
    [
      'names differing in punctuation',
      [
        { name: 'Main floor', driver: 'simulated' },
        { name: 'main-floor', driver: 'simulated' },
      ],
      'key "amplifiers[1].name": "main-floor" is too close to "Main floor": amplifier names must differ in more than case, spaces or punctuation',
    ],
    [
      'an unknown driver',
      [{ name: 'A', driver: 'sonos' }],
      'key "amplifiers[0].driver": must be one of simulated, monoprice, rnet, xantech, got "sonos"',
    ],
    ['no driver', [{ name: 'A' }], 'key "amplifiers[0].driver": is required: the amplifier\'s driver family'],
    [
      'a serial family without a port',
      [{ name: 'Den', driver: 'monoprice' }],
      `key "amplifiers[0].port": is required: the amplifier's serial device (best a /dev/serial/by-id/... path) or tcp://host:port for an IP-serial adapter`,
    ],
    [
      'a port for the simulated one',
      [{ name: 'Den', driver: 'simulated', port: '/dev/ttyUSB0' }],
      'key "amplifiers[0].port": the simulated driver takes no port; remove it',
    ],
    [
      'a bad tcp port',
      [{ name: 'A', driver: 'rnet', port: 'tcp://amp:123456' }],
      'key "amplifiers[0].port": "tcp://amp:123456" is not a valid network serial port: write tcp://host:port with a port from 1 to 65535 (tcp://192.168.1.50:4999, tcp://[fd00::50]:4999)',
    ],
    [
      'a misspelt option',
      [{ name: 'A', driver: 'rnet', port: '/dev/ttyUSB0', pollIntervalMS: 100 }],
      'key "amplifiers[0].pollIntervalMS": unknown setting; did you mean "pollIntervalMs"?',
    ],
    [
      "another family's option",
      [{ name: 'A', driver: 'monoprice', port: '/dev/ttyUSB0', model: 'mx88' }],
      'key "amplifiers[0].model": unknown setting; known here: name, driver, port, baudRate, pollIntervalMs, commandTimeoutMs, interCommandGapMs, reconnectMinMs, reconnectMaxMs, offlineAfterTimeouts',
    ],
    [
      'an option out of range',
      [{ name: 'A', driver: 'rnet', port: '/dev/ttyUSB0', pollIntervalMs: 5 }],
      'key "amplifiers[0].pollIntervalMs": must be an integer from 200 to 600000, got 5',
    ],
    [
      'a choice not offered',
      [{ name: 'A', driver: 'xantech', port: '/dev/ttyUSB0', zones: 12 }],
      'key "amplifiers[0].zones": must be one of 8, 16, got 12',
    ],
  ];
  for (const [what, amplifiers, expected] of cases) {
    const file = configFile(t, { amplifiers });
    t.equal(
      errorOf(() => loadConfig(['--config', file], {}, CWD)),
      `config file ${file}, ${expected}`,
      what,
    );
  }
});

t.test(
  'a list together with a single amplifier from flags, environment or file is refused, naming the single one',
  async (t) => {
    const file = configFile(t, { amplifiers: TWO });
    const both =
      'is for a single amplifier, and the config file lists "amplifiers": describe every amplifier in the list and drop this';
    t.equal(
      errorOf(() => loadConfig(['--config', file, '--driver', 'monoprice'], {}, CWD)),
      `flag --driver: ${both}`,
    );
    t.equal(
      errorOf(() => loadConfig(['--config', file, '--serial-port', '/dev/ttyUSB0'], {}, CWD)),
      `flag --serial-port: ${both}`,
    );
    t.equal(
      errorOf(() => loadConfig(['--config', file], { AZC_DRIVER: 'rnet' }, CWD)),
      `environment AZC_DRIVER: ${both}`,
    );
    t.equal(
      errorOf(() => loadConfig(['--config', file], { AZC_POLL_INTERVAL_MS: '1000' }, CWD)),
      `environment AZC_POLL_INTERVAL_MS: ${both}`,
    );
    const inFile = configFile(t, { driver: 'rnet', serialPort: '/dev/ttyUSB0', amplifiers: TWO });
    t.equal(
      errorOf(() => loadConfig(['--config', inFile], {}, CWD)),
      [`config file ${inFile}, key "driver": ${both}`, `config file ${inFile}, key "serialPort": ${both}`].join('\n'),
    );
  },
);
