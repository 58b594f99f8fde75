// A library listing is read and sorted in turns of the event loop: a folder of tens of thousands of tracks never
// holds the loop for the whole of it, and the entries and their order are those of one pass and one stable sort.
import t from 'tap';
import { COMPARISONS_PER_TURN, entriesInTurns, PAIRS_PER_TURN, sortInTurns } from '../../drivers/mpd/library.js';
import type { Pairs } from '../../drivers/mpd/protocol.js';

const names = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** 25 000 names in no order (a fixed shuffle), some equal but for case, each with its place in the input. */
function shuffledNames(): Array<{ name: string; at: number }> {
  return Array.from({ length: 25_000 }, (_, i) => ({
    name: `${(i * 7919) % 12_500} Track ${i % 2 ? 'B' : 'b'}.flac`,
    at: i,
  }));
}

t.test(
  'a long listing is sorted with at most COMPARISONS_PER_TURN comparisons in any one turn of the event loop',
  async (t) => {
    let comparisons = 0;
    let mostInATurn = 0;
    let turnStart = 0;
    let sorting = true;
    const watch = () => {
      mostInATurn = Math.max(mostInATurn, comparisons - turnStart);
      turnStart = comparisons;
      if (sorting) setImmediate(watch);
    };
    setImmediate(watch);
    const compare = (a: { name: string }, b: { name: string }) => {
      comparisons++;
      return names.compare(a.name, b.name);
    };
    await sortInTurns(shuffledNames(), compare);
    sorting = false;
    watch();
    t.ok(comparisons > COMPARISONS_PER_TURN * 10, `the sort took many turns' worth of comparisons (${comparisons})`);
    t.ok(
      mostInATurn <= COMPARISONS_PER_TURN,
      `no turn made more than ${COMPARISONS_PER_TURN} comparisons (the most: ${mostInATurn})`,
    );
  },
);

t.test(
  'the order is that of one stable sort: by name as people count, equal names in the order MPD gave them',
  async (t) => {
    const input = shuffledNames();
    const compare = (a: { name: string }, b: { name: string }) => names.compare(a.name, b.name);
    t.same(await sortInTurns(input, compare), [...input].sort(compare));
    t.same(await sortInTurns([], compare), []);
    t.same(
      (await sortInTurns([{ name: 'track 10' }, { name: 'Track 2' }, { name: 'track 2' }], compare)).map((e) => e.name),
      ['Track 2', 'track 2', 'track 10'],
    );
  },
);

/** Turns of the event loop that begin while `work` runs. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return turns;
}

t.test('the lines of a long listing become entries over many turns of the event loop', async (t) => {
  const pairs: Pairs = [['directory', 'big/sub']];
  for (let i = 0; i < 25_000; i++)
    pairs.push(
      [`file`, `big/${i}.flac`],
      ['Last-Modified', '2026-01-01T00:00:00Z'],
      ['Title', `Track ${i}`],
      ['duration', '1.500'],
    );
  let entries: Awaited<ReturnType<typeof entriesInTurns>> = [];
  const turns = await turnsDuring(async () => (entries = await entriesInTurns(pairs)));
  t.ok(
    turns >= Math.floor(pairs.length / PAIRS_PER_TURN) - 1,
    `the loop turned ${turns} times while ${pairs.length} lines were read`,
  );
  t.equal(entries.length, 25_001);
  t.same(entries[0], {
    kind: 'folder',
    uri: 'big/sub',
    name: 'sub',
    title: null,
    artist: null,
    album: null,
    durationMs: null,
  });
  t.same(entries[25_000], {
    kind: 'track',
    uri: 'file:big/24999.flac',
    name: '24999.flac',
    title: 'Track 24999',
    artist: null,
    album: null,
    durationMs: 1500,
  });
});

t.test('lines before the first entry, and playlists, are no entries', async (t) => {
  const pairs: Pairs = [
    ['Last-Modified', 'x'],
    ['playlist', 'mix.m3u'],
    ['Last-Modified', 'y'],
    ['file', 'a.flac'],
    ['Artist', 'A'],
  ];
  t.same(await entriesInTurns(pairs), [
    { kind: 'track', uri: 'file:a.flac', name: 'a.flac', title: null, artist: 'A', album: null, durationMs: null },
  ]);
});
