// Receivers run under Landlock (native/'s azc-confine), as each player's mpd does: a stand-in receiver program (a
// shell script, so the test can ask it what it reaches) writes in its own folder and is refused the rest of the state
// folder — the daemon's database beside it, another player's folder — and its home is its own folder. Without
// azc-confine the receiver still runs, and the log says once that it is not confined.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { playerFiles } from '../../drivers/mpd/config.js';
import type { ReceiverKind } from '../../drivers/receivers/receiver.js';
import { ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { receiverFolders } from '../helpers/receiver-checks.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** A receiver whose log says what it could read and write, then waits to be stopped. */
const probing: ReceiverKind = {
  kind: 'squeezelite',
  displayName: 'Squeezelite',
  takesServer: true,
  program: 'sh',
  debianPackage: 'dash',
  launch: () => ({
    args: [
      '-c',
      [
        'try() { if "$@" >/dev/null 2>&1; then echo "$*: yes" >&2; else echo "$*: no" >&2; fi; }',
        'try touch "$PWD/own-file"',
        'try cat "$DATABASE"',
        'try touch "$OTHER/planted"',
        'try cat /etc/passwd',
        'echo "home $HOME" >&2',
        'echo done >&2',
        'exec sleep 3600',
      ].join('\n'),
    ],
    pcm: 'self',
    env: {},
  }),
  parser: () => ({ line: () => [] }),
  volume: { toLevel: (value) => value, fromLevel: (level) => level },
};

async function run(t: Test, confinePath?: string) {
  const { dir } = receiverFolders(t, 'azc-confined');
  const database = path.join(dir, 'azcd.db');
  writeFileSync(database, 'secret rows', { mode: 0o600 });
  const other = playerFiles(dir, 'other').dir;
  const lines: string[] = [];
  const changes = new Changes();
  const supervisor = new ReceiverSupervisor({
    kind: probing,
    stateDir: dir,
    settings: {
      playerId: 'kitchen',
      name: 'Kitchen',
      output: { kind: 'alsa', device: 'null' },
      listenHost: '127.0.0.1',
    },
    env: { DATABASE: database, OTHER: other },
    ...(confinePath === undefined ? {} : { confinePath }),
    log: (level, message) => {
      lines.push(`${level} ${message}`);
      changes.notify();
    },
  });
  t.teardown(() => supervisor.stop());
  await supervisor.start();
  await waitFor(() => lines.some((line) => line.endsWith('sh: done')), undefined, { what: 'the probe', changes });
  const said = (what: string) =>
    lines
      .find((line) => line.includes(`sh: ${what}`))
      ?.split(': ')
      .pop();
  return { said, lines, dir };
}

t.test('a receiver writes in its own folder and reaches nothing else of the state folder', async (t) => {
  const { said, lines, dir } = await run(t);
  if (lines.some((line) => /without file-system confinement/.test(line))) {
    t.comment('this kernel has no Landlock: receivers run unconfined here, and the log says so');
    return;
  }
  t.equal(said(`touch ${playerFiles(dir, 'kitchen').dir}/squeezelite/own-file`), 'yes', 'its own folder');
  t.equal(said(`cat ${path.join(dir, 'azcd.db')}`), 'no', "the daemon's database beside it is refused");
  t.equal(said(`touch ${playerFiles(dir, 'other').dir}/planted`), 'no', "another player's folder is refused");
  t.equal(said('cat /etc/passwd'), 'yes', "the system's configuration is read");
  t.ok(lines.includes(`debug sh: home ${playerFiles(dir, 'kitchen').dir}/squeezelite`), 'its home is its own folder');
});

t.test('without azc-confine a receiver runs unconfined, and the log says so', async (t) => {
  const { said, lines, dir } = await run(t, '/nonexistent/azc-confine');
  t.equal(said(`cat ${path.join(dir, 'azcd.db')}`), 'yes', "the daemon's database is read");
  t.ok(
    lines.some((line) =>
      /^warn \/nonexistent\/azc-confine is missing .*receivers run without file-system confinement/.test(line),
    ),
    'said as a warning',
  );
});
