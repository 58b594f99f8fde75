// Compiles the TypeScript only when a source is newer than the last good build, so `npm start` starts at once:
// tsc checks and compiles every tree into dist/, then the daemon's entry is bundled over dist/daemon/main.js
// (scripts/bundle.mjs). `npm run build` passes --force. The stamp (dist/.build-stamp) is written only after both
// succeed.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDaemon } from './bundle.mjs';

/** What the build reads: the TypeScript of the compiled trees and the files that configure the compiler. */
export const SOURCE_DIRS = ['daemon', 'drivers', 'native'];
/** Folders under those that tsc does not compile (the dashboard is served as is; node-gyp's output). */
const SKIP_DIRS = [path.join('daemon', 'ui'), path.join('native', 'build')];
export const SOURCE_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  path.join('scripts', 'bundle.mjs'),
];
/** The file whose existence says the build output is there at all. */
export const OUTPUT = path.join('dist', 'daemon', 'main.js');
export const STAMP = path.join('dist', '.build-stamp');

/** Newest modification time (ms) among the sources, with the path that has it. */
export function newestSource(root) {
  let newest = { mtimeMs: 0, file: '' };
  const consider = (file, mtimeMs) => {
    if (mtimeMs > newest.mtimeMs) newest = { mtimeMs, file: path.relative(root, file) };
  };
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.includes(path.relative(root, full))) walk(full);
      } else if (entry.name.endsWith('.ts')) {
        consider(full, statSync(full).mtimeMs);
      }
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(path.join(root, dir))) walk(path.join(root, dir));
  for (const file of SOURCE_FILES)
    if (existsSync(path.join(root, file))) consider(path.join(root, file), statSync(path.join(root, file)).mtimeMs);
  return newest;
}

/** Why a build is needed, or undefined when the last good build is newer than every source. */
export function staleReason(root) {
  if (!existsSync(path.join(root, OUTPUT))) return `${OUTPUT} is missing`;
  if (!existsSync(path.join(root, STAMP))) return 'no record of a finished build';
  const stampMs = statSync(path.join(root, STAMP)).mtimeMs;
  const newest = newestSource(root);
  return newest.mtimeMs > stampMs ? `${newest.file} changed since the last build` : undefined;
}

/**
 * Builds when needed. `build` runs the compiler and returns whether it succeeded. The stamp is created before the
 * build starts and put in place after it succeeds: it carries the file system's own clock from the start, so a
 * file saved while tsc runs still counts as newer next time.
 */
export async function ensureBuild({ root, force = false, build, log = (msg) => process.stderr.write(`${msg}\n`) }) {
  const reason = force ? 'forced' : staleReason(root);
  if (!reason) return { built: false };
  log(`build: compiling TypeScript (${reason})`);
  const stamp = path.join(root, STAMP);
  const pending = `${stamp}.pending`;
  rmSync(stamp, { force: true });
  mkdirSync(path.dirname(stamp), { recursive: true });
  closeSync(openSync(pending, 'w'));
  if (!(await build())) {
    rmSync(pending, { force: true });
    return { built: false, failed: true };
  }
  renameSync(pending, stamp);
  return { built: true };
}

/** The real compiler: the project's own tsc, run by the node that runs this script. */
function tsc(root) {
  const bin = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(bin)) {
    process.stderr.write('build: TypeScript is not installed here; run `npm ci` first\n');
    return false;
  }
  return (
    spawnSync(process.execPath, [bin, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' })
      .status === 0
  );
}

/** The whole build: tsc, then the bundle of the daemon's entry over tsc's dist/daemon/main.js. */
export async function buildAll(root) {
  return tsc(root) && (await bundleDaemon({ root }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const result = await ensureBuild({ root, force: process.argv.includes('--force'), build: () => buildAll(root) });
  if (result.failed) process.exit(1);
}
