// ARCHITECTURE.md is the map of the code as it is: its capability table names every folder of daemon/domain/, and
// no folder that is not there; each service it lists is exported by that folder's index.ts; the dependencies it lists
// between capabilities are the ones the layer rules enforce. And the tree is its own reference: no file in it cites
// a file outside it.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { CAPABILITIES } from '../helpers/layer-rules.js';
import { citationsOutside, isCheckedText } from '../helpers/outside-citations.js';
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

t.test(
  'the dependencies between capabilities that ARCHITECTURE.md lists are the ones the layer rules enforce',
  async (t) => {
    const start = doc.indexOf('- **Capabilities depend on each other only as listed**');
    const bullet = doc.slice(start, doc.indexOf('\n- ', start + 1)).replace(/\s+/g, ' ');
    t.ok(start >= 0, 'the list is found');
    const listed = Object.fromEntries(
      [...bullet.matchAll(/`([a-z-]+)\/` may import ((?:`[a-z-]+\/`(?:, | and )?)+)/g)].map((m) => [
        m[1]!,
        [...m[2]!.matchAll(/`([a-z-]+)\//g)].map((d) => d[1]!).sort(),
      ]),
    );
    const enforced = Object.fromEntries(
      Object.entries(CAPABILITIES)
        .filter(([, may]) => may.length > 0)
        .map(([folder, may]) => [folder, [...may].sort()]),
    );
    t.same(listed, enforced);
  },
);

/** The files of the tree as git sees them: tracked, and new ones not ignored (so a file is checked before its commit). */
function treeFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter((file) => file !== '' && isCheckedText(file));
}

// The checker and this test spell out the names and shapes they look for.
const SELF = new Set(['test/helpers/outside-citations.ts', 'test/unit/architecture-map.test.ts']);

t.test('no file of the repository cites a file outside it: its conventions are its own', async (t) => {
  const files = new Map(
    treeFiles()
      .filter((file) => !SELF.has(file))
      .flatMap((file): Array<[string, string]> => {
        try {
          return [[file, readFileSync(path.join(ROOT, file), 'utf8')]];
        } catch {
          return []; // listed by git but deleted in the working tree: nothing to read
        }
      }),
  );
  t.ok(files.has('README.md') && files.has('daemon/main.ts'), `the tree is read (${files.size} files)`);
  t.same(citationsOutside(files), []);
});

t.test('the citation checker finds each kind of citation of a file outside the repository', async (t) => {
  const good = new Map([
    ['README.md', 'See [the API](docs/api.md#errors), [decisions](docs/decisions.md) and https://example.org/x.md.'],
    ['docs/api.md', 'Back to the [README](../README.md). mDNS names conflict as RFC 6762 §9 says.'],
    ['docs/decisions.md', 'Why, in a few lines; see docs/api.md.'],
    ['daemon/main.ts', "import { x } from './app.js';\nconst quoted = `import y from '../../../elsewhere.js'`;"],
    ['daemon/app.ts', 'export const x = 1; // UPnP DA 1.1 §1.1.2: a TTL of 2'],
  ]);
  t.same(citationsOutside(good), [], 'a tree citing only itself and public standards passes');
  const bad: Array<[file: string, text: string, finding: RegExp]> = [
    [
      'docs/api.md',
      'The [spec](../../shared/SPEC.md).',
      /docs\/api\.md:1: the link \.\.\/\.\.\/shared\/SPEC\.md leaves/,
    ],
    ['docs/api.md', 'The [old doc](docs/gone.md).', /names no file of the repository/],
    [
      'daemon/app.ts',
      "import { rule } from '../../shared/rules.js';",
      /the import \.\.\/\.\.\/shared\/rules\.js leaves/,
    ],
    ['daemon/app.ts', '// Checked once, as CONVENTIONS.md asks.', /CONVENTIONS\.md is not a file of the repository/],
    [
      'daemon/app.ts',
      '// A path is at most 255 bytes (the guide §4).',
      /a section \(§\) of a document that is neither a public standard nor in the repository: ".*the guide §"/,
    ],
    ['daemon/app.ts', '// As the interface spec types it.', /"interface spec" names a document kept outside/],
  ];
  for (const [file, text, finding] of bad) {
    const findings = citationsOutside(new Map([...good, [file, text]]));
    t.ok(
      findings.some((line) => finding.test(line)),
      `found in: ${text}`,
      { findings },
    );
  }
});
