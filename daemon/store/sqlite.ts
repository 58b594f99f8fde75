// Opens the daemon's SQLite files: the one place that knows how better-sqlite3 finds its native addon.

import { createRequire } from 'node:module';
import Database from 'better-sqlite3';

let addonPath: string | undefined;

/**
 * Opens a SQLite file with better-sqlite3's addon found once by node's own resolution. Left to find it,
 * better-sqlite3 asks the `bindings` package, which tries a dozen places per call; and the daemon's bundle carries
 * better-sqlite3's JavaScript (scripts/bundle.mjs), so nothing else of it is looked up in node_modules at start-up.
 */
export function openSqlite(file: string): Database.Database {
  addonPath ??= createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  return new Database(file, { nativeBinding: addonPath });
}
