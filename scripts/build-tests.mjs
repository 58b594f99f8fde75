// `npm test`'s first step: type-checks the project (tsc, as `tsc --noEmit` did) and bundles every test file, and
// every script a test starts as a child process, into .test-build/ with esbuild. A test process then starts from
// JavaScript instead of loading tsx, and from a few bundle chunks instead of ~300 modules (TypeBox alone is ~220).
// Every test process also pays for starting node and loading tap (and, under tap's runner, its process-info hook:
// scripts/run-tests.mjs), so quick test files are bundled together, a few per process (see GROUP_FILES and SOLO).
// The code is transformed as tsx transforms it (esbuild, tsconfig.json); `import.meta.url` keeps naming the module's
// own place (see importMetaUrl), so paths found from it, and isMain() checks, work as they do from the sources.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NODE_ESM_BUNDLE, REQUIRE_BANNER } from './bundle.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = '.test-build';

/** Scripts the tests start as child processes (test/helpers/paths.ts nodeEntry), besides the test files. */
export const CHILD_ENTRIES = [
  'daemon/main.ts',
  'test/appliance/mdns-child.ts',
  'test/appliance/ssdp-child.ts',
  'test/appliance/ssdp-daemon-child.ts',
  'test/appliance/ssdp-two-networks.ts',
];

/** Packages bundled in: pure JavaScript with many modules. Every other package is required from node_modules. */
const INLINE = /^@sinclair\/typebox(\/|$)/;

/** Outputs of an earlier build that this one did not write are removed once this old (a run may still load them). */
const STALE_CHUNK_MS = 60 * 60 * 1000;

/** Test files: test/**\/*.test.ts, the benchmarks left out (they run from the sources). */
function testFiles(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (rel !== 'test/bench') walk(rel);
      } else if (entry.name.endsWith('.test.ts')) {
        found.push(rel);
      }
    }
  };
  walk('test');
  return found.sort();
}

/** Folders whose files each run in a process of their own: a real browser, systemd, namespaces, long child runs. */
const SOLO_DIRS = ['test/browser', 'test/appliance'];

/**
 * Files elsewhere that keep a process of their own, with the reason. A file whose subtests run side by side
 * (`concurrently(t)` sets its root test's jobs) always does, and needs no entry here.
 */
const SOLO = new Map([
  ['test/unit/notify.test.ts', 'changes process.env for the whole file and loads the addon on its own'],
  ['test/unit/port.test.ts', "counts the process's timers"],
  // Long files that mostly wait (on child processes, a broker, a paced line): they run beside the others.
  ['test/api/crash-safety.test.ts', 'long'],
  ['test/api/readme-tour.test.ts', 'long'],
  ['test/api/backup-restore.test.ts', 'long'],
  ['test/api/large-backup.test.ts', 'long: half a million tracks'],
  ['test/api/large-restore.test.ts', 'long: half a million tracks'],
  ['test/api/restore-kill.test.ts', 'long: kills daemons during restores of 30,000 tracks'],
  ['test/api/state-permissions.test.ts', 'changes the umask and starts daemons as another user'],
  ['test/api/process.test.ts', 'long'],
  ['test/api/single-instance.test.ts', 'long'],
  ['test/api/event-resume.test.ts', 'long'],
  ['test/api/fuzz.test.ts', 'long'],
  ['test/api/export-hardening.test.ts', 'long'],
  ['test/mqtt/commands.test.ts', 'long'],
  ['test/mqtt/availability.test.ts', 'long'],
  ['test/mqtt/discovery.test.ts', 'long'],
  ['test/drivers/monoprice-cli.test.ts', 'long'],
  ['test/api/backup-bridge-settings.test.ts', 'long: waits on a broker through restores'],
  ['test/api/mpd-parent-death.test.ts', 'long: a daemon child process and its mpd'],
]);

/** Quick files of one folder share a process, this many at most, in name order. */
const GROUP_FILES = 8;

/**
 * The test processes: a file of its own, or a group of a folder's quick files run one after the other in one
 * process (each file's top-level tests become tests of the group, and every file keeps its own module scope).
 * Returns esbuild entry points; a group is the virtual module `azc-group:<file>,<file>,…`.
 */
function testEntries(root, files) {
  const solo = (file) =>
    SOLO.has(file) ||
    SOLO_DIRS.some((dir) => file.startsWith(`${dir}/`)) ||
    /^concurrently\(t\b/m.test(readFileSync(path.join(root, file), 'utf8'));
  const entries = [];
  const quick = new Map();
  for (const file of files) {
    if (solo(file)) entries.push({ in: file, out: file.replace(/\.ts$/, '') });
    else quick.set(path.posix.dirname(file), [...(quick.get(path.posix.dirname(file)) ?? []), file]);
  }
  for (const [dir, list] of quick) {
    const groups = Math.ceil(list.length / GROUP_FILES);
    const size = Math.ceil(list.length / groups);
    for (let g = 0; g < groups; g++) {
      const members = list.slice(g * size, (g + 1) * size);
      entries.push({ in: `azc-group:${members.join(',')}`, out: `${dir}/group-${g + 1}.test` });
    }
  }
  return entries;
}

/** The module of a group: imports its files in order, so their tests run in that order. */
const groups = (root) => ({
  name: 'azc-groups',
  setup(build) {
    build.onResolve({ filter: /^azc-group:/ }, (args) => ({ path: args.path, namespace: 'azc-group' }));
    build.onLoad({ filter: /.*/, namespace: 'azc-group' }, (args) => ({
      contents: args.path
        .slice('azc-group:'.length)
        .split(',')
        .map((file) => `import ${JSON.stringify(`./${file}`)};`)
        .join('\n'),
      resolveDir: root,
      loader: 'js',
    }));
  },
});

function typecheck(root) {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return spawnSync(process.execPath, [tsc, '-p', 'tsconfig.test.json'], { cwd: root, stdio: 'inherit' }).status ?? 1;
}

/**
 * Each project module's `import.meta.url` becomes the URL its own output would have (`daemon/paths.ts` →
 * `.test-build/daemon/paths.js`), not the bundle chunk it ends up in: the project root is still found by walking up,
 * packages and the native addon resolve as before, and no inlined module takes the test file for its own main.
 */
function importMetaUrl(root, outdir) {
  return {
    name: 'azc-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const file = path.join(outdir, path.relative(root, args.path).replace(/\.ts$/, '.js'));
        const contents = readFileSync(args.path, 'utf8')
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(file).href))
          .replaceAll('import.meta.filename', JSON.stringify(file))
          .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(file)));
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * Packages (and node's own modules) are loaded with require() from node_modules, except INLINE; the dashboard's own
 * URLs (`/js/…`, run in the page) stay as they are. The project's plain JavaScript modules (scripts/*.mjs) are
 * imported where they are. Under tap every ES module import goes through the process-info hook's loader thread
 * (Node 20): a required package does not, and tap's own ~150 modules alone cost ≈0.3 s of CPU that way.
 */
const externals = {
  name: 'azc-externals',
  setup(build) {
    build.onResolve({ filter: /^tap$/ }, (args) =>
      args.namespace === 'azc-tap-cjs' ? { path: 'tap', external: true } : { path: 'tap', namespace: 'azc-tap-cjs' },
    );
    build.onLoad({ filter: /.*/, namespace: 'azc-tap-cjs' }, () => ({
      contents: "module.exports = require('tap').t;",
      loader: 'js',
    }));
    build.onResolve({ filter: /^\/(js|css)\// }, (args) => ({ path: args.path, external: true }));
    // Relative .mjs imports of the project's own scripts; a package's own (TypeBox's) are bundled with it.
    build.onResolve({ filter: /^\.\.?\/.*\.mjs$/ }, (args) =>
      args.resolveDir.includes(`${path.sep}node_modules${path.sep}`)
        ? undefined
        : { path: path.resolve(args.resolveDir, args.path), external: true },
    );
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (INLINE.test(args.path)) return undefined;
      // The require() inside a stand-in module below is node's own.
      // A dynamic import() stays node's own too: a bundled one would only have a default export.
      if (args.namespace === 'azc-required' || args.kind === 'dynamic-import')
        return { path: args.path, external: true };
      return { path: args.path, namespace: 'azc-required' };
    });
    build.onLoad({ filter: /.*/, namespace: 'azc-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

function filesUnder(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(full, found);
    else if (/\.js(\.map)?$/.test(entry.name)) found.push(full);
  }
  return found;
}

export async function bundleTests(root = ROOT) {
  const esbuild = await import('esbuild');
  const outdir = path.join(root, OUT_DIR);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [
      ...testEntries(root, testFiles(root)),
      ...CHILD_ENTRIES.map((file) => ({ in: file, out: file.replace(/\.ts$/, '') })),
    ],
    outdir,
    ...NODE_ESM_BUNDLE,
    // Code inside the bundle calls require() for packages (see externals).
    banner: { js: REQUIRE_BANNER },
    tsconfig: path.join(root, 'tsconfig.json'),
    // Failures and coverage point at the TypeScript (tap runs with --enable-source-maps).
    sourcemap: 'linked',
    sourcesContent: false,
    plugins: [groups(root), externals, importMetaUrl(root, outdir)],
    metafile: true,
    logLevel: 'warning',
  });
  // A test file that is gone must not run again; a chunk may still be loaded by a run that started before this build.
  const written = new Set(Object.keys(result.metafile.outputs).map((file) => path.resolve(root, file)));
  for (const file of filesUnder(outdir)) {
    if (written.has(file) || written.has(file.replace(/\.map$/, ''))) continue;
    const isChunk = path.relative(outdir, file).startsWith(`chunks${path.sep}`);
    if (!isChunk || Date.now() - statSync(file).mtimeMs > STALE_CHUNK_MS) rmSync(file);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const status = typecheck(ROOT);
  if (status !== 0) process.exit(status);
  await bundleTests(ROOT);
}
