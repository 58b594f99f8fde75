// npm run bench's figures in docs/benchmarks.md (test/bench/lib/doc-figures.ts): each section's table replaces what
// stood between its own markers, and nothing else in the file changes.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { beginMarker, endMarker, sectionFigures, writeFigures } from '../bench/lib/doc-figures.js';
import { makeRow } from '../bench/lib/report.js';

const measured = {
  at: new Date('2026-12-07T05:00:00Z'),
  quick: false,
  load: [3.2, 4.1] as [number, number],
  machine: { cores: 2, cpuModel: 'test CPU', node: 'v20' },
};

function docWith(text: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-bench-doc-'));
  const file = path.join(dir, 'benchmarks.md');
  writeFileSync(file, text);
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

t.test("a section's figures replace the old ones between its markers, and the text around them stays", async (t) => {
  const before = `# Benchmarks\n\nHow to run.\n\n${beginMarker('http')}\nold figures\n${endMarker('http')}\n\nAfter.\n`;
  const { file, cleanup } = docWith(before);
  t.teardown(cleanup);
  const result = writeFigures({ http: 'new figures' }, file);
  t.same(result, { written: ['http'], missing: [] });
  t.equal(
    readFileSync(file, 'utf8'),
    `# Benchmarks\n\nHow to run.\n\n${beginMarker('http')}\nnew figures\n${endMarker('http')}\n\nAfter.\n`,
  );
});

t.test('a section the file has no markers for is reported, and the file is left as it was', async (t) => {
  const before = `# Benchmarks\n\n${beginMarker('http')}\nkept\n${endMarker('http')}\n`;
  const { file, cleanup } = docWith(before);
  t.teardown(cleanup);
  t.same(writeFigures({ sse: 'figures' }, file), { written: [], missing: ['sse'] });
  t.equal(readFileSync(file, 'utf8'), before);
});

t.test(
  'the figures name when, where and under what load they were measured, with each row and its notes',
  async (t) => {
    const rows = [
      makeRow({
        section: 'http',
        name: 'PUT volume vs the same-work baseline',
        value: 30_000,
        unit: 'req/s',
        baseline: 40_000,
        ratio: 0.75,
        spread: [0.7, 0.8],
        target: { on: 'ratio', op: '>=', threshold: 0.7 },
        note: 'CPU per request: azcd 20 µs, baseline 15 µs',
      }),
    ];
    const text = sectionFigures(rows, measured, 'abc1234');
    t.match(
      text,
      /^Measured 2026-12-07 05:00 UTC \(full run\) at abc1234; 2 cores \(test CPU\), node v20; load average 3\.2/,
    );
    t.match(text, /other work competed/, 'a load above 1 is called out');
    t.match(
      text,
      /\| PUT volume vs the same-work baseline \| 30000 req\/s \| 40000 req\/s \| 0\.75 \(0\.7–0\.8\) \| ratio ≥ 0\.7 \| ✓ \|/,
    );
    t.match(text, /- PUT volume vs the same-work baseline: CPU per request: azcd 20 µs, baseline 15 µs/);
  },
);
