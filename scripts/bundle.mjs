// Bundles the daemon's entry (daemon/main.ts) into dist/daemon/main.js: one module instead of ~300 (TypeBox alone is
// ~220), minified, so the running service holds less source and fewer module records in memory and starts faster.
// Code loaded on demand (the MQTT bridge, SSDP, mDNS) goes into chunks beside it, loaded only when configured.
// Packages with native addons or loaded on demand stay outside the bundle and are required from node_modules.
import { rmSync } from 'node:fs';
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
  'node-ssdp',
  '@homebridge/ciao',
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
    });
    return true;
  } catch (err) {
    log(`build: bundling failed: ${err.message}`);
    return false;
  }
}
