// One Clock interface for the whole project: drivers, the playback engine and the daemon's timers take the same
// type (drivers/core/clock.ts, re-exported by drivers/driver.ts and daemon/domain/shared), so a test's manual clock
// fits every one of them. A second declaration fails here.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths.js';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sources(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

t.test('the project declares one clock interface', async (t) => {
  const declared = ['daemon', 'drivers', 'native']
    .flatMap(sources)
    .flatMap((file) =>
      [
        ...readFileSync(path.join(ROOT, file), 'utf8').matchAll(
          /^export (?:interface|type) (\w*Clock)\b(?! = Clock)/gm,
        ),
      ].map((m) => `${file}: ${m[1]}`),
    );
  t.same(declared, ['drivers/core/clock.ts: Clock']);
});
