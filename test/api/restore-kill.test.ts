// SIGKILL while a restore writes the configuration: after it the database holds the configuration entirely as it was
// or entirely as restored, intact, and the next restore removes the staging file the killed one left.

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { bigPlaylistId, fillPlaylists } from '../helpers/big-state.js';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { startedDaemon } from '../helpers/process.js';
import { WAIT_MS, waitFor } from '../helpers/wait-for.js';

/** Playlists before the restore, and in the backup it restores; each with TRACKS tracks. */
const OLD = 20;
const NEW = 30;
const TRACKS = 1000;
const KILLS = 3;

/** The playlists and tracks in the database, and its integrity check. */
function inspect(stateDir: string): { playlists: number; tracks: number; integrity: unknown } {
  const db = new Database(path.join(stateDir, 'azc.db'));
  try {
    const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return {
      playlists: count('playlists'),
      tracks: count('tracks'),
      integrity: db.pragma('integrity_check', { simple: true }),
    };
  } finally {
    db.close();
  }
}

/** Takes the (stopped) daemon's database back to the OLD playlists. */
function backToOld(stateDir: string): void {
  const db = new Database(path.join(stateDir, 'azc.db'));
  try {
    db.pragma('foreign_keys = ON'); // their tracks go with them
    const drop = db.prepare('DELETE FROM playlists WHERE id = ?');
    db.transaction(() => {
      for (let p = OLD; p < NEW; p++) drop.run(bigPlaylistId(p));
    })();
  } finally {
    db.close();
  }
}

const stagingFiles = (stateDir: string) => readdirSync(stateDir).filter((name) => name.startsWith('restore-staging-'));

t.test(
  'a restore killed while it writes leaves the configuration entirely as it was or entirely restored',
  async (t) => {
    const stateDir = tempDir('azc-restore-kill-');
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const args = ['--state-dir', stateDir, '--log-level', 'warn'];
    const start = () => startedDaemon(t, { args });

    let daemon = await start();
    const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
    await daemon.stop('SIGTERM');
    const db = new Database(path.join(stateDir, 'azc.db'));
    fillPlaylists(db, NEW, TRACKS);
    db.close();
    daemon = await start();
    const backup = await client(daemon.base, key).get('/api/backup');
    t.equal(backup.status, 200);
    const body = `{"backup":${backup.text}}`;
    await daemon.stop('SIGTERM');

    const outcomes: string[] = [];
    for (let round = 0; round < KILLS; round++) {
      backToOld(stateDir);
      daemon = await start();
      const api = client(daemon.base, key);
      let answered = false;
      const restore = fetch(`${daemon.base}/api/restore`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      }).then(
        (res) => {
          answered = true;
          return res.status;
        },
        () => 'killed',
      );
      // The kill lands after a random number of 503s: somewhere in the transaction, or after it.
      const busyAnswers = Math.floor(Math.random() * 12);
      let busy = 0;
      await waitFor(
        async () => answered || ((await api.get('/api/users/me')).status === 503 && ++busy > busyAnswers),
        3 * WAIT_MS,
        {
          what: `${busyAnswers} answers of 503 while the restore writes`,
        },
      );
      await daemon.stop('SIGKILL');
      await restore;
      const after = inspect(stateDir);
      t.equal(after.integrity, 'ok', `kill ${round + 1}: PRAGMA integrity_check passes`);
      const old = after.playlists === OLD && after.tracks === OLD * TRACKS;
      const restored = after.playlists === NEW && after.tracks === NEW * TRACKS;
      t.ok(
        old || restored,
        `kill ${round + 1} (after ${busy} answers of 503): ${after.playlists} playlists, ${after.tracks} tracks`,
      );
      outcomes.push(restored ? 'restored' : 'as it was');
    }
    t.comment(`outcomes: ${outcomes.join(', ')}`);

    backToOld(stateDir);
    daemon = await start();
    const res = await client(daemon.base, key).post('/api/restore', JSON.parse(body));
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.match(res.body, { restored: { playlists: NEW, tracks: NEW * TRACKS } });
    await waitFor(() => stagingFiles(stateDir).length === 0, WAIT_MS, { what: 'the staging files to be removed' });
    t.same(stagingFiles(stateDir), [], 'no staging file is left beside the database, the killed restores’ included');
    t.equal((await daemon.stop('SIGTERM')).code, 0, 'the daemon stops cleanly');
  },
);
