// systemd files: the unit verified and scored by systemd-analyze, sysusers applied to a scratch root, install.sh dry run.
import t, { type Test } from 'tap';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  t.same(d.get('DeviceAllow')?.filter((v) => /tty(USB|ACM)/.test(v)), ['char-ttyUSB rw', 'char-ttyACM rw']);
  t.same(one('RestrictAddressFamilies')?.split(/\s+/).sort(), ['AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_UNIX']);
  t.same(d.get('SystemCallFilter'), ['@system-service', '~@privileged @resources']);
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
  writeFileSync(join(root, 'azcd.service'), unit.replace(`ExecStart=${process.execPath} `, 'ExecStart=/nonexistent/node '));
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
  t.match(out, new RegExp(`\\|   ExecStart=\\S+ ${prefix}/dist/daemon/main\\.js --state-dir /var/lib/azcd`), 'unit rewritten for --prefix');
  t.notMatch(out.replaceAll(prefix, '<prefix>'), /\/opt\/azcd/, 'no trace of the default prefix');
  t.match(out, /\+ systemctl daemon-reload\n\+ systemctl enable azcd\.service\n\+ systemctl restart azcd\.service/);
  t.same(readdirSync(target), [], 'nothing created under the prefix');
  t.same(systemState(), before, 'no system file touched');
});

t.test('install.sh on an image without compilers installs them from apt first, or only names them with --no-apt', async (t) => {
  // A PATH with every command of this machine except the compilers and python3: a fresh Raspberry Pi OS image.
  const bin = join(scratch, 'fresh-image-bin');
  mkdirSync(bin);
  const absent = new Set(['cc', 'c++', 'gcc', 'g++', 'make', 'python3']);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!absent.has(name) && !existsSync(join(bin, name))) symlinkSync(join(dir, name), join(bin, name));
    }
  }
  const dry = (extra: string[]) =>
    spawnSync('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry-fresh/opt/azcd'), ...extra], {
      encoding: 'utf8', env: { ...ENV, PATH: bin }, timeout: 30_000,
    });
  const result = dry([]);
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, /\+ apt-get update -q\n\+ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 build-essential/);
  t.ok(result.stdout.indexOf('apt-get install') < result.stdout.indexOf('npm run build'), 'before anything is built');
  const told = dry(['--no-apt']);
  t.equal(told.status, 0, told.stderr);
  t.notMatch(told.stdout, /apt-get update/);
  t.match(told.stdout, /warning: missing packages: python3 build-essential \(apt-get install python3 build-essential\)/);
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
  const match = /\+ write \/etc\/azcd\/config\.json \(mode 0644\):\r?\n((?:\|   .*\r?\n)+)/.exec(out);
  return match?.[1]!.replace(/^\|   /gm, '').replace(/\r/g, '').trimEnd();
}

const FIRST_INSTALL = !existsSync('/etc/azcd/config.json');

t.test('install.sh --driver and --serial-port go into the config the unit reads', { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' }, async (t) => {
  const port = '/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A1B2C3D4-if00-port0';
  const result = run('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry3/opt/azcd'), '--driver', 'monoprice', '--serial-port', port]);
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, `amplifier: driver monoprice on ${port}`);
  t.same(JSON.parse(configWritten(result.stdout) ?? 'null'), { driver: 'monoprice', serialPort: port });
  t.match(result.stdout, /\|   ExecStart=.* --config \/etc\/azcd\/config\.json/, 'the file the unit is started with');
  t.match(result.stdout, /does not exist now/, 'warns about a port that is not there');
});

t.test('install.sh without a terminal and without --driver keeps the simulated amplifier and says so', { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' }, async (t) => {
  const result = run('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry4/opt/azcd')]);
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, /no --driver given and no terminal to ask on: the service starts with the simulated amplifier/);
  t.match(result.stdout, /--driver monoprice --serial-port \/dev\/serial\/by-id\//, 'says how to choose a real one');
  t.match(result.stdout, /\/dev\/serial\/by-id\//, 'lists or looks for adapters');
  t.equal(configWritten(result.stdout), '{}');
});

t.test('install.sh on a terminal asks for the driver and the serial port', { skip: !FIRST_INSTALL && '/etc/azcd/config.json exists here' }, async (t) => {
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
});

t.test('install.sh refuses an unknown driver, a real driver without a port and a port without a driver', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--driver', 'frobnicator'], /unknown --driver 'frobnicator': choose one of simulated monoprice/],
    [['--driver', 'monoprice'], /--driver monoprice needs --serial-port PORT/],
    [['--serial-port', '/dev/ttyUSB0'], /--serial-port needs --driver/],
    [['--driver', 'simulated', '--serial-port', '/dev/ttyUSB0'], /the simulated driver has none/],
    [['--no-system', '--driver', 'monoprice', '--serial-port', '/dev/ttyUSB0'], /--no-system leaves alone/],
  ];
  for (const [args, message] of cases) {
    const result = run('bash', [INSTALL, '--dry-run', '--prefix', join(scratch, 'dry6/opt/azcd'), ...args]);
    t.equal(result.status, 1, args.join(' '));
    t.match(result.stderr, message);
    t.notMatch(result.stdout, /^\+ /m, 'stops before the first step');
  }
});
