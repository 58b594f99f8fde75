// Bundles the daemon's entry (daemon/main.ts) into dist/daemon/main.js: one module instead of ~300 (TypeBox alone is
// ~220), minified, so the running service holds less source and fewer module records in memory and starts faster.
// What start-up runs is one chunk beside it; code loaded on demand (the amplifier families, the MPD engine, the MQTT
// bridge, SSDP, mDNS) goes into chunks of its own, loaded only when configured.
// Packages with native addons or loaded on demand stay outside the bundle and are required from node_modules.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Kept out of the bundle: native addons (found by their own loaders), and packages only some setups load. pino and
 * better-sqlite3's JavaScript are bundled: each CommonJS module required at start-up costs a walk up the file system
 * for its package.json, and enough of those get node's path code optimised, which alone costs ~4 MB of RSS.
 */
export const EXTERNAL = [
  // better-sqlite3's JavaScript is bundled; its addon is passed in (daemon/store/sqlite.ts), and `bindings`, which
  // would look for it otherwise, is never loaded.
  'bindings',
  '@trufflesuite/uws-js-unofficial',
  '@btc-vision/uwebsockets.js',
  'serialport',
  '@serialport/*',
  'mqtt',
];

/** How every bundle of this project is built: ES modules for node 20, code loaded on demand in chunks of its own. */
export const NODE_ESM_BUNDLE = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
};

/** CommonJS code inside an ES module bundle still calls require() (tweetnacl asks for node:crypto this way). */
export const REQUIRE_BANNER =
  "import { createRequire as __azcdRequire } from 'node:module'; const require = __azcdRequire(import.meta.url);";

/**
 * Everything start-up runs goes into one chunk. esbuild puts each module into the chunk of the entry points that reach
 * it, and each module loaded on demand is an entry point: code start-up shares with the MQTT bridge went into one
 * chunk, code it shares with the amplifier families into another, and so on, a dozen chunks loaded at start, each
 * resolved and searched for by node (see trimBanners). Each module loaded on demand is made to reach what main.ts
 * imports as well (a side-effect import appended to it, of modules that have run by then), so every module start-up
 * runs is reached by the same entry points and lands in one chunk: start-up loads main.js and that chunk.
 */
function oneStartChunk() {
  return {
    name: 'azcd-one-start-chunk',
    setup(build) {
      const entry = build.initialOptions.entryPoints.main;
      const startImports = new Set();
      const onDemand = new Set();
      build.onResolve({ filter: /^\./ }, async (args) => {
        if (args.pluginData === 'azcd-inner') return undefined;
        const isStart = args.importer === entry && args.kind === 'import-statement';
        if (!isStart && args.kind !== 'dynamic-import') return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'azcd-inner',
        });
        if (resolved.errors.length === 0 && !resolved.external) (isStart ? startImports : onDemand).add(resolved.path);
        return undefined;
      });
      // main.ts's imports are resolved as soon as it is read, before any module loaded on demand is found.
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!onDemand.has(args.path)) return undefined;
        const imports = [...startImports].map((file) => `import ${JSON.stringify(file)};`).join('\n');
        return { contents: `${readFileSync(args.path, 'utf8')}\n${imports}\n`, loader: 'ts' };
      });
    },
  };
}

/**
 * What some packages require at load for what azcd never uses, given stand-ins in the daemon's bundle. Each is
 * replaced only where that package asks for it; anything else that asks gets the real module.
 * - pino and sonic-boom: node's `worker_threads` (for `isMainThread`), `thread-stream` (pino.transport(), which runs
 *   a worker thread) and `assert` (one check in sonic-boom). Loading the three costs an idle daemon ~0.5 MB.
 * - ciao: `source-map-support/register`, which replaces node's stack formatting for the whole process. Bundled, every
 *   stack formatted after it (bluebird, in the same chunk, formats some as it loads) parsed the bundle's source maps:
 *   megabytes of memory, and enough work to get V8 to optimise during start-up. azcd's stacks name the bundle's lines.
 * (ARCHITECTURE.md, "Memory".)
 */
const STAND_INS = [
  {
    importer: /node_modules[\\/](pino|sonic-boom)[\\/]/,
    modules: {
      // pino flushes an asynchronous destination at exit only from the main thread: azcd's logger lives there.
      worker_threads: 'module.exports = { isMainThread: true };',
      // Node's assert is loaded only to report a failed check.
      assert:
        "module.exports = function assert(value, message) { if (!value) process.getBuiltinModule('node:assert')(value, message); };",
      // azcd writes to its own destination (daemon/log.ts) and never starts a transport.
      'thread-stream':
        "module.exports = function ThreadStream() { throw new Error('pino transports are not part of the azcd bundle'); };",
    },
  },
  {
    importer: /node_modules[\\/]@homebridge[\\/]ciao[\\/]/,
    modules: { 'source-map-support/register': '' },
  },
];

function standIns() {
  return {
    name: 'azcd-stand-ins',
    setup(build) {
      build.onResolve(
        { filter: /^(node:)?(worker_threads|assert|thread-stream|source-map-support\/register)$/ },
        (args) => {
          const request = args.path.replace(/^node:/, '');
          const index = STAND_INS.findIndex(
            (entry) => entry.importer.test(args.importer) && Object.hasOwn(entry.modules, request),
          );
          if (index < 0) return undefined;
          return { path: `${index}:${request}`, namespace: 'azcd-stand-in' };
        },
      );
      build.onLoad({ filter: /.*/, namespace: 'azcd-stand-in' }, (args) => {
        const [index, request] = [
          Number(args.path.slice(0, args.path.indexOf(':'))),
          args.path.slice(args.path.indexOf(':') + 1),
        ];
        return { contents: STAND_INS[index].modules[request], loader: 'js' };
      });
    },
  };
}

/**
 * Whether a bundle file's code (after the banner) calls the `require` the banner makes: in practice only the chunk
 * that holds esbuild's `__require`, and a main.js with CommonJS packages inlined. Its name as a property
 * (`module.require`) or inside a longer name (`require_foo`) does not count; a mention in a string does, which only
 * keeps a banner that was not needed.
 */
const CALLS_REQUIRE = /(?<![\w$.])require(?![\w$])/;

/**
 * What node does for each bundle file it loads is work in its path code: the import that names the file is resolved
 * (fileURLToPath, realpath, path.resolve), the folders above it are searched for the package.json that says its
 * module type, and the banner's createRequire() resolves the file's folder again. Enough of that at start gets V8 to
 * optimise `fileURLToPath` and `path.normalize` during start-up, and the optimising compiler's code and memory
 * (~4 MB of RSS) stay with the process for good: a dozen chunks did, and with one start chunk the addons and packages
 * required at start still leave little room (`npm run bench -- --only start` reports the functions optimised). So
 * a chunk whose code never calls `require` loses the banner (its line stays, empty: the source map's lines still
 * match). (No package.json in the chunk folder to end that search: paths.ts, in the start chunk, finds the
 * installation by the package.json above it.)
 */
function trimBanners(outdir) {
  const chunks = path.join(outdir, 'chunks');
  for (const file of [
    path.join(outdir, 'main.js'),
    ...readdirSync(chunks)
      .filter((name) => name.endsWith('.js'))
      .map((name) => path.join(chunks, name)),
  ]) {
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf(REQUIRE_BANNER);
    if (at < 0 || CALLS_REQUIRE.test(text.slice(at + REQUIRE_BANNER.length))) continue;
    writeFileSync(file, text.slice(0, at) + text.slice(at + REQUIRE_BANNER.length));
  }
}

/**
 * Writes `<outdir>/main.js` and `<outdir>/chunks/` from `<root>/daemon/main.ts`; returns whether it succeeded. The
 * chunk folder is replaced as a whole, so chunks of an earlier build never linger.
 */
export async function bundleDaemon({
  root,
  outdir = path.join(root, 'dist', 'daemon'),
  log = (msg) => process.stderr.write(`${msg}\n`),
}) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    log('build: esbuild is not installed here; run `npm ci` first');
    return false;
  }
  rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: { main: path.join(root, 'daemon', 'main.ts') },
      outdir,
      ...NODE_ESM_BUNDLE,
      // Whitespace and syntax only: function names stay readable in profiles and stack traces.
      minifyWhitespace: true,
      minifySyntax: true,
      // Stack traces of the running service still name source files and lines.
      sourcemap: 'linked',
      external: EXTERNAL,
      banner: { js: REQUIRE_BANNER },
      logLevel: 'warning',
      plugins: [oneStartChunk(), standIns()],
    });
    trimBanners(outdir);
    return true;
  } catch (err) {
    log(`build: bundling failed: ${err.message}`);
    return false;
  }
}
