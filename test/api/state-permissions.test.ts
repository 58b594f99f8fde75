// The state directory stays private whatever the umask: every folder 0700, every file 0600 (database, WAL, key,
// first-admin file, exports), also when an older install left wider modes behind.
import t from 'tap';
import { chmodSync, existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startDaemon, tempDir, type TestDaemon } from '../helpers/daemon.js';
import { client, createUser } from '../helpers/client.js';

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
  if ((await client(base).post('/api/auth/login', { username: 'admin', password: adminPassword })).status !== 200) throw new Error('login failed');
  if ((await api.put(`/api/users/${user.id}/password`, { newPassword: 'another-password-1' })).status !== 200) throw new Error('password change failed');
  const playlist = await api.post('/api/playlists', { name: 'Private', tracks: [{ title: 'A', uri: 'http://192.0.2.1/a.mp3' }] });
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
    t.ok(seen.some((line) => line.startsWith(`${name} `)), `control: ${name} exists`);
  }
  t.ok(seen.includes('exports/ 700'), 'the exports folder is 0700');
  t.same(seen.filter((line) => !isPrivate(line)), [], 'nothing is readable by group or others');
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
  t.ok(modes(stateDir).some((line) => !isPrivate(line)), 'control: the modes are wide before the start');

  const second = await startDaemon({ stateDir });
  t.teardown(async () => {
    await second.stop();
    rmSync(parent, { recursive: true, force: true });
  });
  const api = client(second.base, second.adminKey);
  t.equal((await api.get('/api/users/me')).status, 200, 'the daemon works on the tightened files');
  t.same(modes(stateDir).filter((line) => !isPrivate(line)), []);
});
