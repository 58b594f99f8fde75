// One daemon per address and per state directory: a second one stops at once with one line naming what is taken.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/daemon.js';
import { client } from '../helpers/client.js';
import { runAzcd, startedDaemon, type AzcdProcess } from '../helpers/process.js';
import { within } from '../helpers/wait-for.js';

/** A daemon expected to refuse to start: its exit and its whole stderr. */
async function refused(azcd: AzcdProcess): Promise<{ code: number | null; lines: string[] }> {
  const { code } = await within(azcd.exited, undefined, 'the second daemon to exit');
  return { code, lines: azcd.stderr().trim().split('\n') };
}

const second = (args: string[]) => runAzcd({ args: ['--host', '127.0.0.1', '--log-level', 'warn', ...args] });

t.test('a second daemon on the state directory of a running one exits at once, naming the directory and the other process', async (t) => {
  const stateDir = tempDir('azc-lock-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  const other = second(['--port', '0', '--state-dir', stateDir]);
  t.teardown(() => other.stop('SIGKILL'));
  const { code, lines } = await refused(other);
  t.equal(code, 1, 'a non-zero exit');
  t.equal(lines.length, 1, `one line: ${lines.join(' | ')}`);
  t.match(lines[0], `the state directory ${stateDir} is in use`);
  t.match(lines[0], `pid ${first.child.pid}`, 'the process holding it');
  t.match(lines[0], /--state-dir/, 'and how to run a second one');
  t.notMatch(other.stdout(), /listening/, 'it never listened');
  t.equal((await client(first.base).get('/api/health')).status, 200, 'the first one runs on');
});

t.test('a second daemon on an address in use exits at once, naming the address', async (t) => {
  const [dirA, dirB] = [tempDir('azc-port-a-'), tempDir('azc-port-b-')];
  t.teardown(() => [dirA, dirB].forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const first = await startedDaemon(t, { args: ['--state-dir', dirA, '--log-level', 'warn'] });
  const other = second(['--port', String(first.port), '--state-dir', dirB]);
  t.teardown(() => other.stop('SIGKILL'));
  const { code, lines } = await refused(other);
  t.equal(code, 1, 'a non-zero exit');
  t.equal(lines.length, 1, `one line: ${lines.join(' | ')}`);
  t.match(lines[0], `cannot listen on 127.0.0.1:${first.port}: the address is in use`);
  t.match(lines[0], /--port/, 'and how to run a second one');
  t.notMatch(other.stdout(), /listening/, 'it never said it listened');
  // Every connection goes to the first daemon: its admin key works, which the second one's database would not know.
  const key = /apiKey=(\S+)/.exec(readFileSync(path.join(dirA, 'initial-admin.txt'), 'utf8'))![1]!;
  for (let i = 0; i < 10; i++) t.equal((await client(first.base, key).get('/api/users/me')).status, 200, `request ${i + 1} reached the first daemon`);
});

t.test('a daemon killed without a chance to clean up leaves no lock: the next one starts', async (t) => {
  const stateDir = tempDir('azc-lock-kill-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const killed = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  t.same(await killed.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
  const next = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  t.equal((await client(next.base).get('/api/health')).status, 200);
});

t.test('a state directory the daemon may not write is named with the fix, in one line', { skip: process.getuid?.() !== 0 && 'needs root to run the daemon as another user' }, async (t) => {
  const parent = tempDir('azc-perm-');
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const stateDir = path.join(parent, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  chmodSync(parent, 0o755);
  // Owned by root, 0700: the user nobody may not enter it.
  const other = runAzcd({
    args: ['--host', '127.0.0.1', '--port', '0', '--state-dir', stateDir],
    // Through env -u: the test runner adds hooks to NODE_OPTIONS that write under the repository, which nobody may not.
    spawner: (command, args, options) =>
      spawn('env', ['-u', 'NODE_OPTIONS', command, ...args], { ...options, uid: 65534, gid: 65534, env: { ...options.env, HOME: parent } }),
  });
  t.teardown(() => other.stop('SIGKILL'));
  const { code, lines } = await refused(other);
  t.equal(code, 1);
  t.equal(lines.length, 1, `one line: ${lines.join(' | ')}`);
  t.match(lines[0], `cannot use the state directory ${stateDir}: permission denied`);
  t.match(lines[0], /--state-dir/);
});
