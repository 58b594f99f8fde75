// A daemon killed with SIGKILL takes its MPDs with it: each mpd is started with a parent-death signal, so a crash
// does not leave a stream player playing into the rooms until the next start.

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD, musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { startedDaemon } from '../helpers/process.js';
import { waitFor } from '../helpers/wait-for.js';

/** Whether `pid` is a live process (a zombie waiting for its reaper counts as gone: it no longer plays). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

t.test('a daemon killed with SIGKILL while a stream player plays leaves no mpd behind', async (t) => {
  const stateDir = tempDir('azc-pdeath-');
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const music = musicFolder(t);
  const daemon = await startedDaemon(t, {
    args: ['--state-dir', stateDir, '--log-level', 'warn', '--playback-music-dir', music, '--playback-mpd-path', MPD],
  });
  const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  const api = client(daemon.base, key);
  const created = await api.post('/api/players', {
    name: 'Kitchen stream',
    input: { channel: 1 },
    output: { kind: 'null' },
  });
  t.equal(created.status, 201);
  const id = created.body.id as string;
  await waitFor(async () => (await api.get(`/api/players/${id}/playback`)).body.engine?.state === 'up', undefined, {
    what: 'the MPD to be up',
  });
  t.equal((await api.post(`/api/players/${id}/play`, { uri: `file:${TRACKS.long}` })).status, 200);
  await waitFor(async () => (await api.get(`/api/players/${id}/playback`)).body.state === 'playing', undefined, {
    what: 'the player to play',
  });
  const mpd = Number(readFileSync(path.join(stateDir, 'players', id, 'mpd.pid'), 'utf8'));
  t.ok(alive(mpd), `its mpd (${mpd}) runs`);
  // Whatever happens below, no mpd of this test outlives it.
  t.teardown(() => {
    if (alive(mpd)) process.kill(mpd, 'SIGKILL');
  });

  t.same(await daemon.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
  await waitFor(() => !alive(mpd), undefined, { what: `mpd ${mpd} to exit after its daemon was killed` });
  t.pass('the mpd exited with its daemon');
});
