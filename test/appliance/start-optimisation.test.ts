// Start-up leaves V8's optimising compiler untouched (ARCHITECTURE.md, "Memory"): once a function is optimised, the
// compiler's code pages and memory stay with the process (~4 MB of RSS), and start-up work made node's own path
// functions hot enough for that. The daemon as the service runs it (the bundle scripts/bundle.mjs writes) starts under
// `--trace-opt`, creates its first administrator, answers a first request and stops; V8 names each function it marks
// for optimisation. V8 decides by the work each function did, not by the clock, so the same start gives the same
// answer on a busy machine. The bundle sits deeper in the tree than dist/daemon/ does, and node's path work grows
// with the path, so a start that passes here has margin as installed.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { bundleDaemon } from '../../scripts/bundle.mjs';
import { ROOT, startedDaemon } from '../helpers/process.js';

/** Lines of `--trace-opt` that name a function V8 marked for, or compiled with, an optimising tier. */
const OPTIMISED = /^\[(?:marking|compiling method|completed optimizing|optimizing)\b.*?<JSFunction ([^ >]*)/;

t.test('the bundled daemon optimises no function while it starts and answers its first request', async (t) => {
  // Inside the project, as dist/ is: the bundle finds package.json, node_modules and native/build by walking up.
  mkdirSync(path.join(ROOT, '.tap'), { recursive: true });
  const outdir = mkdtempSync(path.join(ROOT, '.tap', 'start-'));
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-start-'));
  t.teardown(() => {
    rmSync(outdir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  const logs: string[] = [];
  t.ok(await bundleDaemon({ root: ROOT, outdir, log: (line) => logs.push(line) }), `bundled ${logs.join('; ')}`);

  const daemon = await startedDaemon(t, {
    entryPath: path.join(outdir, 'main.js'),
    nodeArgs: ['--trace-opt'],
    args: ['--state-dir', path.join(dir, 'state'), '--log-level', 'info'],
    // As the service runs it: without the test runner's hook, which the runner adds to NODE_OPTIONS of every child
    // and which turns on source maps (node then parses the bundle's maps), or its coverage: work of their own.
    spawner: (command, argv, options) =>
      spawn('env', ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', command, ...argv], options),
  });
  t.equal((await fetch(`${daemon.base}/api/health`)).status, 200, 'the daemon answers');
  t.equal((await daemon.stop('SIGTERM')).code, 0, 'and stops');

  const optimised = daemon
    .stdout()
    .split('\n')
    .map((line) => OPTIMISED.exec(line)?.[1])
    .filter((name) => name !== undefined);
  t.same([...new Set(optimised)], [], 'no function was marked for optimisation');
});
