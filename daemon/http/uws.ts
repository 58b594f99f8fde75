// Loads the native uWebSockets.js binary, refusing any pure-JS fallback (its onWritable/tryEnd are broken).
import { createRequire } from 'node:module';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';
export type UwsModule = typeof Uws;

const require = createRequire(import.meta.url);

let loaded: { module: UwsModule; source: string } | undefined;

/** Returns uWS, preferring an official `uWebSockets.js` build when one is installed. */
export function loadUws(): { module: UwsModule; source: string } {
  if (loaded) return loaded;
  try {
    loaded = { module: require('uWebSockets.js') as UwsModule, source: 'uWebSockets.js' };
    return loaded;
  } catch {
    // Not installed: use the npm-hosted build below.
  }
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    const module = require(`@trufflesuite/uws-js-unofficial/binaries/${binary}`) as UwsModule;
    loaded = { module, source: `@trufflesuite/uws-js-unofficial (${binary})` };
    return loaded;
  } catch (err) {
    throw new Error(
      `azcd needs the native uWebSockets.js binary ${binary} (Node ${process.version}, ABI ${process.versions.modules}) ` +
        `and will not run on its pure-JS fallback. Use Node.js 20 on linux x64/arm64/arm, then run npm ci. ` +
        `Cause: ${(err as Error).message}`,
    );
  }
}
