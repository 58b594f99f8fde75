// The stream-player walk-through in docs/playback.md, run as it is written against the real MPD (a null output
// instead of a DAC, a folder of sox tones instead of an album): every status it promises is the one the daemon answers.

import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/daemon.js';
import { tone } from '../helpers/mpd-rig.js';
import { runBash, shellBlocks } from '../helpers/readme.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

/** The walk-through: the sh block of the wiring section that creates the player. */
function walkThrough(): string {
  const block = shellBlocks('## Wiring and configuring one on a Pi', 'docs/playback.md').find((b) =>
    b.includes('/players/$P/play'),
  );
  if (!block) throw new Error('docs/playback.md has no walk-through block');
  return block;
}

/** The status codes the comments promise, in order (`st ... # 200: ...`). */
const promisedStatuses = (block: string) =>
  block
    .split('\n')
    .filter((line) => /(^|\s)st\s/.test(line))
    .map((line) => /#\s*(\d{3})\b/.exec(line)?.[1] ?? 'unannotated');

t.test('the walk-through in docs/playback.md runs as written and every status matches its comment', async (t) => {
  const music = tempDir('azc-music-');
  t.teardown(() => rmSync(music, { recursive: true, force: true }));
  // Two tracks long enough for the seek 5 s into the second one.
  tone(path.join(music, 'albums/Demo/01.flac'), 30, 440, { title: 'Opening', artist: 'Sine Band' });
  tone(path.join(music, 'albums/Demo/02.flac'), 30, 660, { title: 'Second', artist: 'Sine Band' });
  const { d } = await startStreamDaemon(t, { music });

  const block = walkThrough();
  const promised = promisedStatuses(block);
  t.ok(promised.length >= 8, 'the walk-through shows the status of its changes');
  t.notOk(promised.includes('unannotated'), 'every status line says what to expect');
  const result = await runBash(block, {
    ...process.env,
    AZC_URL: d.base,
    AZC_STATE_DIR: d.stateDir,
    OUT: '{"kind":"null"}',
    MUSIC_FOLDER: 'albums/Demo',
  });
  t.equal(result.code, 0, `the walk-through exits cleanly (stderr: ${result.stderr.slice(0, 400)})`);
  t.equal(result.stderr, '', 'nothing is written to stderr');
  t.same(
    result.stdout.split('\n').filter((line) => /^\d{3}$/.test(line)),
    promised,
    'the printed statuses are the promised ones, in order',
  );
  t.match(result.stdout, /^folder {2}albums$/m, 'the top of the music folder lists its folder');
  t.match(
    result.stdout,
    /^track {2}file:albums\/Demo\/02\.flac {2}Second$/m,
    'the folder lists its tracks with their titles',
  );
  t.match(
    result.stdout,
    /^\{"state":"playing","title":"Opening","artist":"Sine Band","positionMs":\d+,"durationMs":30000\}$/m,
    'the playlist plays from its first track',
  );
  t.match(result.stdout, /"output":\{"kind":"null"\},"state":"idle"\}$/m, 'the stopped stream player is idle');
});

t.test(
  'the sox block before the walk-through makes a folder of tones in the music folder, named as MUSIC_FOLDER',
  async (t) => {
    const block = shellBlocks('## Wiring and configuring one on a Pi', 'docs/playback.md').find((b) =>
      b.includes('sox -n'),
    );
    if (!block) throw new Error('docs/playback.md has no sox block before its walk-through');
    const cwd = tempDir('azc-tones-');
    t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
    const result = await runBash(`${block}\nprintf '%s\\n' "$MUSIC_FOLDER"`, process.env, cwd);
    t.equal(result.code, 0, `it runs (stderr: ${result.stderr.slice(0, 400)})`);
    const folder = result.stdout.trim();
    const made = readdirSync(path.join(cwd, 'data/music', folder)).sort();
    t.equal(made.length, 3, `three tracks in data/music/${folder}`);
    for (const file of made) {
      const seconds = Number(
        execFileSync('soxi', ['-D', path.join(cwd, 'data/music', folder, file)], { encoding: 'utf8' }),
      );
      t.equal(seconds, 20, `${file} is a 20 s track sox can read`);
    }
  },
);
