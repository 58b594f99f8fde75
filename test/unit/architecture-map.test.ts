// ARCHITECTURE.md is the map of the code as it is: its capability table names every folder of daemon/domain/, and
// no folder that is not there; each service it lists is exported by that folder's index.ts.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/paths.js';

const doc = readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
const section = doc.slice(
  doc.indexOf('## Where each capability lives'),
  doc.indexOf('\n## ', doc.indexOf('## Where each capability lives') + 1),
);
/** The table's rows: folder → the services column. */
const rows = new Map(
  [...section.matchAll(/^\| `([a-z-]+)\/` \| .* \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!] as const),
);

t.test('every capability folder has a row in the table, and every row a folder', async (t) => {
  const folders = readdirSync(path.join(ROOT, 'daemon', 'domain'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  t.ok(rows.size > 0, 'the table is found');
  t.same([...rows.keys()].sort(), folders);
});

t.test("each service a row names is exported by its folder's index.ts (or a module it re-exports)", async (t) => {
  for (const [folder, services] of rows) {
    const dir = path.join(ROOT, 'daemon', 'domain', folder);
    const code = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => readFileSync(path.join(dir, name), 'utf8'))
      .join('\n');
    for (const [, name] of services.matchAll(/`([A-Z][A-Za-z]+)`/g)) {
      t.match(code, new RegExp(`export (?:class|function|const|interface|type) ${name}\\b`), `${folder}/: ${name}`);
    }
  }
});
