// SIGKILL during a stream of acknowledged writes: after a restart every acknowledged write is there
// and the database is intact.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { startedDaemon } from '../helpers/process.js';
import { WAIT_MS, waitFor } from '../helpers/wait-for.js';

/** How long the writes before the kill may take: about 50 scrypt hashes at N=16384, on a busy machine. */
const WRITES_WAIT_MS = 3 * WAIT_MS;

t.test('acknowledged writes survive SIGKILL', async (t) => {
  const stateDir = tempDir('azc-crash-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  const api = client(first.base, key);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const player = (await api.post('/api/players', { name: 'Crash', input: { channel: 1 } })).body;
  // Volumes go to a player without zones: its volume is then exactly the last one set (with zones it is their average).
  const volumePlayer = (await api.post('/api/players', { name: 'Crash volume', input: { channel: 2 } })).body;
  const playlist = (await api.post('/api/playlists', { name: 'Crash list' })).body;

  // What the daemon acknowledged, and the one write that may be in flight when the kill lands.
  const acked = { volume: 0.3, attached: new Set<string>(), tracks: [] as string[], users: [] as string[] };
  let inFlightVolume: number | undefined;
  let inFlightTitle: string | undefined;
  let inFlightUser: string | undefined;
  let inFlightRoute: { zone: string; attach: boolean } | undefined;
  let writes = 0;
  const killAfter = 120 + Math.floor(Math.random() * 80);
  let killed = false;
  let writerDone = false;
  const writer = (async () => {
    for (let i = 0; i < 2000 && !killed; i++) {
      try {
        switch (i % 4) {
          case 0: {
            inFlightVolume = Math.round(Math.random() * 100) / 100;
            const res = await api.put(`/api/players/${volumePlayer.id}/volume`, { volume: inFlightVolume });
            if (res.status === 204) acked.volume = inFlightVolume;
            break;
          }
          case 1: {
            const zone = zones[i % zones.length]!.id;
            const attach = !acked.attached.has(zone);
            inFlightRoute = { zone, attach };
            const res = await api.post(`/api/players/${player.id}/${attach ? 'attach' : 'detach'}-zones`, {
              zoneIds: [zone],
            });
            if (res.status === 204) attach ? acked.attached.add(zone) : acked.attached.delete(zone);
            break;
          }
          case 2: {
            inFlightTitle = `track ${i}`;
            const res = await api.post(`/api/playlists/${playlist.id}/tracks`, {
              tracks: [{ title: inFlightTitle, uri: `u:${i}` }],
            });
            if (res.status === 200) acked.tracks.push(inFlightTitle);
            break;
          }
          default: {
            inFlightUser = `user${i}`;
            const res = await api.post('/api/users', {
              username: inFlightUser,
              password: 'password-123',
              role: 'Viewer',
            });
            if (res.status === 201) acked.users.push(inFlightUser);
          }
        }
        writes++;
      } catch {
        return; // the connection died with the daemon
      }
    }
  })().finally(() => (writerDone = true));
  // A quarter of the writes create a user, each a scrypt hash at the daemon's own cost: on a loaded 2-core machine
  // that alone can take tens of seconds (hence WRITES_WAIT_MS, within the file's 120 s); a writer that stops early
  // ends the wait at once.
  await waitFor(() => writes >= killAfter || writerDone, WRITES_WAIT_MS, { what: `${killAfter} acknowledged writes` });
  killed = true;
  await first.stop('SIGKILL');
  await writer;
  t.ok(writes >= killAfter, `${writes} writes acknowledged before the kill`);

  const db = new Database(path.join(stateDir, 'azc.db'));
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'PRAGMA integrity_check passes');
  db.close();

  const second = await startedDaemon(t, { args: ['--state-dir', stateDir, '--log-level', 'warn'] });
  const again = client(second.base, key);
  const stored = (await again.get(`/api/players/${volumePlayer.id}`)).body;
  t.ok(
    stored.volume === acked.volume || stored.volume === inFlightVolume,
    `volume ${stored.volume} is the last acknowledged one (${acked.volume})`,
  );
  const withInFlight = new Set(acked.attached);
  if (inFlightRoute)
    inFlightRoute.attach ? withInFlight.add(inFlightRoute.zone) : withInFlight.delete(inFlightRoute.zone);
  const routing = [...(await again.get(`/api/players/${player.id}`)).body.zoneIds].sort().join();
  t.ok(
    routing === [...acked.attached].sort().join() || routing === [...withInFlight].sort().join(),
    'routing is the last acknowledged routing',
  );
  const titles = (await again.get(`/api/playlists/${playlist.id}`)).body.tracks.map((x: { title: string }) => x.title);
  t.same(titles.slice(0, acked.tracks.length), acked.tracks, 'every acknowledged track is there, in order');
  t.ok(
    titles.length === acked.tracks.length ||
      (titles.length === acked.tracks.length + 1 && titles.at(-1) === inFlightTitle),
  );
  const usernames = new Set((await again.get('/api/users')).body.map((u: { username: string }) => u.username));
  t.ok(
    acked.users.every((u) => usernames.has(u)),
    `all ${acked.users.length} acknowledged users exist`,
  );
  t.ok(
    usernames.size === acked.users.length + 1 ||
      (usernames.size === acked.users.length + 2 && usernames.has(inFlightUser)),
  );
  t.equal((await second.stop('SIGTERM')).code, 0, 'the restarted daemon stops cleanly');
});
