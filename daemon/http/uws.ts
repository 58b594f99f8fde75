// Loads the native uWebSockets.js binary built for this Node ABI, platform and C library; never a pure-JS fallback.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
export type UwsModule = typeof Uws;

const require = createRequire(import.meta.url);

/** The running system as the choice sees it (injectable for tests). */
export interface Runtime {
  platform: string;
  arch: string;
  /** process.versions.modules: the native ABI (115 = Node 20, 127 = Node 22, 137 = Node 24). */
  abi: string;
  nodeVersion: string;
  /** The glibc version, or undefined for another C library (musl) or OS. */
  glibc: string | undefined;
}

/** One npm-hosted build: the binaries it ships and what they need. */
interface Build {
  pkg: string;
  /** Path of a binary inside the package, from the runtime. */
  file: (rt: Runtime) => string;
  abis: readonly string[];
  arches: readonly string[];
  /** Lowest glibc its Linux binaries link against. */
  minGlibc?: string;
}

/**
 * In order of preference. The truffle build covers Node 20 on every board, armv7 included, and any glibc; the
 * btc-vision build covers Node 22/24 (and 20) on x64/arm64 but its binaries need glibc 2.38 (Debian 13 and later).
 */
const BUILDS: readonly Build[] = [
  {
    pkg: '@trufflesuite/uws-js-unofficial',
    file: (rt) => `binaries/uws_${rt.platform}_${rt.arch}_${rt.abi}.node`,
    abis: ['115'],
    arches: ['x64', 'arm64', 'arm'],
  },
  {
    pkg: '@btc-vision/uwebsockets.js',
    file: (rt) => `uws_${rt.platform}_${rt.arch}_${rt.abi}.node`,
    abis: ['115', '127', '137'],
    arches: ['x64', 'arm64'],
    minGlibc: '2.38',
  },
];

/** What to tell someone whose combination has no binary. */
export const WORKING_COMBINATIONS =
  'Node.js 20 on Linux x64, arm64 or armv7 (any glibc: Debian 12/13, Raspberry Pi OS), or Node.js 22 or 24 on ' +
  'Linux x64 or arm64 with glibc 2.38 or newer (Debian 13 "trixie", Raspberry Pi OS trixie, Ubuntu 24.04)';

function glibcAtLeast(have: string, need: string): boolean {
  const [a = 0, b = 0] = have.split('.').map(Number);
  const [c = 0, d = 0] = need.split('.').map(Number);
  return a !== c ? a > c : b >= d;
}

export function currentRuntime(): Runtime {
  let glibc: { version: string | undefined } | undefined;
  return {
    platform: process.platform,
    arch: process.arch,
    abi: process.versions.modules,
    nodeVersion: process.version,
    // Read only where a choice depends on it (Node 22 and 24): node writes its whole diagnostic report to give it,
    // a burst of allocation that an appliance on Node 20 need not pay at every start.
    get glibc() {
      glibc ??= {
        version: (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
          ?.glibcVersionRuntime,
      };
      return glibc.version;
    },
  };
}

/**
 * Picks the uWS binary: an official `uWebSockets.js` when the owner installed one, else the first npm-hosted build
 * that has a binary for this runtime. Each build is required by its binary path, never by the package's entry point,
 * because an entry point may fall back to a pure-JS server whose onWritable/tryEnd are broken.
 */
export function chooseUws(
  rt: Runtime,
  load: (pkg: string, file?: string) => unknown,
): { module: UwsModule; source: string } {
  const tried: string[] = [];
  try {
    return { module: load('uWebSockets.js') as UwsModule, source: 'uWebSockets.js' };
  } catch (err) {
    // Usually not installed; an installed one that cannot load is worth naming.
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND')
      tried.push(`uWebSockets.js: ${(err as Error).message}`);
  }
  for (const build of BUILDS) {
    if (!build.abis.includes(rt.abi) || !build.arches.includes(rt.arch)) continue;
    const file = build.file(rt);
    // Only its Linux binaries link against glibc; loading them on an older one fails with a cryptic symbol error.
    if (
      build.minGlibc &&
      rt.platform === 'linux' &&
      (rt.glibc === undefined || !glibcAtLeast(rt.glibc, build.minGlibc))
    ) {
      tried.push(
        `${build.pkg}: needs glibc ${build.minGlibc}, this system has ${rt.glibc ? `glibc ${rt.glibc}` : 'another C library'}`,
      );
      continue;
    }
    try {
      return { module: load(build.pkg, file) as UwsModule, source: `${build.pkg} (${file.split('/').pop()})` };
    } catch (err) {
      tried.push(`${build.pkg}/${file}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(
    `azcd needs a native uWebSockets.js binary for Node ${rt.nodeVersion} (ABI ${rt.abi}) on ${rt.platform} ${rt.arch}` +
      `${rt.glibc ? ` with glibc ${rt.glibc}` : ''} and will not run on a pure-JS fallback. It runs on ${WORKING_COMBINATIONS}; ` +
      `install one of those, then run npm ci.${tried.length ? ` Tried: ${tried.join('; ')}.` : ' No installed build has a binary for it.'}`,
  );
}

/**
 * Loads a package's entry point, or one file of it by path: a package's "exports" may hide its binaries from
 * require('pkg/file'), so the file is found from the package directory, which resolving (not running) the entry gives.
 */
function requireFrom(pkg: string, file?: string): unknown {
  if (!file) return require(pkg);
  let dir = path.dirname(require.resolve(pkg));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return require(path.join(dir, file));
}

let loaded: { module: UwsModule; source: string } | undefined;

/** Returns uWS for this process (chosen once). */
export function loadUws(): { module: UwsModule; source: string } {
  loaded ??= chooseUws(currentRuntime(), requireFrom);
  return loaded;
}
