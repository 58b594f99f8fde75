// One run of a player's mpd, with a stand-in program in its place: the reason given for an exit quotes only what it
// said in the last seconds before it, never its start-up lines nor a track's failure already reported, and a machine
// without setpriv still starts it (saying once what it loses).

import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MpdProcess } from '../../drivers/mpd/process.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { waitFor, within } from '../helpers/wait-for.js';

/**
 * A program that says `startup` on stderr, then on SIGUSR1 says `track` and, on SIGUSR2, `last` and exits with
 * code 3. Each signal is answered only once the program said its line before (the test waits for that line).
 */
function standIn(t: { teardown(fn: () => unknown): void }, lines: { startup: string; track: string; last: string }) {
  const dir = tempDir('azc-mpd-stand-in-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const program = path.join(dir, 'mpd');
  writeFileSync(
    program,
    [
      '#!/bin/sh',
      `trap 'echo "${lines.track}" >&2' USR1`,
      `trap 'echo "${lines.last}" >&2; exit 3' USR2`,
      `echo "${lines.startup}" >&2`,
      // A short sleep with its own stderr: nothing the program leaves behind holds the pipe the test reads.
      'while :; do sleep 1 2>/dev/null & wait $!; done',
      '',
    ].join('\n'),
  );
  chmodSync(program, 0o700);
  const files = {
    dir,
    conf: path.join(dir, 'mpd.conf'),
    socket: path.join(dir, 'socket'),
    database: path.join(dir, 'database'),
    pid: path.join(dir, 'run', 'mpd.pid'),
  };
  mkdirSync(path.dirname(files.pid));
  return { program, files };
}

const TRACK_FAILURE = /^exception: Failed to decode/;

async function run(t: { teardown(fn: () => unknown): void }, options: { setprivPath?: string } = {}) {
  const lines = {
    startup: 'zeroconf: start-up chatter',
    track: 'exception: Failed to decode tones/a.flac',
    last: 'output: the device went away',
  };
  const { program, files } = standIn(t, lines);
  const clock = new ManualClock(1_000_000);
  const said: string[] = [];
  const logged: string[] = [];
  const proc = await MpdProcess.spawn({
    mpdPath: program,
    files,
    clock,
    log: (_level, message) => logged.push(message),
    startTimeoutMs: 20_000,
    stopTimeoutMs: 20_000,
    onLine: (line) => {
      said.push(line);
      return TRACK_FAILURE.test(line);
    },
    ...options,
  });
  t.teardown(() => proc.kill());
  const heard = (line: string) =>
    waitFor(() => said.includes(line), undefined, { what: `the stand-in to say ${JSON.stringify(line)}` });
  return { proc, clock, lines, heard, logged };
}

t.test(
  'the reason of an exit leaves out start-up lines from long before it and a track failure already reported',
  async (t) => {
    const { proc, clock, lines, heard } = await run(t);
    await heard(lines.startup);
    clock.advance(60_000);
    process.kill(proc.pid!, 'SIGUSR1');
    await heard(lines.track);
    process.kill(proc.pid!, 'SIGUSR2');
    const exit = await within(proc.exited, undefined, 'the stand-in to exit');
    t.equal(proc.describeExit(exit), `mpd exited with code 3: ${lines.last}`);
  },
);

t.test('lines said within the last seconds before the exit are its reason', async (t) => {
  const { proc, clock, lines, heard } = await run(t);
  await heard(lines.startup);
  clock.advance(1000);
  process.kill(proc.pid!, 'SIGUSR2');
  const exit = await within(proc.exited, undefined, 'the stand-in to exit');
  t.equal(proc.describeExit(exit), `mpd exited with code 3: ${lines.startup} | ${lines.last}`);
});

t.test('without setpriv mpd still starts, and the log says once that it would outlive a killed daemon', async (t) => {
  const first = await run(t, { setprivPath: '/nonexistent/setpriv' });
  await first.heard(first.lines.startup);
  const second = await run(t, { setprivPath: '/nonexistent/setpriv' });
  await second.heard(second.lines.startup);
  const warnings = [...first.logged, ...second.logged].filter((line) => /setpriv is missing/.test(line));
  t.equal(warnings.length, 1);
  t.match(
    warnings[0],
    /\/nonexistent\/setpriv is missing \(util-linux\): a daemon killed with SIGKILL leaves its mpd processes running until its next start/,
  );
});
