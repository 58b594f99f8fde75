// sd_notify addon and wrapper: real datagrams to a real unix socket (a python3 receiver), path and abstract addresses.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createNotifier, fixMallocThresholds, startWatchdog, watchdogIntervalMs } from '../../native/index.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { ROOT } from '../helpers/paths.js';

const ADDON = join(ROOT, 'native', 'build', 'Release', 'azc_notify.node');
const dir = mkdtempSync(join(tmpdir(), 'azc-notify-'));
const savedEnv = { ...process.env };
t.teardown(() => {
  process.env = savedEnv;
  rmSync(dir, { recursive: true, force: true });
});

function clearSystemdEnv(): void {
  for (const key of ['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID']) delete process.env[key];
}

t.test('the addon is built (run `npm run install` or `npm rebuild` if this fails)', async (t) => {
  t.ok(existsSync(ADDON), `${ADDON} exists`);
});

t.test('without NOTIFY_SOCKET the addon returns false and the notifier is a silent no-op', async (t) => {
  clearSystemdEnv();
  const addon = createRequire(import.meta.url)(ADDON) as { notify(message: string): boolean };
  t.equal(addon.notify('READY=1'), false);
  const logs: string[] = [];
  const notifier = createNotifier((msg) => logs.push(msg));
  t.equal(notifier.available, false);
  t.equal(notifier.ready('up'), false);
  t.equal(notifier.status('x'), false);
  t.equal(notifier.watchdogPing(), false);
  t.equal(notifier.stopping(), false);
  t.same(logs, [], 'nothing to say when the addon is present');
});

/**
 * A child that hashes a password with scrypt (16 MiB, mapped and freed: glibc then raises its thresholds), then
 * allocates 40 blocks of 1 MiB, each followed by a small block that stays, frees the large ones, and prints how many
 * MiB of RSS stayed. With glibc's raised thresholds the large blocks come from the heap and their holes stay.
 */
const FRAGMENTING_CHILD = `
const addon = require(process.argv[1]);
if (process.argv[2] === 'fix' && !addon.fixMallocThresholds()) throw new Error('not applied');
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
require('crypto').scryptSync('password', 'salt', 64, { N: 16384, r: 8, p: 1 });
const before = rss();
let large = [];
const small = [];
for (let i = 0; i < 40; i++) {
  large.push(Buffer.alloc(1 << 20, 1));
  small.push(Buffer.allocUnsafeSlow(4096).fill(1));
}
large = null;
let rounds = 0;
const settle = () => {
  gc();
  if (++rounds < 20) return setImmediate(settle);
  process.stdout.write(JSON.stringify({ keptMiB: rss() - before, small: small.length }));
};
settle();
`;

t.test(
  'fixMallocThresholds keeps freed large blocks from staying with the process after a password hash',
  async (t) => {
    t.equal(fixMallocThresholds(), true, 'applied here (glibc)');
    const run = (mode: string) => {
      const child = spawnSync(process.execPath, ['--expose-gc', '-e', FRAGMENTING_CHILD, ADDON, mode], {
        encoding: 'utf8',
      });
      t.equal(child.status, 0, `${mode}: ${child.stderr}`);
      return JSON.parse(child.stdout) as { keptMiB: number };
    };
    const without = run('default');
    const fixed = run('fix');
    t.ok(
      without.keptMiB >= 30,
      `glibc's raised thresholds keep the freed 40 MiB (${without.keptMiB.toFixed(1)} MiB kept)`,
    );
    t.ok(fixed.keptMiB < 10, `with the thresholds fixed they are given back (${fixed.keptMiB.toFixed(1)} MiB kept)`);
  },
);

for (const kind of ['path', 'abstract'] as const) {
  t.test(`READY, STATUS, WATCHDOG and STOPPING datagrams reach a ${kind} socket`, async (t) => {
    clearSystemdEnv();
    const address =
      kind === 'path' ? join(dir, 'notify.sock') : `@azc-notify-test-${process.pid}-${Date.now().toString(36)}`;
    const receiver = await Receiver.start(address);
    t.teardown(() => receiver.stop());
    process.env['NOTIFY_SOCKET'] = address;
    const logs: string[] = [];
    const notifier = createNotifier((msg) => logs.push(msg));
    t.equal(notifier.available, true);
    t.equal(notifier.ready('serving on :8080'), true);
    t.equal(notifier.status('two\nlines'), true);
    t.equal(notifier.watchdogPing(), true);
    t.equal(notifier.stopping(), true);
    await receiver.waitFor('STOPPING=1');
    t.same(receiver.datagrams, ['READY=1\nSTATUS=serving on :8080', 'STATUS=two lines', 'WATCHDOG=1', 'STOPPING=1']);
    t.same(logs, []);
  });
}

t.test('a send failure throws from the addon with the errno code, and the wrapper logs it once', async (t) => {
  clearSystemdEnv();
  process.env['NOTIFY_SOCKET'] = join(dir, 'nobody-listens.sock');
  const addon = createRequire(import.meta.url)(ADDON) as { notify(message: string): boolean };
  t.throws(() => addon.notify('READY=1'), { code: 'ENOENT', errno: 2 });
  process.env['NOTIFY_SOCKET'] = 'relative/path';
  t.throws(() => addon.notify('READY=1'), { code: 'EAFNOSUPPORT' });
  t.throws(() => addon.notify(42 as unknown as string), TypeError);

  process.env['NOTIFY_SOCKET'] = join(dir, 'nobody-listens.sock');
  const logs: string[] = [];
  const notifier = createNotifier((msg) => logs.push(msg));
  t.equal(notifier.ready(), false);
  t.equal(notifier.watchdogPing(), false);
  t.equal(logs.length, 1, 'one log line for repeated ENOENT');
  t.match(logs[0], /ENOENT/);
});

t.test('a missing addon is logged once and every call is a no-op, even under systemd', async (t) => {
  clearSystemdEnv();
  process.env['NOTIFY_SOCKET'] = join(dir, 'unused.sock');
  const logs: string[] = [];
  const notifier = createNotifier((msg) => logs.push(msg), { addonPaths: [join(dir, 'missing.node')] });
  t.equal(notifier.available, false);
  t.equal(notifier.ready(), false);
  t.equal(notifier.watchdogPing(), false);
  t.equal(logs.length, 1);
  t.match(logs[0], /addon missing.*time the start out/);
});

t.test('the watchdog interval is half WATCHDOG_USEC, and off for another WATCHDOG_PID', async (t) => {
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }), 15000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) }), 15000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid + 1) }), undefined);
  t.equal(watchdogIntervalMs({}), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '0' }), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '-5' }), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: 'soon' }), undefined);
});

t.test('watchdog pings flow while healthy, stop while unhealthy and resume after', async (t) => {
  clearSystemdEnv();
  const address = `@azc-watchdog-test-${process.pid}-${Date.now().toString(36)}`;
  const receiver = await Receiver.start(address);
  t.teardown(() => receiver.stop());
  process.env['NOTIFY_SOCKET'] = address;
  process.env['WATCHDOG_USEC'] = '40000'; // pings every 20 ms
  const logs: string[] = [];
  const notifier = createNotifier((msg) => logs.push(msg));
  let healthy = true;
  let checks = 0;
  let onCheck: (() => void) | undefined;
  const stop = startWatchdog(
    notifier,
    () => {
      checks += 1;
      onCheck?.();
      return healthy;
    },
    (msg) => logs.push(msg),
  );
  t.teardown(stop);
  const checksDone = (n: number) =>
    new Promise<void>((resolve) => {
      const target = checks + n;
      onCheck = () => {
        if (checks >= target) resolve();
      };
    });

  await receiver.waitFor('WATCHDOG=1');

  // Markers sent in the same tick as each switch bound exactly which pings happened while unhealthy.
  healthy = false;
  notifier.status('unhealthy-begin');
  await checksDone(5);
  notifier.status('unhealthy-end');
  const begin = await receiver.waitFor('STATUS=unhealthy-begin');
  const end = await receiver.waitFor('STATUS=unhealthy-end', begin);
  t.same(receiver.datagrams.slice(begin + 1, end), [], 'no WATCHDOG=1 during five unhealthy checks');

  healthy = true;
  await receiver.waitFor('WATCHDOG=1', end);
  t.equal(logs.length, 2, 'one log line per health transition');
  t.match(logs[0], /health check failed/);
  t.match(logs[1], /passes again/);

  stop();
  const before = checks;
  await new Promise((resolve) => setTimeout(resolve, 100)); // five intervals: proving an absence takes time
  t.equal(checks, before, 'no health checks after stop()');
});

t.test('startWatchdog never runs health checks outside systemd, even with WATCHDOG_USEC set', async (t) => {
  clearSystemdEnv();
  process.env['WATCHDOG_USEC'] = '2000'; // would check every millisecond
  const notifier = createNotifier(() => undefined);
  let checks = 0;
  const stop = startWatchdog(notifier, () => ++checks > 0);
  t.teardown(stop);
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(checks, 0);
});
