// scripts/run-tests.mjs, the runner of `npm test`: on tap test files that pass, fail, crash and hang, it counts what
// tap's own runner counts, fails the run for each, and says why a process failed. CI reads its summary line.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths.js';
import { within } from '../helpers/wait-for.js';

const RUNNER = path.join(ROOT, 'scripts', 'run-tests.mjs');
const FILES: Record<string, string> = {
  'pass.mjs': `
    t.test('a group', async (t) => { t.ok(true, 'one'); t.equal(2, 2, 'two'); });
    t.test('skipped', { skip: 'not here' }, async () => undefined);
    t.pass('three');`,
  'fail.mjs': `
    t.test('a group', async (t) => { t.ok(true, 'fine'); t.equal(1, 2, 'broken'); });
    t.todo('later');`,
  'crash.mjs': `
    t.pass('before the crash');
    setImmediate(() => process.kill(process.pid, 'SIGKILL'));`,
  'hang.mjs': `
    t.pass('before the hang');
    t.test('waits forever', () => new Promise(() => setInterval(() => undefined, 1000)));`,
};

// Inside the project (in its ignored build folder), not under /tmp: tap's runner saves each file's TAP under .tap/ at
// the file's path relative to the project, and for a file outside it that path leads out of .tap/.
mkdirSync(path.join(ROOT, '.test-build'), { recursive: true });
const dir = mkdtempSync(path.join(ROOT, '.test-build', 'runner-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
for (const [name, body] of Object.entries(FILES))
  writeFileSync(path.join(dir, name), `import t from 'tap';\n${body}\n`);
const file = (name: string) => path.join(dir, name);

/**
 * Runs `command args` from the project's root, without what a runner told this process (TAP_*: a runner started
 * with them takes itself for a child); resolves with its exit code and stdout.
 */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  const outer = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^_?TAP/.test(key)));
  const child = spawn(command, args, { cwd: ROOT, env: { ...outer, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.resume();
  return within(
    new Promise((resolve) => child.on('close', (code) => resolve({ code, out }))),
    undefined,
    `${path.basename(args[0] ?? command)} to finish`,
  );
}

const summary = (out: string) => /^# \{ .* \}$/m.exec(out)?.[0];
const runner = (names: string[], env?: NodeJS.ProcessEnv) => run(process.execPath, [RUNNER, ...names.map(file)], env);

t.test('files that pass: exit 0, and the summary counts what tap counts', async (t) => {
  const ours = await runner(['pass.mjs']);
  t.equal(ours.code, 0, ours.out);
  t.equal(summary(ours.out), '# { total: 4, pass: 3, fail: 0, skip: 1 }');
  t.match(ours.out, /^ok 1 - .*pass\.mjs # time=\d+ms$/m);
  const taps = await run(process.execPath, [
    path.join(ROOT, 'node_modules/.bin/tap'),
    '--disable-coverage',
    '-R',
    'tap',
    file('pass.mjs'),
  ]);
  t.equal(taps.code, 0);
  t.equal(
    summary(taps.out),
    '# { total: 4, pass: 3, skip: 1 }',
    "tap's runner: the same counts (it leaves out a zero)",
  );
});

t.test('a failed assertion fails the run and is shown where CI looks for it', async (t) => {
  const ours = await runner(['pass.mjs', 'fail.mjs']);
  t.equal(ours.code, 1);
  t.equal(summary(ours.out), '# { total: 7, pass: 4, fail: 1, skip: 1, todo: 1 }');
  t.match(ours.out, /^ {8}not ok 2 - broken$/m, 'the assertion, inside its file and group');
  t.match(ours.out, /^not ok \d - .*fail\.mjs # exited with code 1$/m);
  t.match(ours.out, /^# 1 of 2 test processes failed$/m);
});

t.test('a process that dies without a failed assertion still counts as a failure', async (t) => {
  const ours = await runner(['crash.mjs']);
  t.equal(ours.code, 1);
  t.equal(summary(ours.out), '# { total: 1, pass: 1, fail: 1 }', 'its one failure is the process');
  t.match(ours.out, /^not ok 1 - .*crash\.mjs # killed by SIGKILL$/m);
});

t.test("a file that outlives the time limit fails with tap's time-out report", async (t) => {
  const ours = await runner(['hang.mjs'], { AZC_TEST_TIMEOUT_S: '2' });
  t.equal(ours.code, 1);
  t.match(ours.out, /not ok \d+ - timeout!/, "the test's own report of what was still running");
  t.match(ours.out, /^not ok 1 - .*hang\.mjs # /m);
  t.match(summary(ours.out), /fail: [1-9]/);
});
