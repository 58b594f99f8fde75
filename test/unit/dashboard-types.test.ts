// The dashboard's scripts under the type check: each opts in, tsc finds nothing on tsconfig.ui.json, and the types
// they are checked against are those the TypeBox schemas generate today.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import t from 'tap';
import { UI_DIR } from '../../daemon/paths.js';
import { renderUiTypes, UI_TYPES_FILE } from '../../scripts/ui-types.js';
import { ROOT } from '../helpers/paths.js';

function scripts(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return scripts(file);
    return file.endsWith('.js') ? [file] : [];
  });
}

t.test('every script of the dashboard starts with // @ts-check', async (t) => {
  const all = scripts(UI_DIR);
  t.ok(all.length > 20, `${all.length} scripts`);
  for (const file of all) {
    t.ok(readFileSync(file, 'utf8').startsWith('// @ts-check\n'), path.relative(UI_DIR, file));
  }
});

t.test('daemon/ui/schemas.d.ts is what the schemas generate today', async (t) => {
  t.equal(
    readFileSync(UI_TYPES_FILE, 'utf8'),
    renderUiTypes(),
    'after a schema change, `node --import tsx scripts/ui-types.ts` rewrites it',
  );
});

t.test('the dashboard type-checks: tsc -p tsconfig.ui.json reports nothing', async (t) => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.ui.json'], { cwd: ROOT, encoding: 'utf8' });
  t.equal(run.stdout + run.stderr, '', 'no error');
  t.equal(run.status, 0);
});
