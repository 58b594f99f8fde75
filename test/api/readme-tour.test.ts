// The README's quick tour, run as it is written: every status it promises is the status the daemon answers.

import { readdirSync, rmSync } from 'node:fs';
import t from 'tap';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { runBash, shellBlocks } from '../helpers/readme.js';

/** The fenced sh block of the README that holds `marker`. */
function readmeBlock(marker: string): string {
  const block = shellBlocks().find((b) => b.includes(marker));
  if (!block) throw new Error(`README has no sh block with ${marker}`);
  return block;
}

/** The tour block: the fenced sh block that sets B from AZC_URL. */
const tourBlock = () => readmeBlock('B=${AZC_URL');

/** The status codes the tour's comments promise, in order (`st ... # 204: ...`). */
function promisedStatuses(block: string): string[] {
  return block
    .split('\n')
    .filter((line) => /(^|\s)st\s/.test(line))
    .map((line) => /#\s*(\d{3})\b/.exec(line)?.[1] ?? 'unannotated');
}

t.test('the quick tour in the README runs as written and every status matches its comment', async (t) => {
  const d = await startTestDaemon(t);
  const block = tourBlock();
  const promised = promisedStatuses(block);
  t.ok(promised.length >= 8, 'the tour shows the status of its changes');
  t.notOk(promised.includes('unannotated'), 'every status line says what to expect');

  const result = await runBash(block, { ...process.env, AZC_URL: d.base, AZC_STATE_DIR: d.stateDir });
  t.equal(result.code, 0, `the tour exits cleanly (stderr: ${result.stderr.slice(0, 400)})`);
  t.equal(result.stderr, '', 'nothing is written to stderr');
  const printed = result.stdout.split('\n').filter((line) => /^\d{3}$/.test(line));
  t.same(printed, promised, 'the printed statuses are the promised ones, in order');
  t.match(result.stdout, /^#EXTM3U$/m, 'the downloaded playlist is an extended M3U');
  t.match(result.stdout, /^retry: \d+$/m, 'the event stream answered');
});

t.test(
  "the README's backup and restore recipe runs as written: two downloads side by side, then the restore",
  async (t) => {
    const d = await startTestDaemon(t);
    const cwd = tempDir('azc-recipe-');
    t.teardown(() => rmSync(cwd, { recursive: true, force: true }));
    const result = await runBash(readmeBlock('$A/restore'), { ...process.env, AZC_URL: d.base, K: d.adminKey }, cwd);
    t.equal(result.code, 0, `the recipe exits cleanly (stderr: ${result.stderr.slice(0, 400)})`);
    t.equal(result.stderr, '', 'nothing is written to stderr (curl -OJ never meets a file of the same name)');
    const files = readdirSync(cwd).sort();
    t.match(
      files,
      [/^azcd-backup-plain-\d{4}-\d{2}-\d{2}-\d{6}\.json$/, /^azcd-backup-sealed-\d{4}-\d{2}-\d{2}-\d{6}\.json$/],
      'a plain and a sealed file',
    );
    t.match(
      result.stdout,
      /^The backup's accounts replaced the ones on this appliance.*Sign in again as "admin"/m,
      'the restore says which credentials apply',
    );
  },
);
