// `npm test`'s first step: type-checks the project (tsc, as `tsc --noEmit` did) and bundles every test file, and
// every script a test starts as a child process, into .test-build/ with esbuild. A test process then starts from
// JavaScript instead of loading tsx, and from a few bundle chunks instead of ~300 modules (TypeBox alone is ~220):
// under tap each module load also goes through tap's process-info hook, so the count is what costs.
// The code is transformed as tsx transforms it (esbuild, tsconfig.json); `import.meta.url` keeps naming the module's
// own place (see importMetaUrl), so paths found from it, and isMain() checks, work as they do from the sources.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NODE_ESM_BUNDLE } from './bundle.mjs';

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

/** Packages bundled in: pure JavaScript with many modules. Every other package is imported from node_modules. */
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
 * Bare imports stay imports of node_modules, except INLINE; so do the dashboard's own URLs (`/js/…`, run in the page).
 * The project's plain JavaScript modules (scripts/*.mjs) are imported where they are, as they are. tap is loaded
 * with require(), its CommonJS build: the process-info hook tap's runner installs sees every ES module import (Node
 * 20), and tap's own ~150 modules cost ≈0.3 s CPU in each test process that way; required, they skip the hook.
 */
const externals = {
  name: 'azc-externals',
  setup(build) {
    build.onResolve({ filter: /^tap$/ }, () => ({ path: 'tap', namespace: 'azc-tap-cjs' }));
    build.onLoad({ filter: /.*/, namespace: 'azc-tap-cjs' }, () => ({
      contents: "import { createRequire } from 'node:module'; export default createRequire(import.meta.url)('tap').t;",
      loader: 'js',
    }));
    build.onResolve({ filter: /^\/(js|css)\// }, (args) => ({ path: args.path, external: true }));
    build.onResolve({ filter: /^\.\.?\/.*\.mjs$/ }, (args) => ({ path: path.resolve(args.resolveDir, args.path), external: true }));
    build.onResolve({ filter: /^[^./]/ }, (args) => (INLINE.test(args.path) ? undefined : { path: args.path, external: true }));
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
    entryPoints: [...testFiles(root), ...CHILD_ENTRIES],
    outdir,
    outbase: root,
    entryNames: '[dir]/[name]',
    ...NODE_ESM_BUNDLE,
    tsconfig: path.join(root, 'tsconfig.json'),
    // Failures and coverage point at the TypeScript (tap runs with --enable-source-maps).
    sourcemap: 'linked',
    sourcesContent: false,
    plugins: [externals, importMetaUrl(root, outdir)],
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
