// The log's write batching (daemon/log.ts batchWrites): lines keep their order and are handed on in few writes,
// by size, by the one-shot flush timer, or at once by flush and flushSync.
import t from 'tap';
import { batchWrites } from '../../daemon/log.js';
import { waitFor, Changes } from '../helpers/wait-for.js';

function target() {
  const changes = new Changes();
  const chunks: string[] = [];
  const calls = { flush: 0, flushSync: 0 };
  const stream = {
    write: (chunk: string) => {
      chunks.push(chunk);
      changes.notify();
      return true;
    },
    flush: () => {
      calls.flush++;
    },
    flushSync: () => {
      calls.flushSync++;
    },
  };
  return { stream, chunks, calls, changes };
}

t.test('lines written in a burst reach the stream in one write, in order', async (t) => {
  const { stream, chunks } = target();
  batchWrites(stream);
  const lines = Array.from({ length: 1600 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(40)}"}\n`);
  for (const line of lines) stream.write(line);
  t.ok(chunks.length >= 1 && chunks.length < 5, `${chunks.length} writes for 1600 lines`);
  stream.flushSync();
  t.equal(chunks.join(''), lines.join(''), 'every line, in order');
});

t.test('a single line is handed on by the flush timer without any further write', async (t) => {
  const { stream, chunks, changes } = target();
  batchWrites(stream, 20);
  stream.write('{"msg":"alone"}\n');
  t.same(chunks, [], 'held back at first');
  await waitFor(() => chunks.length === 1, undefined, { what: 'the timer to hand the line on', changes });
  t.same(chunks, ['{"msg":"alone"}\n']);
});

t.test('flush and flushSync hand on pending lines at once, then flush the stream', async (t) => {
  const { stream, chunks, calls } = target();
  batchWrites(stream);
  stream.write('a\n');
  stream.flush();
  t.same(chunks, ['a\n']);
  t.equal(calls.flush, 1);
  stream.write('b\n');
  stream.flushSync();
  t.same(chunks, ['a\n', 'b\n']);
  t.equal(calls.flushSync, 1);
  stream.flushSync();
  t.same(chunks, ['a\n', 'b\n'], 'nothing pending: no empty write');
});
