// systemd files: the unit verified and scored by systemd-analyze, sysusers applied to a scratch root, install.sh dry run.

import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ROOT } from '../helpers/paths.js';

const UNIT = join(ROOT, 'systemd', 'azcd.service');
const SYSUSERS = join(ROOT, 'systemd', 'azcd.sysusers');
const INSTALL = join(ROOT, 'systemd', 'install.sh');
const MAX_EXPOSURE = 2.0;
const ENV = { ...process.env, SYSTEMD_COLORS: '0', SYSTEMD_PAGER: 'cat', SYSTEMD_LOG_COLOR: '0' };

const scratch = mkdtempSync(join(tmpdir(), 'azc-systemd-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

function run(cmd: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: 'utf8', env: ENV, timeout: 30_000 });
}

/** False (after failing the test with the fix) when a systemd tool is missing. */
function haveTool(t: Test, tool: string): boolean {
  if (run(tool, ['--version']).status === 0) return true;
  t.fail(`${tool} not found: run .ci/run, which installs Debian's systemd package (or apt-get install systemd)`);
  return false;
}

/** Every `Key=value` of the unit, in order, per key (a unit may repeat a key). */
function directives(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) map.set(match[1]!, [...(map.get(match[1]!) ?? []), match[2]!]);
  }
  return map;
}

t.test('the unit keeps its contract: notify + watchdog, own user, state and config dirs, sandbox', async (t) => {
  const d = directives(readFileSync(UNIT, 'utf8'));
  const one = (key: string) => d.get(key)?.at(-1);
  t.equal(one('Type'), 'notify');
  t.equal(one('NotifyAccess'), 'main');
  t.match(one('WatchdogSec'), /^[1-9][0-9]*s$/);
  t.equal(one('Restart'), 'on-failure');
  t.equal(one('User'), 'azcd');
  t.same(one('SupplementaryGroups')?.split(/\s+/).sort(), ['audio', 'dialout']);
  t.equal(one('StateDirectory'), 'azcd');
  t.equal(one('ConfigurationDirectory'), 'azcd');
  t.equal(
    one('ExecStart'),
    '/usr/bin/node /opt/azcd/dist/daemon/main.js --state-dir /var/lib/azcd --config /etc/azcd/config.json --ssdp',
  );
  t.equal(one('CapabilityBoundingSet'), '', 'no capabilities');
  t.equal(one('AmbientCapabilities'), '');
  t.equal(one('MemoryDenyWriteExecute'), 'no', 'V8 needs W+X memory for its JIT');
  t.equal(d.get('PrivateDevices'), undefined, 'PrivateDevices would hide the serial adapters');
  t.equal(one('DevicePolicy'), 'closed');
  t.same(
    d.get('DeviceAllow')?.filter((v) => /tty(USB|ACM)/.test(v)),
    ['char-ttyUSB rw', 'char-ttyACM rw'],
  );
  t.ok(d.get('DeviceAllow')?.includes('char-alsa rw'), 'the ALSA devices, for the mpds of stream players');
  t.equal(one('KillMode'), 'mixed', 'stopping signals azcd alone, which stops its mpds itself');
  t.same(one('RestrictAddressFamilies')?.split(/\s+/).sort(), ['AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
  t.same(d.get('SystemCallFilter'), [
    '@system-service',
    'landlock_create_ruleset landlock_add_rule landlock_restrict_self',
    '~@privileged @resources',
  ]);
  t.equal(one('ProtectSystem'), 'strict');
  t.equal(one('UMask'), '0077');
  t.equal(d.get('IPAddressDeny'), undefined, 'SSDP multicast and LAN clients from any range');
});

t.test('systemd-analyze verify accepts the unit (on a copy whose paths exist here)', async (t) => {
  if (!haveTool(t, 'systemd-analyze')) return;
  // verify insists that ExecStart's binary exists and is executable on *this* machine. CI's node need not be
  // /usr/bin/node and /opt/azcd is not installed, so verify a copy that points at this node and a scratch tree;
  // nothing else in the unit changes.
  const root = join(scratch, 'verify');
  mkdirSync(join(root, 'opt/azcd/dist/daemon'), { recursive: true });
  writeFileSync(join(root, 'opt/azcd/dist/daemon/main.js'), '// stand-in for the built daemon\n');
  const unit = readFileSync(UNIT, 'utf8')
    .replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `)
    .replaceAll('/opt/azcd', join(root, 'opt/azcd'));
  t.not(unit, readFileSync(UNIT, 'utf8'), 'the copy was rewritten');
  writeFileSync(join(root, 'azcd.service'), unit);
  const result = run('systemd-analyze', ['verify', join(root, 'azcd.service')]);
  t.equal(result.status, 0, result.stderr);
  const complaints = result.stderr.split('\n').filter((line) => line.includes('azcd.service'));
  t.same(complaints, [], 'no warnings about the unit (unknown keys only warn, with status 0)');

  // And verify really checks: the same copy with a missing binary is refused.
  writeFileSync(
    join(root, 'azcd.service'),
    unit.replace(`ExecStart=${process.execPath} `, 'ExecStart=/nonexistent/node '),
  );
  const broken = run('systemd-analyze', ['verify', join(root, 'azcd.service')]);
  t.not(broken.status, 0);
  t.match(broken.stderr, /nonexistent\/node/);
});

t.test(`systemd-analyze security --offline=yes scores the unit at most ${MAX_EXPOSURE}`, async (t) => {
  if (!haveTool(t, 'systemd-analyze')) return;
  const result = run('systemd-analyze', ['security', '--offline=yes', '--no-pager', UNIT]);
  t.equal(result.status, 0, result.stderr);
  const match = /Overall exposure level for azcd\.service: ([0-9]+\.[0-9]+)/.exec(result.stdout);
  t.ok(match, 'found the "Overall exposure level" line');
  const exposure = Number(match?.[1]);
  t.comment(`exposure level: ${exposure}`);
  t.ok(exposure <= MAX_EXPOSURE, `exposure ${exposure} <= ${MAX_EXPOSURE}`);
});

t.test('the sysusers entry creates azcd as a member of dialout and audio', async (t) => {
  if (!haveTool(t, 'systemd-sysusers')) return;
  const root = join(scratch, 'sysroot');
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\ndialout:x:20:\naudio:x:29:\n');
  const result = run('systemd-sysusers', [`--root=${root}`, SYSUSERS]);
  t.equal(result.status, 0, result.stderr);
  const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
  const group = readFileSync(join(root, 'etc/group'), 'utf8');
  t.match(passwd, /^azcd:x:\d+:\d+:[^:]*:\/var\/lib\/azcd:\/usr\/sbin\/nologin$/m);
  t.match(group, /^dialout:x:20:azcd$/m);
  t.match(group, /^audio:x:29:azcd$/m);
  t.match(group, /^azcd:x:\d+:$/m);
});

t.test('install.sh is valid bash', async (t) => {
  const result = run('bash', ['-n', INSTALL]);
  t.equal(result.status, 0, result.stderr);
});

/** Existence and mtime of the paths a real install writes, to prove a dry run wrote none of them. */
function systemState(): Record<string, number | null> {
  const paths = [
    '/etc/systemd/system/azcd.service',
    '/etc/sysusers.d/azcd.conf',
    '/etc/modules-load.d/azcd.conf',
    '/etc/azcd',
    '/opt/azcd',
  ];
  return Object.fromEntries(
    paths.map((p) => {
      try {
        return [p, statSync(p).mtimeMs];
      } catch {
        return [p, null];
      }
    }),
  );
}

t.test('install.sh --dry-run --prefix shows every step and changes nothing', async (t) => {
  const target = join(scratch, 'dry');
  mkdirSync(target);
  chmodSync(target, 0o755);
  const prefix = join(target, 'opt/azcd');
  const before = systemState();
  const result = run('bash', [INSTALL, '--dry-run', '--prefix', prefix]);
  t.equal(result.status, 0, result.stderr);
  const out = result.stdout;
  t.match(out, /dry run: nothing below is executed/);
  t.match(out, /\+ .*npm run build --prefix /, 'builds in the source tree first');
  t.match(out, new RegExp(`\\+ tar .*package\\.json package-lock\\.json dist native scripts.*${prefix}\\.staging`));
  t.match(out, new RegExp(`\\+ npm ci --omit=dev .*--prefix ${prefix}\\.staging`));
  t.match(out, new RegExp(`\\+ mv ${prefix}\\.staging ${prefix}`));
  t.match(out, /\+ systemd-sysusers \/etc\/sysusers\.d\/azcd\.conf/);
  t.match(out, /\+ write \/etc\/modules-load\.d\/azcd\.conf/);
  t.match(out, /\+ write \/etc\/systemd\/system\/azcd\.service/);
  t.match(
    out,
    new RegExp(`\\|   ExecStart=\\S+ ${prefix}/dist/daemon/main\\.js --state-dir /var/lib/azcd`),
    'unit rewritten for --prefix',
  );
  t.notMatch(out.replaceAll(prefix, '<prefix>'), /\/opt\/azcd/, 'no trace of the default prefix');
  t.match(
    out,
    /\+ systemctl disable mpd\.service mpd\.socket\n\+ systemctl mask mpd\.service mpd\.socket\n/,
    "Debian's system-wide mpd disabled and masked",
  );
  t.match(
    out,
    /\+ systemctl disable shairport-sync\.service squeezelite\.service gmediarender\.service\n\+ systemctl mask shairport-sync\.service squeezelite\.service gmediarender\.service\n/,
    "the receivers' own system-wide services disabled and masked",
  );
  t.match(
    out,
    /\+ systemctl daemon-reload\n\+ systemctl stop mpd\.socket mpd\.service\n\+ systemctl stop shairport-sync\.service squeezelite\.service gmediarender\.service\n\+ systemctl enable azcd\.service\n\+ systemctl restart azcd\.service/,
  );
  t.same(readdirSync(target), [], 'nothing created under the prefix');
  t.same(systemState(), before, 'no system file touched');
});

t.test(
  'install.sh on an image without compilers, mpd and the receivers installs them from apt first, or only names them with --no-apt',
  async (t) => {
    // A PATH with every command of this machine except the compilers, python3, mpd, aplay and the receivers: a fresh
    // Raspberry Pi OS image.
    const bin = join(scratch, 'fresh-image-bin');
    mkdirSync(bin);
    const absent = new Set(
      ['cc', 'c++', 'gcc', 'g++', 'make', 'python3', 'mpd', 'aplay'].concat([
        'shairport-sync',
        'gmediarender',
        'squeezelite',
      ]),
    );
    for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
      if (!existsSync(dir)) continue;
      for (const name of readdirSync(dir)) {
        if (!absent.has(name) && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name));
      }
    }
    const dry = (extra: string[]) =>
      spawnSync('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry-fresh/opt/azcd'), ...extra], {
        encoding: 'utf8',
        env: { ...ENV, PATH: bin },
        timeout: 30_000,
      });
    const result = dry([]);
    t.equal(result.status, 0, result.stderr);
    t.match(
      result.stdout,
      /\+ apt-get update -q\n\+ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 build-essential mpd alsa-utils shairport-sync gmediarender squeezelite\n/,
    );
    t.ok(result.stdout.indexOf('apt-get install') < result.stdout.indexOf('npm run build'), 'before anything is built');
    const told = dry(['--no-apt']);
    t.equal(told.status, 0, told.stderr);
    t.notMatch(told.stdout, /apt-get update/);
    t.match(
      told.stdout,
      /warning: missing packages: python3 build-essential mpd alsa-utils shairport-sync gmediarender squeezelite \(apt-get install python3 build-essential mpd alsa-utils shairport-sync gmediarender squeezelite\)/,
    );
  },
);

t.test('install.sh on an image whose apt offers Node.js 18 refuses before installing anything', async (t) => {
  // A fresh bookworm image: no node or npm, and apt's candidate nodejs is 18 (a stand-in apt-cache says so).
  const bin = join(scratch, 'bookworm-bin');
  mkdirSync(bin);
  const absent = new Set(['node', 'npm', 'apt-cache']);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!absent.has(name) && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name));
    }
  }
  const aptCache = (candidate: string) => {
    writeFileSync(
      join(bin, 'apt-cache'),
      `#!/bin/sh\nprintf 'nodejs:\\n  Installed: (none)\\n  Candidate: ${candidate}\\n'\n`,
      { mode: 0o755 },
    );
  };
  const dry = () =>
    spawnSync('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry-bookworm/opt/azcd')], {
      encoding: 'utf8',
      env: { ...ENV, PATH: bin },
      timeout: 30_000,
    });
  aptCache('18.19.0+dfsg-6~deb12u2');
  const refused = dry();
  t.equal(refused.status, 1, 'the install stops');
  t.match(
    refused.stderr,
    /apt here offers nodejs 18\.19\.0\+dfsg-6~deb12u2 .*nothing was installed\. Install Node\.js 20 system-wide first/,
  );
  t.notMatch(refused.stdout, /apt-get install/, 'apt installs nothing');
  aptCache('1:20.19.2+dfsg-1');
  const offered = dry();
  t.match(
    offered.stdout,
    /\+ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm/,
    "Debian's Node 20 is installed as before",
  );
});

t.test('install.sh --no-enable skips systemctl enable; bad options and prefixes are refused', async (t) => {
  const prefix = join(scratch, 'dry2/opt/azcd');
  const noEnable = run('bash', [INSTALL, '--dry-run', '--no-enable', `--prefix=${prefix}`]);
  t.equal(noEnable.status, 0, noEnable.stderr);
  t.match(noEnable.stdout, /\+ systemctl daemon-reload/);
  t.notMatch(noEnable.stdout, /\+ systemctl (enable|restart)/);
  const unknown = run('bash', [INSTALL, '--dry-run', '--frobnicate']);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown option '--frobnicate'/);
  const relative = run('bash', [INSTALL, '--dry-run', '--prefix', 'opt/azcd']);
  t.equal(relative.status, 1);
  t.match(relative.stderr, /must be an absolute path/);
});

/** The lines of a dry run that show what would be written to /etc/azcd/config.json, as JSON text. */
function configWritten(out: string): string | undefined {
  const match = /\+ write \/etc\/azcd\/config\.json \(mode 0644\):\r?\n((?:\| {3}.*\r?\n)+)/.exec(out);
  return match?.[1]
    ?.replace(/^\| {3}/gm, '')
    .replace(/\r/g, '')
    .trimEnd();
}

const FIRST_INSTALL = !existsSync('/etc/azcd/config.json');

// The sound card is the one part that cannot be real here: a stand-in aplay on PATH prints what `aplay -l` prints on a
// Raspberry Pi with its headphone jack and a HiFiBerry DAC+ (or, for the empty case, the header alone).
const APLAY_PI = `**** List of PLAYBACK Hardware Devices ****
card 0: Headphones [bcm2835 Headphones], device 0: bcm2835 Headphones [bcm2835 Headphones]
  Subdevices: 8/8
  Subdevice #0: subdevice #0
card 1: sndrpihifiberry [snd_rpi_hifiberry_dacplus], device 0: HiFiBerry DAC+ HiFi pcm512x-hifi-0 [HiFiBerry DAC+ HiFi pcm512x-hifi-0]
  Subdevices: 1/1
  Subdevice #0: subdevice #0
`;

/** A folder holding an `aplay` that prints `listing` for -l, to put first on PATH. */
function fakeAplay(name: string, listing: string): string {
  const bin = join(scratch, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'aplay.out'), listing);
  writeFileSync(join(bin, 'aplay'), `#!/bin/sh\n[ "$1" = -l ] || exit 1\ncat '${join(bin, 'aplay.out')}'\n`, {
    mode: 0o755,
  });
  return bin;
}

function dryWith(bin: string, args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return spawnSync('bash', [INSTALL, '--dry-run', ...args], {
    encoding: 'utf8',
    env: { ...ENV, ...env, PATH: `${bin}:${process.env.PATH}` },
    timeout: 30_000,
  });
}

const PI_OUTPUTS =
  /ALSA playback devices \(aplay -l\):\n +hw:CARD=Headphones,DEV=0 +bcm2835 Headphones: bcm2835 Headphones\n +hw:CARD=sndrpihifiberry,DEV=0 +snd_rpi_hifiberry_dacplus: HiFiBerry DAC\+ HiFi pcm512x-hifi-0\n/;

t.test(
  'install.sh --driver and --serial-port go into the config the unit reads',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    const port = '/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A1B2C3D4-if00-port0';
    const result = run('bash', [
      INSTALL,
      '--dry-run',
      '--prefix',
      join(scratch, 'dry3/opt/azcd'),
      '--driver',
      'monoprice',
      '--serial-port',
      port,
    ]);
    t.equal(result.status, 0, result.stderr);
    t.match(result.stdout, `amplifier: driver monoprice on ${port}`);
    t.same(JSON.parse(configWritten(result.stdout) ?? 'null'), { driver: 'monoprice', serialPort: port });
    t.match(
      result.stdout,
      /\| {3}ExecStart=.* --config \/etc\/azcd\/config\.json/,
      'the file the unit is started with',
    );
    t.match(result.stdout, /does not exist now/, 'warns about a port that is not there');
  },
);

t.test(
  'install.sh without a terminal and without --driver keeps the simulated amplifier and says so',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    const result = run('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry4/opt/azcd')]);
    t.equal(result.status, 0, result.stderr);
    t.match(
      result.stdout,
      /no --driver given and no terminal to ask on: the service starts with the simulated amplifier/,
    );
    t.match(result.stdout, /--driver monoprice --serial-port \/dev\/serial\/by-id\//, 'says how to choose a real one');
    t.match(result.stdout, /\/dev\/serial\/by-id\//, 'lists or looks for adapters');
    t.equal(configWritten(result.stdout), '{}');
  },
);

t.test(
  'install.sh on a terminal asks for the driver and the serial port',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    if (!haveTool(t, 'script')) return;
    // script(1) gives install.sh a pseudo-terminal as stdin and feeds it the two answers.
    const command = `bash ${INSTALL} --dry-run --prefix ${join(scratch, 'dry5/opt/azcd')}`;
    const result = spawnSync('script', ['-qec', command, '/dev/null'], {
      encoding: 'utf8',
      env: ENV,
      timeout: 30_000,
      input: 'monoprice\n/dev/ttyUSB7\n',
    });
    t.equal(result.status, 0, result.status === 0 ? 'exits 0' : result.stdout.slice(-2000));
    t.match(result.stdout, /Amplifier driver \(simulated, monoprice[^)]*\) \[simulated\]:/);
    t.match(result.stdout, /Serial port/);
    t.same(JSON.parse(configWritten(result.stdout) ?? 'null'), { driver: 'monoprice', serialPort: '/dev/ttyUSB7' });
  },
);

t.test(
  'install.sh refuses a bad driver, serial port or stream player mapping before it changes anything',
  async (t) => {
    // A stand-in aplay: with nothing missing from apt, the first step shown is the first change.
    const bin = fakeAplay('aplay-refusals', APLAY_PI);
    const cases: Array<[string[], RegExp]> = [
      [['--driver', 'frobnicator'], /unknown --driver 'frobnicator': choose one of simulated monoprice/],
      [['--driver', 'monoprice'], /--driver monoprice needs --serial-port PORT/],
      [['--serial-port', '/dev/ttyUSB0'], /--serial-port needs --driver/],
      [['--driver', 'simulated', '--serial-port', '/dev/ttyUSB0'], /the simulated driver has none/],
      [['--no-system', '--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0'], /--no-system leaves alone/],
      [
        ['--stream-player', 'hw:CARD=A,DEV=0'],
        /'hw:CARD=A,DEV=0' must be INPUT=DEVICE with INPUT an amplifier input 1-99/,
      ],
      [['--stream-player', '5=hw:CARD=A DEV=0'], /'hw:CARD=A DEV=0' is not an ALSA device name/],
      [['--stream-player', '5=hw:CARD=A,DEV=0', '--stream-player', '5=hw:CARD=B,DEV=0'], /input 5 is named twice/],
      [
        ['--stream-player', '5=hw:CARD=A,DEV=0', '--stream-player', '6=hw:CARD=A,DEV=0'],
        /hw:CARD=A,DEV=0 is named twice/,
      ],
      [['--no-stream-players', '--stream-player', '5=hw:CARD=A,DEV=0'], /contradict each other/],
      [['--no-system', '--stream-player', '5=hw:CARD=A,DEV=0'], /which --no-system leaves alone/],
    ];
    for (const [args, message] of cases) {
      const result = dryWith(bin, ['--prefix', join(scratch, 'dry6/opt/azcd'), ...args]);
      t.equal(result.status, 1, args.join(' '));
      t.match(result.stderr, message);
      t.notMatch(result.stdout, /^\+ /m, 'stops before the first step');
    }
  },
);

t.test(
  'install.sh at a first install without a terminal lists the ALSA outputs and says how to map them',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    const result = dryWith(fakeAplay('aplay-pi', APLAY_PI), ['--prefix', join(scratch, 'dry7/opt/azcd')]);
    t.equal(result.status, 0, result.stderr);
    t.match(result.stdout, PI_OUTPUTS);
    t.match(result.stdout, /no terminal to ask on: no stream player; map an output with --stream-player INPUT=DEVICE/);
    t.notMatch(result.stdout, /stream player on input/, 'no player is made');
  },
);

t.test(
  'install.sh with no ALSA output says so and goes on',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    const result = dryWith(fakeAplay('aplay-none', '**** List of PLAYBACK Hardware Devices ****\n'), [
      '--prefix',
      join(scratch, 'dry8/opt/azcd'),
    ]);
    t.equal(result.status, 0, result.stderr);
    t.match(result.stdout, /no ALSA playback device found \(aplay -l lists none\): no stream player now/);
    t.match(result.stdout, /\+ systemctl restart azcd\.service/, 'the install goes on to the end');
  },
);

t.test(
  'install.sh --stream-player (or AZC_STREAM_PLAYERS) makes each output a stream player on its input once azcd runs',
  async (t) => {
    const bin = fakeAplay('aplay-flags', APLAY_PI);
    const flags = dryWith(bin, [
      '--prefix',
      join(scratch, 'dry9/opt/azcd'),
      '--stream-player',
      '5=hw:CARD=sndrpihifiberry,DEV=0',
      '--stream-player=6=hw:CARD=Headphones,DEV=0',
    ]);
    const env = dryWith(bin, ['--prefix', join(scratch, 'dry9/opt/azcd')], {
      AZC_STREAM_PLAYERS: '5=hw:CARD=sndrpihifiberry,DEV=0 6=hw:CARD=Headphones,DEV=0',
    });
    for (const result of [flags, env]) {
      t.equal(result.status, 0, result.stderr);
      t.match(
        result.stdout,
        /stream player: amplifier input 5 <- ALSA device hw:CARD=sndrpihifiberry,DEV=0\n.*stream player: amplifier input 6 <- ALSA device hw:CARD=Headphones,DEV=0\n/,
      );
      const made = /\+ systemctl restart azcd\.service\n((?:\+ stream player on input .*\n)+)/.exec(result.stdout)?.[1];
      t.equal(
        made,
        '+ stream player on input 5: http://127.0.0.1:8080/api/players, output {"kind":"alsa","device":"hw:CARD=sndrpihifiberry,DEV=0"} (POST a new player, or PUT the output of the one on that input)\n' +
          '+ stream player on input 6: http://127.0.0.1:8080/api/players, output {"kind":"alsa","device":"hw:CARD=Headphones,DEV=0"} (POST a new player, or PUT the output of the one on that input)\n',
        'after the service started, through its API on loopback',
      );
    }
    const notEnabled = dryWith(bin, [
      '--prefix',
      join(scratch, 'dry9/opt/azcd'),
      '--no-enable',
      '--stream-player',
      '5=hw:CARD=sndrpihifiberry,DEV=0',
    ]);
    t.equal(notEnabled.status, 0, notEnabled.stderr);
    t.notMatch(notEnabled.stdout, /\+ stream player on input/);
    t.match(
      notEnabled.stdout,
      /stream players not made \(the service is not running\): start it, then rerun with the same --stream-player/,
    );
  },
);

t.test(
  'install.sh on a terminal asks which amplifier input each ALSA output feeds',
  { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' },
  async (t) => {
    if (!haveTool(t, 'script')) return;
    const bin = fakeAplay('aplay-ask', APLAY_PI);
    const command = `bash ${INSTALL} --dry-run --prefix ${join(scratch, 'dry10/opt/azcd')}`;
    // Driver simulated (no port asked), the headphone jack left unused, then for the DAC a word, 0, and input 4.
    const result = spawnSync('script', ['-qec', command, '/dev/null'], {
      encoding: 'utf8',
      env: { ...ENV, PATH: `${bin}:${process.env.PATH}` },
      timeout: 30_000,
      input: '\n\nfour\n0\n4\n',
    });
    t.equal(result.status, 0, result.status === 0 ? 'exits 0' : result.stdout.slice(-2000));
    const out = result.stdout.replace(/\r/g, '');
    t.match(out, PI_OUTPUTS);
    t.match(
      out,
      /Amplifier input fed by hw:CARD=Headphones,DEV=0 \(bcm2835 Headphones: bcm2835 Headphones\) \[none\]:/,
    );
    t.match(
      out,
      /Amplifier input fed by hw:CARD=sndrpihifiberry,DEV=0 \(snd_rpi_hifiberry_dacplus: HiFiBerry DAC\+ HiFi pcm512x-hifi-0\) \[none\]:/,
    );
    t.equal(
      out.match(/the number of an amplifier input \(1-99\), or nothing to leave this output unused/g)?.length,
      2,
      'asked again after each answer that is not an input',
    );
    t.match(out, /stream player: amplifier input 4 <- ALSA device hw:CARD=sndrpihifiberry,DEV=0\n/);
    t.notMatch(
      out,
      /amplifier input \d+ <- ALSA device hw:CARD=Headphones/,
      'an empty answer leaves the output unused',
    );
    t.match(
      out,
      /\+ stream player on input 4: http:\/\/127\.0\.0\.1:8080\/api\/players, output \{"kind":"alsa","device":"hw:CARD=sndrpihifiberry,DEV=0"\}/,
    );
  },
);
