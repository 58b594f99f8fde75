// The layer rules of ARCHITECTURE.md hold for every TypeScript file under daemon/, drivers/ and native/, and the checker
// that says so finds each kind of wrong arrow in a small made-up tree.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { checkLayers, layerOf } from '../helpers/layer-rules.js';
import { ROOT } from '../helpers/paths.js';

/** Every .ts file under the folders the rules cover, by repository path. */
function projectSources(): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        // The dashboard is browser code with its own type check (tsconfig.ui.json), outside the daemon's layers.
        if (entry.name !== 'node_modules' && entry.name !== 'build' && rel !== 'daemon/ui') walk(rel);
      } else if (entry.name.endsWith('.ts')) {
        sources.set(rel, readFileSync(path.join(ROOT, rel), 'utf8'));
      }
    }
  };
  for (const dir of ['daemon', 'drivers', 'native']) walk(dir);
  return sources;
}

t.test('the project keeps the layer rules', async (t) => {
  const sources = projectSources();
  t.ok(sources.size > 100, `${sources.size} files read`);
  const findings = checkLayers(sources);
  t.same(findings, [], findings.length ? `wrong arrows:\n${findings.join('\n')}` : 'no wrong arrow');
});

/** A well-formed little tree: one file per layer, each importing only what it may. */
const GOOD: Record<string, string> = {
  'drivers/driver.ts': `export interface AmplifierDriver { name: string }`,
  'drivers/index.ts': `export async function createDriver() { return import('./monoprice/index.js'); }`,
  'drivers/monoprice/index.ts': `import type { AmplifierDriver } from '../driver.js'; export const x: AmplifierDriver | undefined = undefined;`,
  'native/index.ts': `export const notify = () => {};`,
  'daemon/config.ts': `import { createDriver } from '../drivers/index.js'; export const c = createDriver;`,
  'daemon/store/users-repo.ts': `import Database from 'better-sqlite3'; import type { Role } from '../domain/shared/index.js'; export const q = 'SELECT id FROM users'; export type R = Role; export const D = Database;`,
  'daemon/domain/shared/index.ts': `export type Role = 'Admin';`,
  'daemon/domain/audio/index.ts': `export * from './zones.js';`,
  'daemon/domain/audio/zones.ts': `import type { Role } from '../shared/index.js'; import type { AmplifierDriver } from '../../../drivers/driver.js'; export type Z = Role | AmplifierDriver;`,
  'daemon/domain/scenes/index.ts': `import type { Z } from '../audio/index.js'; export type S = Z;`,
  'daemon/http/uws.ts': `import type * as Uws from '@trufflesuite/uws-js-unofficial'; import type { Role } from '../domain/shared/index.js'; export type U = typeof Uws | Role;`,
  'daemon/api/zones.ts': `import type { U } from '../http/uws.js'; import type { S } from '../domain/scenes/index.js'; export type A = U | S;`,
  'daemon/app.ts': `import '../drivers/index.js'; import './api/zones.js'; import './store/users-repo.js'; import '../native/index.js';`,
};

/** The findings for the good tree with `changes` applied (a file replaced or added). */
function findingsWith(changes: Record<string, string>): string[] {
  return checkLayers(new Map(Object.entries({ ...GOOD, ...changes })));
}

t.test('the checker finds each kind of wrong arrow', async (t) => {
  t.same(findingsWith({}), [], 'the good tree passes');
  const cases: Array<[name: string, changes: Record<string, string>, expected: RegExp]> = [
    [
      'the daemon reaching into a driver family',
      { 'daemon/config.ts': `import { x } from '../drivers/monoprice/index.js';` },
      /config\.ts:1 → drivers\/monoprice\/index\.ts: daemon\/ reaches drivers\/ only through drivers\/index\.ts/,
    ],
    [
      'a driver importing the daemon',
      { 'drivers/monoprice/index.ts': `import '../../daemon/config.js';` },
      /drivers\/ never imports daemon\//,
    ],
    [
      'the domain importing the HTTP layer',
      { 'daemon/domain/audio/zones.ts': `import '../../http/uws.js';` },
      /domain may not import http/,
    ],
    [
      'the HTTP layer importing the routes',
      { 'daemon/http/uws.ts': `import '../api/zones.js';` },
      /http may not import api/,
    ],
    [
      'the store importing a domain value',
      { 'daemon/store/users-repo.ts': `import { Role } from '../domain/shared/index.js';` },
      /the store may import from the domain only the types named/,
    ],
    [
      'the store importing another domain type',
      { 'daemon/store/users-repo.ts': `import type { Caller } from '../domain/shared/index.js';` },
      /only the types named/,
    ],
    [
      'a route reaching inside a domain folder',
      { 'daemon/api/zones.ts': `import '../domain/audio/zones.js';` },
      /enter domain\/audio\/ through its index\.ts/,
    ],
    [
      'a capability importing one the table does not allow',
      { 'daemon/domain/audio/zones.ts': `import '../scenes/index.js';` },
      /domain\/audio\/ may import domain\/shared\/ only/,
    ],
    [
      'a domain folder missing from the table',
      { 'daemon/domain/weather/index.ts': `import '../audio/index.js';` },
      /domain\/weather\/ is not in the capability table/,
    ],
    [
      'uWS outside the HTTP layer',
      { 'daemon/api/zones.ts': `const uws = require('uWebSockets.js');` },
      /only daemon\/http\/ imports uWS/,
    ],
    [
      'a uWS package named outside the HTTP layer',
      { 'daemon/mqtt/x.ts': `export const pkg = '@btc-vision/uwebsockets.js';` },
      /names @btc-vision\/uwebsockets\.js; only daemon\/http\/ touches uWS/,
    ],
    [
      'SQLite opened outside the store',
      { 'daemon/domain/audio/zones.ts': `import Database from 'better-sqlite3';` },
      /only daemon\/store\/ imports better-sqlite3/,
    ],
    [
      'SQL text outside the store',
      { 'daemon/domain/audio/zones.ts': 'export const q = `UPDATE zones SET volume = 1`;' },
      /SQL text "UPDATE zones SET volume = 1…"/,
    ],
    [
      'a statement prepared outside the store',
      { 'daemon/api/zones.ts': `declare const db: { prepare(s: string): void }; db.prepare(x);` },
      /calls prepare\(\)\/pragma\(\)/,
    ],
    ['a file in no layer', { 'daemon/stray.ts': `export {};` }, /daemon\/stray\.ts: belongs to no layer/],
  ];
  for (const [name, changes, expected] of cases) {
    const findings = findingsWith(changes);
    t.equal(findings.length, 1, `${name}: one finding (${findings.join(' | ')})`);
    t.match(findings[0] ?? '', expected, name);
  }
});

t.test('every file of the tree belongs to a layer named in ARCHITECTURE.md', async (t) => {
  const layers = new Set([...projectSources().keys()].map((file) => layerOf(file)));
  t.notOk(layers.has(undefined), 'no file outside the layers');
  const architecture = readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  for (const layer of layers)
    t.match(architecture, new RegExp(`\\| \`${layer}\` \\|`), `ARCHITECTURE.md has a row for ${layer}`);
});
