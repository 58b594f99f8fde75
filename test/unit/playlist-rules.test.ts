// Playlist rules: newOrder permutations, extended M3U text, export path checks and the export directory's quotas.

import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkExportPath, ExportDirectory } from '../../daemon/domain/playlists/export-path.js';
import { checkPermutation, toM3u } from '../../daemon/domain/playlists/playlists.js';
import { asHttpError, HttpError } from '../../daemon/http/problem.js';

const rejects = (fn: () => unknown): boolean => {
  try {
    fn();
    return false;
  } catch (err) {
    return asHttpError(err)?.status === 400;
  }
};

t.test('a permutation of 0..n-1 is accepted', async (t) => {
  t.doesNotThrow(() => checkPermutation([2, 0, 1], 3));
  t.doesNotThrow(() => checkPermutation([], 0));
});

t.test('wrong length, repeats, out of range and non-integers are rejected', async (t) => {
  t.ok(
    rejects(() => checkPermutation([0, 1], 3)),
    'too short',
  );
  t.ok(
    rejects(() => checkPermutation([0, 1, 2, 3], 3)),
    'too long',
  );
  t.ok(
    rejects(() => checkPermutation([0, 0, 1], 3)),
    'repeat',
  );
  t.ok(
    rejects(() => checkPermutation([0, 1, 3], 3)),
    'out of range',
  );
  t.ok(
    rejects(() => checkPermutation([-1, 0, 1], 3)),
    'negative',
  );
  t.ok(
    rejects(() => checkPermutation([0.5, 1, 2], 3)),
    'fraction',
  );
});

t.test(
  'M3U output has a header, one EXTINF per track, -1 for unknown durations, and no line breaks in fields',
  async (t) => {
    const text = toM3u({
      id: 'x',
      name: 'Mix\nTwo',
      isFavorite: false,
      createdAt: '',
      tracks: [
        { id: 'a', title: 'A', uri: 'u:a', durationMs: 1500 },
        { id: 'b', title: 'B\r\nC', uri: 'u:b', durationMs: null },
      ],
    });
    t.equal(text, '#EXTM3U\n#PLAYLIST:Mix Two\n#EXTINF:2,A\nu:a\n#EXTINF:-1,B C\nu:b\n');
  },
);

t.test('export paths: relative m3u/m3u8 inside the folder only', async (t) => {
  t.same(checkExportPath('a/./b/list.m3u8'), ['a', 'b', 'list.m3u8']);
  t.same(checkExportPath('list.M3U'), ['list.M3U']);
  for (const bad of [
    '',
    '/abs.m3u',
    'C:\\x.m3u',
    '..\\x.m3u',
    'a/../x.m3u',
    'x.txt',
    'x\u0000.m3u',
    'x\n.m3u',
    `${'é'.repeat(130)}.m3u`,
    './',
  ]) {
    t.ok(
      rejects(() => checkExportPath(bad)),
      `${JSON.stringify(bad).slice(0, 30)} is rejected`,
    );
  }
});

t.test('export paths: 255 bytes is the most, for the path and for each name', async (t) => {
  t.same(checkExportPath(`${'a'.repeat(250)}.m3u8`), [`${'a'.repeat(250)}.m3u8`]);
  t.ok(
    rejects(() => checkExportPath(`${'a'.repeat(251)}.m3u8`)),
    '256 bytes',
  );
  t.ok(
    rejects(() => checkExportPath(`${'ü'.repeat(126)}.m3u`)),
    '256 bytes of two-byte characters',
  );
});

const status = (promise: Promise<unknown>): Promise<number> =>
  promise.then(
    () => 204,
    (err: unknown) => asHttpError(err)?.status ?? 500,
  );

t.test('the export directory', async (t) => {
  const dirs: string[] = [];
  t.teardown(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const fresh = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'azc-exports-'));
    dirs.push(dir);
    return dir;
  };
  const job = (text = '#EXTM3U\n') => ({ render: () => text, authorize: () => undefined });

  t.test('concurrent writes admit exactly as many new files as the cap allows', async (t) => {
    const dir = fresh();
    const exports = new ExportDirectory(dir, { exportFiles: 3, exportBytes: 1_000_000 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => status(exports.write([`f${i}.m3u8`], job()))),
    );
    t.equal(results.filter((s) => s === 204).length, 3);
    t.equal(results.filter((s) => s === 409).length, 7);
    t.equal(readdirSync(dir).length, 3);
  });

  t.test('files removed by hand free their share of the quota', async (t) => {
    const dir = fresh();
    const exports = new ExportDirectory(dir, { exportFiles: 1, exportBytes: 1_000_000 }, 0);
    t.equal(await status(exports.write(['a.m3u8'], job())), 204);
    t.equal(await status(exports.write(['b.m3u8'], job())), 409);
    rmSync(path.join(dir, 'a.m3u8'));
    t.equal(await status(exports.write(['b.m3u8'], job())), 204, 'a refused write counts again first');
  });

  t.test('temporary files left by a power cut are removed and not counted', async (t) => {
    const dir = fresh();
    const stale = path.join(dir, '.azcd-0123456789ab.tmp');
    writeFileSync(stale, 'half a file');
    const exports = new ExportDirectory(dir, { exportFiles: 1, exportBytes: 1_000_000 });
    t.equal(await status(exports.write(['a.m3u8'], job())), 204);
    t.notOk(existsSync(stale));
  });

  t.test('a caller refused just before the file is put in place leaves nothing behind', async (t) => {
    const dir = fresh();
    const exports = new ExportDirectory(dir, { exportFiles: 10, exportBytes: 1_000_000 });
    const refused = {
      render: () => '#EXTM3U\n',
      authorize: () => {
        throw new HttpError(401, 'signed out meanwhile');
      },
    };
    t.equal(await status(exports.write(['new', 'folder', 'a.m3u8'], refused)), 401);
    t.same(readdirSync(dir), [], 'no folder, file or temporary file');
    t.equal(await status(exports.write(['a.m3u8'], job())), 204, 'and the quota was not charged');
  });
});
