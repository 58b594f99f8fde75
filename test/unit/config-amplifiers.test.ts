// The config file's list of amplifiers: what it yields, the single amplifier of --driver, and the errors for bad lists.
import t from 'tap';
import { MAX_AMPLIFIERS, amplifierKey, amplifiersOf, loadConfig } from '../../daemon/config.js';
import { configFile, errorOf } from '../helpers/config-files.js';

const CWD = '/srv/azcd';

const TWO = [
  { name: 'Main floor', driver: 'rnet', port: 'tcp://10.0.0.5:4999' },
  { name: 'Upstairs', driver: 'xantech', port: '/dev/serial/by-id/usb-FTDI-if00', model: 'mx88', zones: 16, pollIntervalMs: 2000 },
];

t.test('a config file lists several amplifiers, each with its name, key, driver, port and options', async (t) => {
  const { config } = loadConfig(['--config', configFile(t, { amplifiers: TWO })], {}, CWD);
  t.same(amplifiersOf(config), [
    { name: 'Main floor', key: 'main-floor', driver: 'rnet', port: 'tcp://10.0.0.5:4999', options: {} },
    { name: 'Upstairs', key: 'upstairs', driver: 'xantech', port: '/dev/serial/by-id/usb-FTDI-if00', options: { model: 'mx88', zones: 16, pollIntervalMs: 2000 } },
  ]);
});

t.test('without a list, --driver and --serial-port describe one amplifier named after its driver', async (t) => {
  const { config } = loadConfig(['--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0', '--poll-interval-ms', '1000'], {}, CWD);
  t.same(amplifiersOf(config), [{ name: 'monoprice', key: 'monoprice', driver: 'monoprice', port: '/dev/ttyUSB0', options: { pollIntervalMs: 1000 } }]);
  t.same(amplifiersOf(loadConfig([], {}, CWD).config).map((a) => a.name), ['simulated'], 'the default is the simulated one');
});

t.test('an amplifier key comes from its name only: case, spaces and punctuation do not matter', async (t) => {
  t.equal(amplifierKey('Main floor'), 'main-floor');
  t.equal(amplifierKey('  MAIN   Floor!'), 'main-floor');
  t.equal(amplifierKey('Küche'), 'kuche');
  t.match(amplifierKey('客厅'), /^amp-[0-9a-f]{8}$/, 'a name without latin letters or digits gets a hash');
  t.not(amplifierKey('客厅'), amplifierKey('厨房'));
});

t.test('a bad amplifier list is refused with an error that names the entry and the fix', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not a list', { name: 'A', driver: 'simulated' }, /"amplifiers" must be a list of 1 to 8/],
    ['an empty list', [], /"amplifiers" must be a list of 1 to 8/],
    ['too many', Array.from({ length: MAX_AMPLIFIERS + 1 }, (_, i) => ({ name: `Amp ${i}`, driver: 'simulated' })), /a list of 1 to 8 amplifiers/],
    ['an entry that is no object', ['Main'], /"amplifiers\[0\]" must be an object/],
    ['no name', [{ driver: 'simulated' }], /"amplifiers\[0\]\.name" must be a name of 1 to 64 printable characters/],
    ['a blank name', [{ name: '   ', driver: 'simulated' }], /"amplifiers\[0\]\.name" must be a name/],
    ['a name too long', [{ name: 'x'.repeat(65), driver: 'simulated' }], /1 to 64 printable characters/],
    ['a control character', [{ name: 'A\nB', driver: 'simulated' }], /printable characters/],
    ['the same name twice', [{ name: 'Main', driver: 'simulated' }, { name: 'MAIN', driver: 'simulated' }], /"amplifiers\[1\]\.name" "MAIN" is too close to "Main"/],
    ['names differing in punctuation', [{ name: 'Main floor', driver: 'simulated' }, { name: 'main-floor', driver: 'simulated' }], /must differ in more than case, spaces or punctuation/],
    ['an unknown driver', [{ name: 'A', driver: 'sonos' }], /"amplifiers\[0\]\.driver" must be one of simulated, monoprice, rnet, xantech, got "sonos"/],
    ['no driver', [{ name: 'A' }], /"amplifiers\[0\]\.driver" must be a non-empty string/],
    ['a serial family without a port', [{ name: 'Den', driver: 'monoprice' }], /"amplifiers\[0\]\.port" is required for the monoprice driver of "Den"/],
    ['a bad tcp port', [{ name: 'A', driver: 'rnet', port: 'tcp://amp:123456' }], /"amplifiers\[0\]\.port": /],
    ['an unknown option', [{ name: 'A', driver: 'rnet', port: '/dev/ttyUSB0', pollIntervalMS: 100 }], /"amplifiers\[0\]\.pollIntervalMS" is not an amplifier setting; known: name, driver, port, baudRate/],
    ['an option out of range', [{ name: 'A', driver: 'rnet', port: '/dev/ttyUSB0', pollIntervalMs: 5 }], /"amplifiers\[0\]\.pollIntervalMs" must be an integer from 200/],
    ['a choice not offered', [{ name: 'A', driver: 'xantech', port: '/dev/ttyUSB0', zones: 12 }], /"amplifiers\[0\]\.zones" must be one of 8, 16, got 12/],
  ];
  for (const [what, amplifiers, expected] of cases) {
    t.match(errorOf(() => loadConfig(['--config', configFile(t, { amplifiers })], {}, CWD)), expected, what);
  }
});

t.test('a list together with a single amplifier from flags, environment or file is refused', async (t) => {
  const file = configFile(t, { amplifiers: TWO });
  const both = /lists "amplifiers" and a single amplifier is also given/;
  t.match(errorOf(() => loadConfig(['--config', file, '--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0'], {}, CWD)), both, '--driver');
  t.match(errorOf(() => loadConfig(['--config', file, '--serial-port', '/dev/ttyUSB0'], {}, CWD)), both, '--serial-port');
  t.match(errorOf(() => loadConfig(['--config', file], { AZC_DRIVER: 'rnet' }, CWD)), both, 'AZC_DRIVER');
  const inFile = configFile(t, { driver: 'rnet', serialPort: '/dev/ttyUSB0', amplifiers: TWO });
  t.match(errorOf(() => loadConfig(['--config', inFile], {}, CWD)), both, 'driver in the same file');
});
