// The daemon on a machine without MPD: it starts as before, and making a stream player answers 409 with what to install.
// MPD is hidden from the child process by a private mount namespace (its program covered by /dev/null) and a PATH
// without it, so nothing of the machine's own mpd can be found; where namespaces cannot be made here, the child is
// pointed at a program name that does not exist instead, and the test says so.

import { type SpawnOptions, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD } from '../helpers/mpd-rig.js';
import { startedDaemon } from '../helpers/process.js';

/** Whether this process may make a mount namespace and cover a file in it (root, or CAP_SYS_ADMIN). */
function canHideMpd(): boolean {
  const probe = spawnSync('/usr/bin/unshare', [
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    `/usr/bin/mount --bind /dev/null ${MPD} && ! test -x ${MPD}`,
  ]);
  return probe.status === 0;
}

/** Runs the command in a mount namespace of its own where MPD's program is /dev/null (not executable). */
function withoutMpd(command: string, args: string[], options: SpawnOptions) {
  return spawn(
    '/usr/bin/unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      '/usr/bin/mount --bind /dev/null "$0" && exec "$@"',
      MPD,
      command,
      ...args,
    ],
    options,
  );
}

t.test(
  'without MPD the daemon starts, a stream player is refused naming apt-get install mpd, and the rest works',
  async (t) => {
    const dir = tempDir('azc-nompd-');
    const emptyPath = tempDir('azc-path-');
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(emptyPath, { recursive: true, force: true });
    });
    const hidden = canHideMpd();
    if (!hidden)
      t.comment('no mount namespace here: the daemon is given an mpd program name that does not exist instead');
    const daemon = await startedDaemon(t, {
      args: [
        '--state-dir',
        path.join(dir, 'state'),
        '--log-level',
        'warn',
        ...(hidden ? [] : ['--playback-mpd-path', 'mpd-not-installed']),
      ],
      env: { PATH: emptyPath },
      ...(hidden ? { spawner: withoutMpd } : {}),
    });
    const key = /apiKey=(svc_[0-9a-f]+)/.exec(readFileSync(path.join(dir, 'state', 'initial-admin.txt'), 'utf8'))?.[1];
    const api = client(daemon.base, key);
    t.equal((await api.get('/api/health')).status, 200, 'it answers');
    const refused = await api.post('/api/players', { name: 'Stream', input: { channel: 1 }, output: { kind: 'null' } });
    t.equal(refused.status, 409);
    t.match(
      refused.body.detail,
      /MPD is not installed: stream players are played by MPD \(install it with: apt-get install mpd\)/,
    );
    t.equal(
      (await api.post('/api/players', { name: 'Streamer', input: { channel: 1 } })).status,
      201,
      'a player wired to its input is made as before',
    );
    t.equal((await daemon.stop('SIGTERM')).code, 0, 'it stops cleanly');
  },
);
