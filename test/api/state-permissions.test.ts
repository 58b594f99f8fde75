// The state directory stays private whatever the umask: every folder 0700, every file 0600 (database, WAL, key,
// first-admin file, exports), also when an older install left wider modes behind.

import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { client, createUser } from '../helpers/client.js';
import { startDaemon, type TestDaemon, tempDir } from '../helpers/daemon.js';
import { runAzcd } from '../helpers/process.js';
import { within } from '../helpers/wait-for.js';

/** Every folder and file under `root` (itself included) with its permission bits, as "relative/path mode". */
function modes(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    out.push(`${path.relative(root, dir) || '.'}/ ${(lstatSync(dir).mode & 0o777).toString(8)}`);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(`${path.relative(root, full)} ${(lstatSync(full).mode & 0o777).toString(8)}`);
    }
  };
  walk(root);
  return out.sort();
}

const isPrivate = (line: string) => (line.includes('/ ') ? line.endsWith(' 700') : line.endsWith(' 600'));

/** Runs the daemon with a 022 umask (the usual one outside systemd) and restores the previous umask afterwards. */
function withUmask022(t: { teardown(fn: () => unknown): void }): void {
  const previous = process.umask(0o022);
  t.teardown(() => void process.umask(previous));
}

/** Creates users, sessions, a password change and an export, so every kind of state file gets written. */
async function exercise({ base, adminKey, adminPassword }: TestDaemon): Promise<void> {
  const api = client(base, adminKey);
  const user = await createUser(api, `user-${Date.now()}`, 'Operator');
  if ((await client(base).post('/api/auth/login', { username: 'admin', password: adminPassword })).status !== 200)
    throw new Error('login failed');
  if ((await api.put(`/api/users/${user.id}/password`, { newPassword: 'another-password-1' })).status !== 200)
    throw new Error('password change failed');
  const playlist = await api.post('/api/playlists', {
    name: 'Private',
    tracks: [{ title: 'A', uri: 'http://192.0.2.1/a.mp3' }],
  });
  if (playlist.status !== 201) throw new Error(`playlist failed: ${playlist.text}`);
  const exported = await api.post(`/api/playlists/${playlist.body.id}/export`, { filePath: 'rooms/evening.m3u8' });
  if (exported.status !== 204) throw new Error(`export failed: ${exported.text}`);
}

t.test('with a 022 umask a fresh state directory is 0700 and every file in it 0600', async (t) => {
  withUmask022(t);
  const parent = tempDir();
  const stateDir = path.join(parent, 'state');
  const d = await startDaemon({ stateDir });
  t.teardown(async () => {
    await d.stop();
    rmSync(parent, { recursive: true, force: true });
  });
  await exercise(d);

  const seen = modes(stateDir);
  // No azc.db-shm: the daemon holds the database alone and keeps the WAL index in memory.
  for (const name of ['azc.db', 'azc.db-wal', 'device.key', 'initial-admin.txt', 'exports/rooms/evening.m3u8']) {
    t.ok(
      seen.some((line) => line.startsWith(`${name} `)),
      `control: ${name} exists`,
    );
  }
  t.ok(seen.includes('exports/ 700'), 'the exports folder is 0700');
  t.same(
    seen.filter((line) => !isPrivate(line)),
    [],
    'nothing is readable by group or others',
  );
});

t.test('a state directory left with wider modes is made private at start', async (t) => {
  withUmask022(t);
  const parent = tempDir();
  const stateDir = path.join(parent, 'state');
  const first = await startDaemon({ stateDir });
  await first.stop();
  chmodSync(stateDir, 0o755);
  for (const name of ['azc.db', 'azc.db-wal', 'azc.db-shm', 'device.key']) {
    const file = path.join(stateDir, name);
    if (existsSync(file)) chmodSync(file, 0o644);
  }
  t.ok(
    modes(stateDir).some((line) => !isPrivate(line)),
    'control: the modes are wide before the start',
  );

  const second = await startDaemon({ stateDir });
  t.teardown(async () => {
    await second.stop();
    rmSync(parent, { recursive: true, force: true });
  });
  const api = client(second.base, second.adminKey);
  t.equal((await api.get('/api/users/me')).status, 200, 'the daemon works on the tightened files');
  t.same(
    modes(stateDir).filter((line) => !isPrivate(line)),
    [],
  );
});

t.test(
  'everything found in an existing state folder is made private at start, the first-admin file and copies included',
  async (t) => {
    withUmask022(t);
    const parent = tempDir();
    const stateDir = path.join(parent, 'state');
    const first = await startDaemon({ stateDir });
    await first.stop();
    // What an older version, a restore by hand or a 022 umask leaves behind.
    chmodSync(path.join(stateDir, 'initial-admin.txt'), 0o644);
    for (const folder of ['backups', 'exports', 'exports/rooms']) {
      mkdirSync(path.join(stateDir, folder), { recursive: true });
      chmodSync(path.join(stateDir, folder), 0o777);
    }
    writeFileSync(path.join(stateDir, 'backups', 'pre-restore-old.sqlite3'), 'x', { mode: 0o666 });
    writeFileSync(path.join(stateDir, 'exports', 'rooms', 'old.m3u8'), '#EXTM3U\n', { mode: 0o644 });
    writeFileSync(path.join(stateDir, 'notes.txt'), 'anything', { mode: 0o755 });
    const outside = path.join(parent, 'outside.txt');
    writeFileSync(outside, 'not ours', { mode: 0o644 });
    symlinkSync(outside, path.join(stateDir, 'link-to-outside'));
    t.ok(
      modes(stateDir)
        .filter((line) => !line.startsWith('link-to-outside'))
        .some((line) => !isPrivate(line)),
      'control: wide modes before the start',
    );

    const second = await startDaemon({ stateDir });
    t.teardown(async () => {
      await second.stop();
      rmSync(parent, { recursive: true, force: true });
    });
    t.same(
      modes(stateDir).filter((line) => !line.startsWith('link-to-outside') && !isPrivate(line)),
      [],
      'every folder 0700, every file 0600',
    );
    t.equal(lstatSync(outside).mode & 0o777, 0o644, 'a symbolic link is not followed out of the state folder');
  },
);

/** Starts azcd on `stateDir` (as `uid` when given) and resolves with its exit and standard error once it stopped. */
async function failedStart(
  t: { teardown(fn: () => unknown): void },
  stateDir: string,
  uid?: number,
): Promise<{ code: number | null; stderr: string }> {
  const azcd = runAzcd({
    args: ['--host', '127.0.0.1', '--port', '0', '--state-dir', stateDir],
    ...(uid === undefined
      ? {}
      : {
          // Without the test runner's hook (it patches spawn to add it), which would write its records as that user and fail.
          // CAP_DAC_READ_SEARCH (kept across the change of user as an ambient capability) lets that user read the
          // daemon's code wherever the clone lives — a 0700 home, a `mktemp -d` folder — and grants no write, so the
          // state folder's checks see what an unprivileged user sees. no_setuid_fixup keeps it for access(2) too,
          // which node's existsSync calls.
          spawner: (command, args, options) =>
            spawn(
              'setpriv',
              [
                `--reuid=${uid}`,
                `--regid=${uid}`,
                '--clear-groups',
                '--inh-caps=+dac_read_search',
                '--ambient-caps=+dac_read_search',
                '--securebits=+no_setuid_fixup',
                'env',
                '-u',
                'NODE_OPTIONS',
                command,
                ...args,
              ],
              options,
            ),
        }),
  });
  t.teardown(() => azcd.stop('SIGKILL'));
  const { code } = await within(azcd.exited, undefined, 'azcd to give up on the state folder');
  return { code, stderr: azcd.stderr() };
}

/** One line, naming the folder and how to fix it, and no stack trace or bare error code. */
function oneClearLine(t: Test, stderr: string, stateDir: string, reason: RegExp): void {
  const lines = stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line: ${stderr}`);
  t.match(lines[0], /^azcd: cannot start: the state folder /);
  t.ok(lines[0]!.includes(stateDir), 'it names the folder');
  t.match(lines[0], reason);
  t.match(lines[0], /--state-dir/, 'it says how to choose another');
  t.notMatch(stderr, /\n\s+at |EPERM|EACCES|ENOENT/, 'no stack and no bare error code');
}

t.test('a state folder that cannot hold the state stops the start at once with one clear line', async (t) => {
  const parent = tempDir();
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const file = path.join(parent, 'a-file');
  writeFileSync(file, 'in the way');
  const cases: Array<[string, string, RegExp, number?]> = [
    ['under /proc', '/proc/azcd-state', /kernel's proc file system/],
    ['a file in the way', path.join(file, 'state'), /is a file, not a folder/],
    ['the folder is a file', file, /is a file, not a folder/],
  ];
  // Root may write anywhere: an unprivileged user shows what a folder it may not write does.
  const locked = path.join(parent, 'locked');
  mkdirSync(locked, { mode: 0o755 });
  chmodSync(parent, 0o755);
  cases.push(['a folder the daemon may not write', locked, /is not writable: permission denied.*uid 65534/, 65534]);
  cases.push([
    'a folder the daemon may not create',
    path.join(locked, 'state'),
    /cannot be created in .*locked: permission denied/,
    65534,
  ]);
  for (const [what, stateDir, reason, uid] of cases) {
    const { code, stderr } = await failedStart(t, stateDir, uid);
    t.equal(code, 1, `${what}: exits 1`);
    oneClearLine(t, stderr, stateDir, reason);
  }
});
