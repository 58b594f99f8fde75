// `npm start` compiles only when a source is newer than the last good build (scripts/ensure-build.mjs).

import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { ensureBuild, OUTPUT, STAMP } from '../../scripts/ensure-build.mjs';
import { tempDir } from '../helpers/daemon.js';
import { ROOT } from '../helpers/paths.js';

/** A small source tree shaped like the project, and a stand-in compiler that counts its runs. */
function project(t: Test) {
  const root = tempDir('azc-build-');
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const files = [
    'daemon/main.ts',
    'daemon/http/server.ts',
    'drivers/driver.ts',
    'native/index.ts',
    'tsconfig.json',
    'package.json',
  ];
  // Every time is explicit and hours apart, so no file system clock granularity can blur the order.
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);
  for (const file of [...files, 'daemon/ui/app.js']) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '// source\n');
    utimesSync(path.join(root, file), hoursAgo(3), hoursAgo(3));
  }
  let builds = 0;
  let succeed = true;
  const build = (): boolean => {
    builds++;
    if (!succeed) return false;
    mkdirSync(path.dirname(path.join(root, OUTPUT)), { recursive: true });
    writeFileSync(path.join(root, OUTPUT), '// compiled\n');
    return true;
  };
  const start = () => ensureBuild({ root, build, log: () => undefined });
  /** A file saved after the last build: the build is dated two hours ago, the file one hour ago. */
  const touch = (file: string): void => {
    utimesSync(path.join(root, STAMP), hoursAgo(2), hoursAgo(2));
    utimesSync(path.join(root, file), hoursAgo(1), hoursAgo(1));
  };
  return {
    root,
    start,
    touch,
    builds: () => builds,
    failNextBuilds: (fail: boolean) => (succeed = !fail),
  };
}

t.test('the first start builds and the second does not', async (t) => {
  const p = project(t);
  t.same(await p.start(), { built: true });
  t.same(await p.start(), { built: false });
  t.equal(p.builds(), 1);
});

t.test('a changed source, tsconfig or package.json builds again, once', async (t) => {
  const p = project(t);
  await p.start();
  for (const file of [
    'drivers/driver.ts',
    'daemon/http/server.ts',
    'native/index.ts',
    'tsconfig.json',
    'package.json',
  ]) {
    p.touch(file);
    t.same(await p.start(), { built: true }, `${file} changed`);
    t.same(await p.start(), { built: false }, `then up to date`);
  }
  t.equal(p.builds(), 6);
});

t.test('files tsc does not compile do not trigger a build', async (t) => {
  const p = project(t);
  await p.start();
  p.touch('daemon/ui/app.js');
  t.same(await p.start(), { built: false });
});

t.test('a missing output builds even when the stamp is newer', async (t) => {
  const p = project(t);
  await p.start();
  rmSync(path.join(p.root, OUTPUT));
  t.same(await p.start(), { built: true });
});

t.test('a failed build leaves no stamp, so the next start tries again', async (t) => {
  const p = project(t);
  await p.start();
  p.touch('daemon/main.ts');
  p.failNextBuilds(true);
  t.same(await p.start(), { built: false, failed: true });
  p.failNextBuilds(false);
  t.same(await p.start(), { built: true });
  t.equal(p.builds(), 3);
});

t.test('npm start runs the check before the daemon and npm run build always compiles and stamps', async (t) => {
  const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
  t.equal(scripts.prestart, 'node scripts/ensure-build.mjs');
  t.equal(scripts.build, 'node scripts/ensure-build.mjs --force');
  t.equal(scripts.start, 'node dist/daemon/main.js');
  t.equal(STAMP, path.join('dist', '.build-stamp'));
});
