// How a player's mpd is put under azc-confine, with a stand-in for it: the folders it is given (its own folder and
// a FIFO output's to write, the music folder to read, nothing else of the state folder), and a kernel without
// Landlock said once in the log, not with every start.

import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { MpdProcess } from '../../drivers/mpd/process.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { waitFor, within } from '../helpers/wait-for.js';

const NO_LANDLOCK = 'Landlock is not available (Function not implemented)';

/**
 * A state folder with a player's folder, a music folder, a FIFO folder, an "mpd" that says `started` and waits, and
 * an azc-confine that writes its arguments beside itself, says what the real one says on a kernel without Landlock,
 * and runs the program after `--`.
 */
function rig(t: Test) {
  const dir = tempDir('azc-mpd-confinement-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const stateDir = path.join(dir, 'state');
  const playerDir = path.join(stateDir, 'players', 'p1');
  const music = path.join(dir, 'music');
  const fifos = path.join(dir, 'fifos');
  for (const folder of [playerDir, music, fifos]) mkdirSync(folder, { recursive: true });
  const mpd = path.join(dir, 'mpd');
  writeFileSync(
    mpd,
    ['#!/bin/sh', 'echo started >&2', 'while :; do sleep 1 2>/dev/null & wait $!; done', ''].join('\n'),
  );
  const confine = path.join(dir, 'azc-confine');
  const args = path.join(dir, 'confine-args');
  writeFileSync(
    confine,
    [
      '#!/bin/sh',
      `printf '%s\\n' "$@" > '${args}'`,
      `echo "azc-confine: ${NO_LANDLOCK}: $0 runs without file-system confinement" >&2`,
      'while [ "$1" != "--" ]; do shift; done',
      'shift',
      'exec "$@"',
      '',
    ].join('\n'),
  );
  for (const program of [mpd, confine]) chmodSync(program, 0o700);
  const files = {
    dir: playerDir,
    conf: path.join(playerDir, 'mpd.conf'),
    socket: path.join(playerDir, 'socket'),
    database: path.join(playerDir, 'database'),
    pid: path.join(playerDir, 'mpd.pid'),
  };
  const logged: string[] = [];
  const said: string[] = [];
  const start = async () => {
    const proc = await MpdProcess.spawn({
      mpdPath: mpd,
      files,
      clock: new ManualClock(1_000_000),
      log: (_level, message) => logged.push(message),
      startTimeoutMs: 20_000,
      stopTimeoutMs: 20_000,
      onLine: (line) => void said.push(line),
      musicRoot: music,
      outputFolder: fifos,
      confinePath: confine,
    });
    t.teardown(() => proc.kill());
    await waitFor(() => said.filter((line) => line === 'started').length > 0 && proc, undefined, {
      what: 'the stand-in mpd to start',
    });
    said.length = 0;
    return proc;
  };
  /** The rules azc-confine was given, as [kind, path] pairs (up to its `--`). */
  const rules = () => {
    const words = readFileSync(args, 'utf8').split('\n');
    const pairs: Array<[string, string]> = [];
    for (let i = 0; words[i] !== '--'; i += 2) pairs.push([words[i]!, words[i + 1]!]);
    return pairs;
  };
  return { stateDir, playerDir, music, fifos, start, rules, logged, said };
}

// First in the file: the line is said once per process, so it is this file's first start that says it.
t.test(
  'a kernel without Landlock is said once in the log, however many times mpd starts, and is no reason of an exit',
  async (t) => {
    const r = rig(t);
    const first = await r.start();
    first.kill();
    const exit = await within(first.exited, undefined, 'the first stand-in to exit');
    t.notMatch(first.describeExit(exit), /Landlock/, 'not quoted as why mpd stopped');
    const second = await r.start();
    second.kill();
    await within(second.exited, undefined, 'the second stand-in to exit');
    const warnings = r.logged.filter((line) => line.includes('Landlock'));
    t.equal(warnings.length, 1, `one line: ${warnings.join(' | ')}`);
    t.match(
      warnings[0],
      new RegExp(`^azc-confine: ${NO_LANDLOCK.replace(/[()]/g, '\\$&')}: mpd runs without file-system confinement`),
    );
  },
);

t.test(
  'mpd may write its own folder and the FIFO output’s, read the music folder, and reach nothing else of the state folder',
  async (t) => {
    const r = rig(t);
    const proc = await r.start();
    const rules = r.rules();
    t.ok(
      rules.some(([kind, where]) => kind === '--write' && where === r.playerDir),
      'its own folder, to write',
    );
    t.ok(
      rules.some(([kind, where]) => kind === '--write' && where === r.fifos),
      'the FIFO’s folder, to write',
    );
    t.ok(
      rules.some(([kind, where]) => kind === '--read' && where === r.music),
      'the music folder, to read',
    );
    const inState = rules
      .filter(([, where]) => where === r.stateDir || where.startsWith(`${r.stateDir}/`))
      .map(([, where]) => where);
    t.same(inState, [r.playerDir], 'of the state folder, only the player’s own folder');
    t.notOk(
      rules.some(([kind, where]) => kind !== '--read' && where === r.music),
      'the music folder is not writable',
    );
    proc.kill();
    await within(proc.exited, undefined, 'the stand-in to exit');
  },
);
