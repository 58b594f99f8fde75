// The engine's queue bookkeeping: which entries playback passed over, and why.
import t from 'tap';
import { QueueModel, type Entry } from '../../drivers/mpd/queue-model.js';
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
  m.cursor = 0;
  t.same(m.advance(1), []);
  t.equal(m.cursor, 1);
});

t.test('an entry that was never queued is passed over with the reason it has', async (t) => {
  const m = model(['b']);
  m.cursor = 0;
  t.same(m.advance(2), [{ index: 1, uri: 'file:b', cause: { reason: 'missing', detail: 'b is gone' } }]);
});

t.test('an entry MPD failed is passed over with the failure MPD gave, once', async (t) => {
  const m = model();
  m.cursor = 0;
  t.ok(m.noteFailure((e) => e.target === 'b.flac', { reason: 'unreachable', detail: 'CURL failed' }));
  t.same(m.advance(2), [{ index: 1, uri: 'file:b', cause: { reason: 'unreachable', detail: 'CURL failed' } }]);
  t.same(m.pendingFailures(), [], 'not again');
});

t.test('an entry MPD passed over without its own words is reported as other', async (t) => {
  const m = model();
  m.cursor = 0;
  t.match(m.advance(3), [{ index: 1, cause: { reason: 'other' } }, { index: 2, cause: { reason: 'other' } }]);
});

t.test('the end of the queue passes over every entry after the cursor', async (t) => {
  const m = model(['e']);
  m.cursor = 2;
  t.match(m.advance(null), [{ index: 3 }, { index: 4, cause: { reason: 'missing' } }]);
  t.equal(m.cursor, null);
});

t.test('going backwards, or with no cursor, passes nothing over', async (t) => {
  const m = model(['b']);
  m.cursor = 3;
  t.same(m.advance(0), []);
  m.cursor = null;
  t.same(m.advance(4), []);
});

t.test("a failure of the current entry waits for the next read, a late word about a passed entry is dropped", async (t) => {
  const m = model();
  m.cursor = 2;
  t.ok(m.noteFailure((e) => e.target === 'c.flac', { reason: 'other', detail: 'x' }), 'the current entry');
  t.match(m.pendingFailures(), [{ index: 2 }]);
  t.notOk(m.noteFailure((e) => e.target === 'a.flac', { reason: 'other', detail: 'late' }), 'an entry already passed');
  t.notOk(m.noteFailure(() => false, { reason: 'other', detail: 'output' }), 'no track at all');
});

t.test('of two entries with the same target, the failure goes to the one ahead', async (t) => {
  const m = new QueueModel();
  m.replace(['x', 'y', 'x'].map((name, i) => ({ uri: `file:${name}`, target: name, cause: null, mpdId: i })));
  m.cursor = 1;
  t.ok(m.noteFailure((e) => e.target === 'x', { reason: 'missing', detail: '' }));
  t.equal(m.entries[2]!.cause?.reason, 'missing');
  t.equal(m.entries[0]!.cause, null);
});

const status = (over: Partial<MpdStatus>): MpdStatus => ({
  state: 'playing', songId: null, elapsedMs: 0, durationMs: 3000, error: null,
  tags: { title: 'T', artist: null, album: null, name: null }, ...over,
});

t.test('a read of MPD playing an entry gives its index, the caller URI and the tags', async (t) => {
  const m = model();
  m.cursor = 1;
  const { status: s, skips } = m.read(status({ songId: 12, elapsedMs: 500 }), 42);
  t.same(skips, []);
  t.match(s, { state: 'playing', index: 2, uri: 'file:c', title: 'T', positionMs: 500, positionAt: 42, queueLength: 5 });
});

t.test('a read of MPD stopped with no song after playing on its own is the end of the queue', async (t) => {
  const m = model(['e']);
  m.cursor = 3;
  const { status: s, skips } = m.read(status({ state: 'stopped', songId: null }), 0);
  t.match(s, { state: 'stopped', index: null, uri: null, title: null, durationMs: null });
  t.match(skips, [{ index: 4, cause: { reason: 'missing' } }]);
});

t.test('a read of MPD stopped with no song while an entry is parked shows that entry, untagged', async (t) => {
  const m = model();
  m.parked = 1;
  t.match(m.read(status({ state: 'stopped', songId: null }), 0).status, { state: 'stopped', index: 1, uri: 'file:b', title: null });
});
