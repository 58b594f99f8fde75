// Stream players as resources: made, changed and deleted by admins, each with its own MPD (private folder, started,
// restarted on a new output, stopped with its player), kept across restarts and backups, and restarted by the daemon
// when MPD dies.

import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { concurrently } from '../helpers/concurrency.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { waitFor } from '../helpers/wait-for.js';

concurrently(t, 3);
const music = musicFolder(t);
const file = (track: string) => `file:${track}`;

/** The pid of a player's running mpd, from the pid file the engine keeps. */
function mpdPid(stateDir: string, playerId: string): number | undefined {
  try {
    return Number(readFileSync(path.join(stateDir, 'players', playerId, 'mpd.pid'), 'utf8').trim());
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('an admin makes a stream player: it shows its output, and its own MPD runs in a private folder', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Kitchen stream', 1);
  const view = (await rig.api.get(`/api/players/${player.id}`)).body;
  t.match(view, {
    name: 'Kitchen stream',
    input: { channel: 1 },
    output: { kind: 'fifo', path: player.fifo },
    state: 'idle',
  });
  const folder = path.join(rig.d.stateDir, 'players', player.id);
  t.equal(statSync(folder).mode & 0o777, 0o700, 'its folder is private');
  t.match(
    readFileSync(path.join(folder, 'mpd.conf'), 'utf8'),
    new RegExp(`path "${player.fifo}"`),
    'its MPD writes to the FIFO',
  );
  const pid = mpdPid(rig.d.stateDir, player.id);
  t.ok(pid && alive(pid), 'its mpd runs');
  t.match((await rig.api.get(`/api/players/${player.id}/playback`)).body, {
    playerId: player.id,
    engine: { state: 'up', detail: null },
    state: 'stopped',
    queueLength: 0,
  });
});

t.test(
  'outputs are checked: kinds default from the settings, a FIFO needs an absolute path, and one output feeds one player',
  async (t) => {
    const rig = await startStreamDaemon(t, { music, playback: { defaultOutput: 'null' } });
    const { api } = rig;
    const quiet = await api.post('/api/players', { name: 'Quiet', input: { channel: 1 }, output: {} });
    t.equal(quiet.status, 201);
    t.same(quiet.body.output, { kind: 'null' }, 'the kind of playback.defaultOutput');
    const alsa = await api.post('/api/players', { name: 'DAC', input: { channel: 2 }, output: { kind: 'alsa' } });
    t.same(alsa.body.output, { kind: 'alsa', device: 'default' }, 'ALSA\'s "default" device unless one is named');
    const fifo = (await rig.fifoPlayer('Snapcast', 3)).fifo;
    const cases: Array<[string, unknown, number, string, RegExp]> = [
      ['a FIFO without a path', { kind: 'fifo' }, 400, 'output.path', /absolute path of its FIFO/],
      ['a relative FIFO path', { kind: 'fifo', path: 'snap.pcm' }, 400, 'output.path', /must be an absolute path/],
      ['a FIFO path that climbs', { kind: 'fifo', path: '/run/../etc/x' }, 400, 'output.path', /must not climb/],
      [
        'a device with a quote',
        { kind: 'alsa', device: 'hw:"0"' },
        400,
        'output.device',
        /control characters, quotes or backslashes/,
      ],
      ['an unknown kind', { kind: 'pipe', path: '/bin/sh' }, 400, 'output', /must be null or an object/],
    ];
    for (const [what, output, status, field, message] of cases) {
      const res = await api.post('/api/players', { name: 'X', input: { channel: 4 }, output });
      t.equal(res.status, status, what);
      t.match(
        res.body.errors?.[field] ?? res.body.errors?.['output.kind'] ?? [],
        [message],
        `${what}: named by its field`,
      );
    }
    const twice = await api.post('/api/players', {
      name: 'Twice',
      input: { channel: 4 },
      output: { kind: 'fifo', path: fifo },
    });
    t.equal(twice.status, 409, 'a FIFO that carries another player');
    t.match(twice.body.detail, /already carries player "Snapcast"/);
    const dac = await api.post('/api/players', {
      name: 'DAC 2',
      input: { channel: 4 },
      output: { kind: 'alsa', device: 'default' },
    });
    t.equal(dac.status, 409, 'an ALSA device that carries another player');
    t.equal(
      (await api.post('/api/players', { name: 'Also quiet', input: { channel: 4 }, output: { kind: 'null' } })).status,
      201,
      'any number play nowhere',
    );
    t.equal((await api.get('/api/players')).body.length, 4, 'nothing refused was made');
  },
);

t.test('only admins make stream players or change their outputs', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const player = (await api.post('/api/players', { name: 'Wired', input: { channel: 1 } })).body;
  const operator = injectClient(
    d.daemon,
    (await createUser(api, 'operator1', 'Operator', { playerIds: [player.id], zoneIds: [] })).apiKey,
  );
  t.equal(
    (await operator.post('/api/players', { name: 'Mine', input: { channel: 2 }, output: { kind: 'null' } })).status,
    403,
  );
  t.equal((await operator.put(`/api/players/${player.id}`, { output: { kind: 'null' } })).status, 403);
  t.equal((await api.put(`/api/players/${player.id}`, {})).status, 400, 'a change naming nothing');
});

t.test('a new output restarts the player on it; null makes it a wired player again and stops its MPD', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const first = await rig.fifoPlayer('Den stream', 1);
  const spare = await rig.fifoPlayer('Spare', 2);
  t.equal((await rig.api.del(`/api/players/${spare.id}`)).status, 204, 'its FIFO is free again');
  const before = mpdPid(rig.d.stateDir, first.id)!;
  const changed = await rig.api.put(`/api/players/${first.id}`, { output: { kind: 'fifo', path: spare.fifo } });
  t.equal(changed.status, 200);
  t.same(changed.body.output, { kind: 'fifo', path: spare.fifo });
  await rig.until(
    first.id,
    (p) => p.engine.state === 'up' && mpdPid(rig.d.stateDir, first.id) !== before,
    'a new MPD on the new output',
  );
  t.notOk(alive(before), 'the MPD of the old output is gone');
  const reader = spare.reader();
  await rig.api.post(`/api/players/${first.id}/play`, { uri: file(TRACKS.long) });
  await reader.receive(44_100, 'PCM on the new FIFO');
  const now = mpdPid(rig.d.stateDir, first.id)!;
  const plain = await rig.api.put(`/api/players/${first.id}`, { output: null });
  t.match(plain.body, { output: null, state: 'idle' });
  await waitFor(() => !alive(now), undefined, { what: 'its MPD to stop' });
  t.equal((await rig.api.get(`/api/players/${first.id}/playback`)).status, 409, 'no playback for a wired player');
});

t.test('deleting a stream player stops its MPD and removes its folder', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Doomed', 1);
  const pid = mpdPid(rig.d.stateDir, player.id)!;
  const folder = path.join(rig.d.stateDir, 'players', player.id);
  t.equal((await rig.api.del(`/api/players/${player.id}`)).status, 204);
  await waitFor(() => !alive(pid) && !existsSync(folder), undefined, { what: 'its MPD and folder to go' });
  t.pass('gone');
});

t.test('stream players come back with the daemon, and with a restored backup', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Kept', 1);
  const backup = (await rig.api.post('/api/backup', { passphrase: 'a long passphrase' })).body;
  t.same(
    backup.players.find((p: { id: string }) => p.id === player.id).output,
    { kind: 'fifo', path: player.fifo },
    'the backup carries the output',
  );
  await rig.d.stop();
  const again = await startStreamDaemon(t, { music, stateDir: rig.d.stateDir });
  await again.until(player.id, (p) => p.engine.state === 'up', 'its MPD after the restart');

  const fresh = await startStreamDaemon(t, { music });
  const restored = await fresh.api.post('/api/restore', { backup, passphrase: 'a long passphrase' });
  t.equal(restored.status, 200, restored.text);
  // The restored admin is the backup's, with its key.
  const restoredAdmin = injectClient(fresh.d.daemon, rig.d.adminKey);
  t.match((await restoredAdmin.get(`/api/players/${player.id}`)).body, { output: { kind: 'fifo', path: player.fifo } });
  await waitFor(
    async () => (await restoredAdmin.get(`/api/players/${player.id}/playback`)).body.engine.state === 'up',
    undefined,
    { what: 'its MPD after the restore' },
  );
});

t.test('an MPD that dies is restarted by the daemon, and the playback comes back where it was', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const player = await rig.fifoPlayer('Phoenix', 1);
  const reader = player.reader();
  await rig.api.post(`/api/players/${player.id}/play`, { uri: file(TRACKS.long) });
  await rig.api.post(`/api/players/${player.id}/seek`, { positionMs: 10_000 });
  await reader.receive(44_100, 'PCM before');
  const from = rig.events.length;
  process.kill(mpdPid(rig.d.stateDir, player.id)!, 'SIGKILL');
  const down = await rig.next(
    'player.engineChanged',
    (e) => e.payload.playerId === player.id && e.payload.engine.state === 'restarting',
    from,
  );
  t.match(down.payload.engine.detail, /mpd was killed by SIGKILL/);
  const up = await rig.next(
    'player.engineChanged',
    (e) => e.payload.playerId === player.id && e.payload.engine.state === 'up',
    from,
  );
  t.equal(up.payload.recovery, 'restored');
  const playback = await rig.until(player.id, (p) => p.state === 'playing', 'playing again');
  t.ok(playback.positionMs >= 10_000, `it goes on from where it was (${playback.positionMs} ms)`);
  await reader.receive(44_100, 'PCM after');
});

t.test('without MPD the daemon runs, and making a stream player says what to install', async (t) => {
  const rig = await startStreamDaemon(t, { music, playback: { mpdPath: 'mpd-that-is-not-installed' } });
  const refused = await rig.api.post('/api/players', {
    name: 'Stream',
    input: { channel: 1 },
    output: { kind: 'null' },
  });
  t.equal(refused.status, 409);
  t.match(refused.body.detail, /MPD is not installed.*apt-get install mpd/);
  const wired = await rig.api.post('/api/players', { name: 'Wired', input: { channel: 1 } });
  t.equal(wired.status, 201, 'a player wired to its input is made as before');
  t.equal((await rig.api.put(`/api/players/${wired.body.id}`, { output: { kind: 'null' } })).status, 409);
  t.match((await rig.api.get('/api/library')).body.detail, /read by the MPD of a stream player, and there is none/);
});
