// The pure playlist rules: newOrder permutations, extended M3U text and export path checks.
import t from 'tap';
import { checkPermutation, toM3u } from '../../daemon/domain/playlists.js';
import { checkExportPath } from '../../daemon/domain/export-path.js';
import { HttpError } from '../../daemon/http/problem.js';

const rejects = (fn: () => unknown): boolean => {
  try {
    fn();
    return false;
  } catch (err) {
    return err instanceof HttpError && err.status === 400;
  }
};

t.test('a permutation of 0..n-1 is accepted', async (t) => {
  t.doesNotThrow(() => checkPermutation([2, 0, 1], 3));
  t.doesNotThrow(() => checkPermutation([], 0));
});

t.test('wrong length, repeats, out of range and non-integers are rejected', async (t) => {
  t.ok(rejects(() => checkPermutation([0, 1], 3)), 'too short');
  t.ok(rejects(() => checkPermutation([0, 1, 2, 3], 3)), 'too long');
  t.ok(rejects(() => checkPermutation([0, 0, 1], 3)), 'repeat');
  t.ok(rejects(() => checkPermutation([0, 1, 3], 3)), 'out of range');
  t.ok(rejects(() => checkPermutation([-1, 0, 1], 3)), 'negative');
  t.ok(rejects(() => checkPermutation([0.5, 1, 2], 3)), 'fraction');
});

t.test('M3U output has a header, one EXTINF per track, -1 for unknown durations, and no line breaks in fields', async (t) => {
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
});

t.test('export paths: relative m3u/m3u8 inside the folder only', async (t) => {
  t.same(checkExportPath('a/./b/list.m3u8'), ['a', 'b', 'list.m3u8']);
  t.same(checkExportPath('list.M3U'), ['list.M3U']);
  for (const bad of ['', '/abs.m3u', 'C:\\x.m3u', '..\\x.m3u', 'a/../x.m3u', 'x.txt', 'x\u0000.m3u', 'x\n.m3u', `${'é'.repeat(130)}.m3u`, './']) {
    t.ok(rejects(() => checkExportPath(bad)), `${JSON.stringify(bad).slice(0, 30)} is rejected`);
  }
});
