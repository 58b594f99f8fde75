// `npm test`'s second step: runs each test process that scripts/build-tests.mjs bundled (.test-build/test/**/*.test.js,
// or the files named on the command line) under plain `node`, as many at a time as package.json's tap.jobs, and
// prints their TAP as tap's runner prints it (each file a subtest, then `# { total, pass, fail, skip, todo }`). The
// files are tap tests, and their TAP is read with tap's own parser.
//
// Why not tap's runner here: it gives every test process, and through NODE_OPTIONS every node process a test starts
// (daemons, stream players, mDNS children), its process-info hook (@tapjs/processinfo), which records every loaded
// module for coverage on a loader thread of its own, whatever the coverage setting. With coverage off that is all
// cost: ~0.2 s of CPU for a process that loads little, up to ~0.8 s for a test process that loads the daemon (docs/tests.md
// has the suite's figures). `npm run test:coverage` and `npx tap <file>` still use tap's runner.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'tap-parser';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = '.test-build/test';
const TAP_CONFIG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).tap;
const JOBS = TAP_CONFIG.jobs ?? 4;
/** Seconds a test process may run (tap's `timeout`); AZC_TEST_TIMEOUT_S sets another, for the runner's own test. */
const TIMEOUT_S = Number(process.env.AZC_TEST_TIMEOUT_S ?? TAP_CONFIG.timeout ?? 300);
/**
 * A test process ends itself at the time limit: tap's root test reports what was still running, then the process
 * exits (SIGALRM within 10 s). One still there this much later is sent SIGTERM, and SIGKILL after KILL_GRACE_MS.
 */
const SELF_END_MS = 15_000;
const KILL_GRACE_MS = 5_000;

/** Every bundled test file, in name order (the order tap's runner takes them in). */
function allFiles() {
  return readdirSync(path.join(ROOT, BUILD), { recursive: true })
    .filter((file) => file.endsWith('.test.js'))
    .map((file) => path.posix.join(BUILD, file))
    .sort();
}

/**
 * Counts the assertions of a TAP stream, in subtests too, as tap's summary does: the point that closes a subtest is
 * not one (what failed in it is counted inside).
 */
function countPoints(parser, counts) {
  parser.on('assert', (result) => {
    if (result.closingTestPoint) return;
    counts.total++;
    if (result.todo) counts.todo++;
    else if (result.skip) counts.skip++;
    else if (result.ok) counts.pass++;
    else counts.fail++;
  });
  parser.on('child', (child) => countPoints(child, counts));
}

/** Runs one file (the `id`th, on job slot `job`); resolves with its TAP text, whether it passed and what it counted. */
function runFile(file, id, job) {
  return new Promise((resolve) => {
    const started = performance.now();
    const counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
    const parser = new Parser();
    countPoints(parser, counts);
    let final;
    parser.on('complete', (results) => (final = results));
    // --enable-source-maps: a failure's stack names the TypeScript source's lines, as under tap's runner.
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      // What tap's runner tells a test process: the time limit its root test keeps (tap's own default is 30 s), and
      // that it is a child, so it leaves the summary to this process.
      env: {
        ...process.env,
        TAP: '1',
        TAP_TIMEOUT: String(TIMEOUT_S),
        TAP_CHILD_ID: String(id),
        TAP_JOB_ID: String(job),
      },
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => {
      chunks.push(chunk);
      parser.write(chunk);
    });
    let timedOut = false;
    let killTimer;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGTERM');
        killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      },
      TIMEOUT_S * 1000 + SELF_END_MS,
    );
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      parser.end();
      const problems = [];
      if (timedOut) problems.push(`timed out after ${TIMEOUT_S} s`);
      if (code !== 0 && code !== null) problems.push(`exited with code ${code}`);
      // tap's root test ends its process with SIGALRM once it has reported what outlived the time limit.
      if (signal === 'SIGALRM') problems.push(`ended at the time limit (${TIMEOUT_S} s)`);
      else if (signal && !timedOut) problems.push(`killed by ${signal}`);
      if (!final?.ok && problems.length === 0) problems.push('its TAP did not pass');
      // A process that failed without a failing test point (a crash, a time-out) still counts one failure.
      if (problems.length > 0 && counts.fail === 0) counts.fail++;
      resolve({
        file,
        tap: Buffer.concat(chunks).toString('utf8'),
        ok: problems.length === 0,
        problems,
        counts,
        ms: performance.now() - started,
      });
    });
  });
}

async function main() {
  const files = process.argv.length > 2 ? process.argv.slice(2) : allFiles();
  if (files.length === 0) {
    console.error(`no test files under ${BUILD}: run node scripts/build-tests.mjs first`);
    process.exit(1);
  }
  const started = performance.now();
  const totals = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
  let next = 0;
  let reported = 0;
  let failedFiles = 0;
  const report = (result) => {
    reported++;
    const body = result.tap.replace(/\n$/, '').replace(/^(?=.)/gm, '    ');
    const directive = result.problems.length ? ` # ${result.problems.join('; ')}` : ` # time=${result.ms.toFixed(0)}ms`;
    process.stdout.write(
      `# Subtest: ${result.file}\n${body}\n${result.ok ? 'ok' : 'not ok'} ${reported} - ${result.file}${directive}\n\n`,
    );
    if (!result.ok) failedFiles++;
    for (const key of Object.keys(totals)) totals[key] += result.counts[key];
  };
  const worker = async (job) => {
    while (next < files.length) {
      const id = ++next;
      report(await runFile(files[id - 1], id, job));
    }
  };
  await Promise.all(Array.from({ length: Math.min(JOBS, files.length) }, (_, job) => worker(job)));
  const fields = Object.entries(totals)
    .filter(([key, value]) => value > 0 || key === 'total' || key === 'pass' || key === 'fail')
    .map(([key, value]) => `${key}: ${value}`);
  process.stdout.write(`1..${reported}\n# { ${fields.join(', ')} }\n`);
  process.stdout.write(`# ${failedFiles} of ${reported} test processes failed\n`);
  process.stdout.write(`# time=${(performance.now() - started).toFixed(0)}ms\n`);
  process.exitCode = failedFiles > 0 ? 1 : 0;
}

await main();
