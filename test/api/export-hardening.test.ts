// Export under attack: long names, symbolic links on the path, and a folder swapped for a link while exports run.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { client } from '../helpers/client.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';

/** Every entry below `dir`, as relative paths (links are listed, not followed). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: false }) as string[];
}

/**
 * A separate process that keeps replacing `victim` with a real folder, then with a link to `outside`, printing
 * "swapping" once it has done both so the test starts exporting only when the race is on. Each state is held for
 * a varying part of a millisecond (the attack's rhythm, not a wait for anything), so every step of an export meets
 * every state. A folder that cannot be removed (the daemon wrote into it) is moved aside into `aside`, which is
 * inside the export directory.
 */
const SWAPPER = `
const fs = require('node:fs');
const [victim, outside, aside] = process.argv.slice(1);
const pause = new Int32Array(new SharedArrayBuffer(4));
const holds = [0, 0.1, 0.3, 1];
let round = 0;
for (;;) {
  try {
    if (fs.lstatSync(victim, { throwIfNoEntry: false })?.isSymbolicLink()) {
      fs.unlinkSync(victim);
      fs.mkdirSync(victim);
    } else {
      try {
        fs.rmdirSync(victim);
      } catch {
        fs.renameSync(victim, aside + '/' + round);
      }
      fs.symlinkSync(outside, victim);
    }
  } catch {}
  Atomics.wait(pause, 0, 0, holds[round % holds.length]);
  if (++round === 2) process.stdout.write('swapping\\n');
}
`;

t.test('export hardening', async (t) => {
  const d = await startTestDaemon(t);
  const api = client(d.base, d.adminKey);
  const exportDir = path.join(d.stateDir, 'exports');
  mkdirSync(exportDir, { recursive: true });
  const id = (
    await api.post('/api/playlists', {
      name: 'Race',
      tracks: [{ title: 'a', uri: 'file:///a.flac', durationMs: 1000 }],
    })
  ).body.id;
  const exportTo = (filePath: string) => api.post(`/api/playlists/${id}/export`, { filePath });

  t.test('a 255-byte path and a 240-byte file name are written (the temporary name stays short)', async (t) => {
    const longest = `${'a'.repeat(250)}.m3u8`;
    t.equal(Buffer.byteLength(longest), 255);
    t.equal((await exportTo(longest)).status, 204);
    t.ok(existsSync(path.join(exportDir, longest)));
    const deep = `${'b'.repeat(235)}.m3u8`;
    t.equal((await exportTo(`x/${deep}`)).status, 204);
    t.ok(existsSync(path.join(exportDir, 'x', deep)));
    t.same(
      tree(exportDir).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
  });

  t.test('paths and names over 255 bytes are 400, not 500', async (t) => {
    for (const filePath of [`${'a'.repeat(251)}.m3u8`, `${'é'.repeat(126)}.m3u8`, `${'d/'.repeat(126)}x.m3u`]) {
      const res = await exportTo(filePath);
      t.equal(res.status, 400, `${Buffer.byteLength(filePath)} bytes`);
      t.ok(res.body.errors?.filePath, 'names filePath');
    }
  });

  t.test('a symbolic link on the path is refused even when it points inside the export directory', async (t) => {
    mkdirSync(path.join(exportDir, 'real'));
    symlinkSync(path.join(exportDir, 'real'), path.join(exportDir, 'alias'));
    const res = await exportTo('alias/list.m3u8');
    t.equal(res.status, 400);
    t.match(res.body.detail, /symbolic links are not followed/);
    t.same(readdirSync(path.join(exportDir, 'real')), []);
  });

  t.test('a folder swapped for a link to outside while 200 exports run never gets a file outside', async (t) => {
    const outside = tempDir('azc-outside-');
    t.teardown(() => rmSync(outside, { recursive: true, force: true }));
    const victim = path.join(exportDir, 'swap');
    const aside = path.join(exportDir, 'aside');
    mkdirSync(aside);
    // A clean environment: the test runner's loaders would install signal handlers the busy loop never runs.
    const swapper = spawn(process.execPath, ['-e', SWAPPER, victim, outside, aside], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {},
    });
    const exited = once(swapper, 'exit');
    t.teardown(async () => {
      if (swapper.exitCode === null && swapper.signalCode === null) swapper.kill('SIGKILL');
      await exited;
    });
    await once(swapper.stdout, 'data');

    const statuses = new Map<number, number>();
    const batch = 10;
    for (let start = 0; start < 200; start += batch) {
      const replies = await Promise.all(
        Array.from({ length: batch }, (_, i) =>
          exportTo(i % 2 ? `swap/list-${start + i}.m3u8` : `swap/deeper/list-${start + i}.m3u8`),
        ),
      );
      for (const reply of replies) statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    }
    swapper.kill('SIGKILL');
    await exited;

    t.same(tree(outside), [], 'nothing was created outside the export directory');
    const unexpected = [...statuses.keys()].filter((status) => status !== 204 && (status < 400 || status >= 500));
    t.same(unexpected, [], `every export answered 204 or a 4xx: ${JSON.stringify([...statuses])}`);
    t.same(
      readdirSync(exportDir).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
  });
});
