// One daemon per address and per state folder: a second one stops at once with one line naming what is taken.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { type AzcdProcess, runAzcd, startedDaemon } from '../helpers/process.js';
import { within } from '../helpers/wait-for.js';

/** A daemon expected to refuse to start: its exit and its whole stderr. */
async function refused(azcd: AzcdProcess): Promise<{ code: number | null; lines: string[] }> {
  const { code } = await within(azcd.exited, undefined, 'the second daemon to exit');
  return { code, lines: azcd.stderr().trim().split('\n') };
}

const second = (args: string[]) => runAzcd({ args: ['--host', '127.0.0.1', '--log-level', 'warn', ...args] });

t.test(
  'a second daemon on the state folder of a running one exits at once, naming the folder and the other process',
  async (t) => {
    const stateDir = tempDir('azc-lock-');
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
    const other = second(['--port', '0', '--state-dir', stateDir]);
    t.teardown(() => other.stop('SIGKILL'));
    const { code, lines } = await refused(other);
    t.equal(code, 1, 'a non-zero exit');
    t.equal(lines.length, 1, `one line: ${lines.join(' | ')}`);
    t.match(lines[0], `azcd: cannot start: the state folder ${stateDir} is in use`);
    t.match(lines[0], `pid ${first.child.pid}`, 'the process holding it');
    t.match(lines[0], /--state-dir/, 'and how to run a second one');
    t.notMatch(other.stdout(), /listening/, 'it never listened');
    t.equal((await client(first.base).get('/api/health')).status, 200, 'the first one runs on');
  },
);

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
  for (let i = 0; i < 10; i++)
    t.equal(
      (await client(first.base, key).get('/api/users/me')).status,
      200,
      `request ${i + 1} reached the first daemon`,
    );
});

t.test('a daemon killed without a chance to clean up leaves no lock: the next one starts', async (t) => {
  const stateDir = tempDir('azc-lock-kill-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const killed = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  t.same(await killed.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
  const next = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  t.equal((await client(next.base).get('/api/health')).status, 200);
});
