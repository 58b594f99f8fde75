// The engine's queue bookkeeping: which entries playback passed over, and why.
import t from 'tap';
import { QueueModel, type Entry, type Reading } from '../../drivers/mpd/queue-model.js';
import type { MpdStatus } from '../../drivers/mpd/status.js';

/** Entries a..e: each queued with id 10+i, except those named in `missing`. */
function model(missing: string[] = []): QueueModel {
  const m = new QueueModel();
  const entries: Entry[] = ['a', 'b', 'c', 'd', 'e'].map((name, i) =>
    missing.includes(name)
      ? { uri: `file:${name}`, target: null, cause: { reason: 'missing', detail: `${name} is gone` }, mpdId: null }
      : { uri: `file:${name}`, target: `${name}.flac`, cause: null, mpdId: 10 + i },
  );
  m.replace(entries);
  return m;
}

const named = (target: string) => (e: Entry) => e.target === target;

/** A read that says where MPD is: its status and what it passed over. */
function settled(reading: Reading): Extract<Reading, { settled: true }> {
  if (!reading.settled) throw new Error(`the read is not settled: ${JSON.stringify(reading)}`);
  return reading;
}
const gone = (name: string) => ({ reason: 'missing' as const, detail: `${name}: No such file or directory` });

t.test('song ids map back to queue indexes', async (t) => {
  const m = model(['b']);
  t.equal(m.indexOf(10), 0);
  t.equal(m.indexOf(12), 2);
  t.equal(m.indexOf(11), null);
  t.equal(m.indexOf(null), null);
  t.equal(m.firstQueued(1), 2);
  t.equal(model(['d', 'e']).firstQueued(3), null);
});

t.test('moving on to the next entry passes nothing over', async (t) => {
  const m = model();
  m.placeCursor(0, true);
  t.same(m.advance(1), []);
  t.equal(m.cursor, 1);
});

t.test('an entry that was never queued is passed over with the reason it has', async (t) => {
  const m = model(['b']);
  m.placeCursor(0, true);
  t.same(m.advance(2), [{ index: 1, uri: 'file:b', cause: { reason: 'missing', detail: 'b is gone' } }]);
});

t.test('an entry MPD failed is passed over with the failure MPD gave, once', async (t) => {
  const m = model();
  m.placeCursor(0, true);
  t.equal(m.noteFailure(named('b.flac'), { reason: 'unreachable', detail: 'CURL failed' }), 1);
  t.same(m.advance(2), [{ index: 1, uri: 'file:b', cause: { reason: 'unreachable', detail: 'CURL failed' } }]);
  t.same(settled(m.read(status({ songId: 13 }), 0)).passed, [], 'not again');
});

t.test(
  'a failure MPD reports for the entry ahead (opened before its turn) waits until playback passes it',
  async (t) => {
    const m = model();
    m.placeCursor(0, true);
    t.equal(m.noteFailure(named('b.flac'), gone('b')), 1);
    t.same(
      settled(m.read(status({ songId: 10, decoding: true, elapsedMs: 1500 }), 0)).passed,
      [],
      'nothing while the entry before it plays',
    );
    t.same(settled(m.read(status({ songId: 12, decoding: true }), 0)).passed, [
      { index: 1, uri: 'file:b', cause: gone('b') },
    ]);
  },
);

t.test('a failure of the current entry is reported when playback leaves it', async (t) => {
  const m = model();
  m.read(status({ songId: 12, decoding: true }), 0);
  t.equal(m.noteFailure(named('c.flac'), { reason: 'other', detail: 'broke off' }), 2, 'the current entry');
  t.same(
    settled(m.read(status({ songId: 12, decoding: true, elapsedMs: 2000 }), 0)).passed,
    [],
    'not while it plays on',
  );
  t.match(settled(m.read(status({ songId: 13 }), 0)).passed, [{ index: 2, cause: { detail: 'broke off' } }]);
});

t.test("an entry passed before MPD's words about it were read gets them when they come", async (t) => {
  const m = model();
  m.placeCursor(0, true);
  const passed = m.advance(3);
  t.same(passed, [
    { index: 1, uri: 'file:b', cause: null },
    { index: 2, uri: 'file:c', cause: null },
  ]);
  t.equal(m.noteFailure(named('c.flac'), gone('c')), 2, 'a word about a passed entry');
  t.equal(m.noteFailure(named('b.flac'), { reason: 'unknown-format', detail: 'Failed to decode b.flac' }), 1);
  t.same(m.explain(passed), [
    { index: 1, uri: 'file:b', cause: { reason: 'unknown-format', detail: 'Failed to decode b.flac' } },
    { index: 2, uri: 'file:c', cause: gone('c') },
  ]);
  t.equal(m.noteFailure(named('b.flac'), gone('b')), null, 'nothing awaits words once explained');
});

t.test(
  "a stream seen playing, left before MPD's word about its failure was read, is reported when the word comes",
  async (t) => {
    const m = model();
    t.match(settled(m.read(status({ songId: 10 }), 0)).status, { index: 0 }, 'seen playing before it failed');
    const reading = settled(m.read(status({ songId: 11, decoding: true }), 0));
    t.same(reading.passed, [], 'nothing known to be passed yet');
    t.ok(m.awaitsWord(reading.passed), 'but a word about the entry it left may be on its way');
    t.equal(
      m.noteFailure(named('a.flac'), { reason: 'unreachable', detail: 'CURL failed' }),
      0,
      "the late word is the left entry's",
    );
    t.same(m.explain(reading.passed), [
      { index: 0, uri: 'file:a', cause: { reason: 'unreachable', detail: 'CURL failed' } },
    ]);
    t.notOk(m.awaitsWord([]), 'explained: nothing awaited any more');
    t.equal(m.noteFailure(named('a.flac'), gone('a')), null, 'a later word about it is dropped');
  },
);

t.test('an entry that played to its end without a word from MPD is no skip', async (t) => {
  const m = model();
  m.read(status({ songId: 10, decoding: true, elapsedMs: 1000 }), 0);
  const reading = settled(m.read(status({ songId: 11, decoding: true }), 0));
  t.ok(m.awaitsWord(reading.passed));
  t.same(m.explain(reading.passed), []);
});

t.test('an entry passed without a word from MPD did not fail (it played between two reads): no skip', async (t) => {
  const m = model(['c']);
  m.placeCursor(0, true);
  const passed = m.advance(3);
  t.same(m.explain(passed), [{ index: 2, uri: 'file:c', cause: { reason: 'missing', detail: 'c is gone' } }]);
});

t.test('the end of the queue passes over every entry after the cursor', async (t) => {
  const m = model(['e']);
  m.placeCursor(2, true);
  t.match(m.advance(null), [
    { index: 3, cause: null },
    { index: 4, cause: { reason: 'missing' } },
  ]);
  t.equal(m.cursor, null);
});

t.test('going backwards, or with no cursor, passes nothing over', async (t) => {
  const m = model(['b']);
  m.placeCursor(3, true);
  t.same(m.advance(0), []);
  m.placeCursor(null);
  t.same(m.advance(4), []);
});

t.test("a late word about a passed entry is dropped, and words that name no entry are no track's", async (t) => {
  const m = model();
  m.placeCursor(2, true);
  t.equal(m.noteFailure(named('a.flac'), { reason: 'other', detail: 'late' }), null, 'an entry already passed');
  t.equal(
    m.noteFailure(() => false, { reason: 'other', detail: 'output' }),
    null,
    'no track at all',
  );
});

t.test('a failure behind the current entry (after a backwards jump) is reported at the next read', async (t) => {
  const m = model();
  m.placeCursor(null);
  t.equal(m.noteFailure(named('b.flac'), gone('b')), 1);
  t.same(settled(m.read(status({ songId: 12, decoding: true }), 0)).passed, [
    { index: 1, uri: 'file:b', cause: gone('b') },
  ]);
});

t.test('when the listener moves playback, what MPD said about queued entries is forgotten', async (t) => {
  const m = model(['d']);
  m.placeCursor(0, true);
  m.noteFailure(named('b.flac'), gone('b'));
  m.forgetFailures();
  t.equal(m.entries[1]!.cause, null);
  t.match(m.entries[3]!.cause, { reason: 'missing' }, 'an entry never queued keeps its reason');
});

t.test('of two entries with the same target, the failure goes to the one ahead', async (t) => {
  const m = new QueueModel();
  m.replace(['x', 'y', 'x'].map((name, i) => ({ uri: `file:${name}`, target: name, cause: null, mpdId: i })));
  m.placeCursor(1, true);
  t.equal(m.noteFailure(named('x'), { reason: 'missing', detail: '' }), 2);
  t.equal(m.entries[2]!.cause?.reason, 'missing');
  t.equal(m.entries[0]!.cause, null);
});

function status(over: Partial<MpdStatus>): MpdStatus {
  return {
    state: 'playing',
    songId: null,
    elapsedMs: 0,
    durationMs: 3000,
    decoding: false,
    error: null,
    tags: { title: 'T', artist: null, album: null, name: null },
    ...over,
  };
}

t.test('a read of MPD playing an entry gives its index, the caller URI and the tags', async (t) => {
  const m = model();
  m.placeCursor(1, true);
  const { status: s, passed } = settled(m.read(status({ songId: 12, elapsedMs: 500, decoding: true }), 42));
  t.same(passed, []);
  t.match(s, {
    state: 'playing',
    index: 2,
    uri: 'file:c',
    title: 'T',
    positionMs: 500,
    positionAt: 42,
    queueLength: 5,
  });
});

t.test('a read of MPD stopped with no song after playing on its own is the end of the queue', async (t) => {
  const m = model(['e']);
  m.placeCursor(3, true);
  const { status: s, passed } = settled(m.read(status({ state: 'stopped', songId: null }), 0));
  t.match(s, { state: 'stopped', index: null, uri: null, title: null, durationMs: null });
  t.match(passed, [{ index: 4, cause: { reason: 'missing' } }]);
});

t.test('a read of MPD stopped with no song while an entry is parked shows that entry, untagged', async (t) => {
  const m = model();
  m.parked = 1;
  t.match(settled(m.read(status({ state: 'stopped', songId: null }), 0)).status, {
    state: 'stopped',
    index: 1,
    uri: 'file:b',
    title: null,
  });
});

t.test(
  'MPD stopped by an entry that failed with more queued after it: to go on after that entry, nothing moved yet',
  async (t) => {
    const m = model();
    m.placeCursor(0, true);
    const error = 'Failed to decode b.flac';
    const at = m.noteFailure(named('b.flac'), { reason: 'unknown-format', detail: error });
    t.same(m.read(status({ state: 'stopped', songId: 11, error }), 0, at), { settled: false, goOnAfter: 1 });
    t.equal(m.cursor, 0, 'nothing moved');
    t.same(m.passFailed(1), [{ index: 1, uri: 'file:b', cause: { reason: 'unknown-format', detail: error } }]);
    t.equal(m.cursor, 1);
  },
);

t.test(
  'MPD stopped on the entry before, its error naming the one it failed ahead of its turn: to go on after that one',
  async (t) => {
    const m = model();
    m.read(status({ songId: 10, decoding: true, elapsedMs: 2900 }), 0);
    const error = 'Failed to decode b.flac; No such file or directory';
    const at = m.noteFailure(named('b.flac'), gone('b'));
    t.same(m.read(status({ state: 'stopped', songId: 10, error }), 0, at), { settled: false, goOnAfter: 1 });
  },
);

t.test('once playback goes on past an entry MPD stopped on, a late word about it is dropped', async (t) => {
  const m = model();
  m.placeCursor(0, true);
  m.noteFailure(named('b.flac'), gone('b'));
  m.passFailed(1);
  t.equal(m.noteFailure(named('b.flac'), gone('b')), null);
  t.same(settled(m.read(status({ songId: 12, decoding: true }), 0)).passed, [], 'not reported again');
});

t.test('a start from an entry takes words about that entry and those after it, not the one before', async (t) => {
  const m = model();
  m.placeCursor(1);
  t.equal(m.noteFailure(named('b.flac'), gone('b')), null);
  t.equal(m.noteFailure(named('c.flac'), gone('c')), 2);
});

t.test('going on past a failed entry passes the entries before it too, each once', async (t) => {
  const m = model(['b']);
  m.placeCursor(0, true);
  m.noteFailure(named('c.flac'), gone('c'));
  t.match(m.passFailed(2), [
    { index: 1, cause: { reason: 'missing', detail: 'b is gone' } },
    { index: 2, cause: gone('c') },
  ]);
  t.same(settled(m.read(status({ songId: 13, decoding: true }), 0)).passed, []);
});

t.test(
  'MPD trying again an entry it failed, before it decodes, is not settled; once it decodes, the failure is forgotten',
  async (t) => {
    const m = model();
    m.placeCursor(0, true);
    m.noteFailure(named('b.flac'), gone('b'));
    t.notOk(m.read(status({ songId: 11 }), 0).settled, 'playing it, nothing decoded yet');
    t.notOk(
      m.read(status({ songId: 11, decoding: true }), 0).settled,
      'a format but no position: MPD may be moving past it',
    );
    const playing = settled(m.read(status({ songId: 11, decoding: true, elapsedMs: 1000 }), 0));
    t.match(playing.status, { index: 1, state: 'playing' });
    t.same(settled(m.read(status({ songId: 12, decoding: true }), 0)).passed, [], 'it played: no skip');
  },
);

t.test('MPD paused on an entry it failed, with nothing decoded, stays there: playback goes on after it', async (t) => {
  const m = model();
  m.placeCursor(-1);
  t.equal(m.noteFailure(named('a.flac'), gone('a')), 0, 'the entry a paused start begins with');
  t.same(m.read(status({ state: 'paused', songId: 10 }), 0), { settled: false, goOnAfter: 0 });
  t.same(
    m.read(status({ state: 'paused', songId: 10, decoding: true }), 0),
    { settled: false, goOnAfter: null },
    'with a format, MPD may yet play it',
  );
  t.same(
    m.read(status({ state: 'playing', songId: 10 }), 0),
    { settled: false, goOnAfter: null },
    'playing, MPD opens it again by itself',
  );
});

t.test(
  'MPD paused on an entry the engine started paused, after it failed, stays there whatever format it shows',
  async (t) => {
    const m = model();
    m.forgetFailures();
    m.placeCursor(-1);
    m.startedAt(0, true);
    t.ok(m.startedPausedAt(0), 'the paused start is known');
    t.equal(m.noteFailure(named('a.flac'), gone('a')), 0);
    // The format and duration are the next entry's: MPD started its decoder as this one failed.
    t.same(m.read(status({ state: 'paused', songId: 10, decoding: true, durationMs: 3000 }), 0), {
      settled: false,
      goOnAfter: 0,
    });
    m.startedAt(0, false);
    t.notOk(m.startedPausedAt(0), 'a start that plays is no paused start');
    t.same(
      m.read(status({ state: 'paused', songId: 10, decoding: true }), 0),
      { settled: false, goOnAfter: null },
      'paused later by the listener: MPD may yet play it',
    );
    m.startedAt(0, true);
    m.forgetFailures();
    t.notOk(m.startedPausedAt(0), 'forgotten when the listener moves playback');
  },
);

t.test("a failure MPD reports for the current entry, while it plays, is no earlier attempt's: it stays", async (t) => {
  const m = model();
  m.read(status({ songId: 11, decoding: true, elapsedMs: 300 }), 0);
  m.noteFailure(named('b.flac'), { reason: 'unreachable', detail: 'CURL failed: connection reset' });
  t.ok(m.read(status({ songId: 11, decoding: true, elapsedMs: 1300 }), 0).settled);
  t.match(settled(m.read(status({ songId: 12, decoding: true }), 0)).passed, [
    { index: 1, cause: { reason: 'unreachable' } },
  ]);
});

t.test(
  'MPD stopped by the failure of the last queued entry: the queue ended, that entry and those after it passed',
  async (t) => {
    const m = model(['e']);
    m.placeCursor(2, true);
    const error = 'Failed to decode d.flac';
    const at = m.noteFailure(named('d.flac'), { reason: 'unknown-format', detail: error });
    const { status: s, passed } = settled(m.read(status({ state: 'stopped', songId: 13, error }), 0, at));
    t.match(s, { state: 'stopped', index: null });
    t.match(passed, [
      { index: 3, cause: { reason: 'unknown-format' } },
      { index: 4, cause: { reason: 'missing' } },
    ]);
  },
);

t.test('a stop on an entry with a failure noted, without an error from MPD, is a stop and not the end', async (t) => {
  const m = model();
  m.read(status({ songId: 12, decoding: true }), 0);
  m.noteFailure(named('c.flac'), { reason: 'other', detail: 'broke off' });
  const { status: s, passed } = settled(m.read(status({ state: 'stopped', songId: 12 }), 0));
  t.match(s, { state: 'stopped', index: 2 });
  t.same(passed, []);
});
