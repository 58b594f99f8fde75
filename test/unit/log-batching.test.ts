// The log's write batching (daemon/log.ts batchWrites): lines keep their order and reach the stream as bytes in few
// writes, by size, by the one-shot flush timer, or at once by flush and flushSync.
import t from 'tap';
import { batchWrites } from '../../daemon/log.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

function target() {
  const changes = new Changes();
  const chunks: string[] = [];
  const bytes: Buffer[] = [];
  const calls = { flush: 0, flushSync: 0 };
  const stream = {
    write: (chunk: Buffer) => {
      bytes.push(chunk);
      chunks.push(chunk.toString('utf8'));
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
  return { stream, chunks, bytes, calls, changes };
}

t.test('lines written in a burst reach the stream in one write, in order', async (t) => {
  const { stream, chunks } = target();
  const log = batchWrites(stream);
  const lines = Array.from({ length: 1600 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(40)}"}\n`);
  for (const line of lines) log.write(line);
  t.ok(chunks.length >= 1 && chunks.length < 5, `${chunks.length} writes for 1600 lines`);
  log.flushSync();
  t.equal(chunks.join(''), lines.join(''), 'every line, in order');
});

t.test('a single line is handed on by the flush timer without any further write', async (t) => {
  const { stream, chunks, changes } = target();
  const log = batchWrites(stream, 20);
  log.write('{"msg":"alone"}\n');
  t.same(chunks, [], 'held back at first');
  await waitFor(() => chunks.length === 1, undefined, { what: 'the timer to hand the line on', changes });
  t.same(chunks, ['{"msg":"alone"}\n']);
});

t.test('flush and flushSync hand on pending lines at once, then flush the stream', async (t) => {
  const { stream, chunks, calls } = target();
  const log = batchWrites(stream);
  log.write('a\n');
  log.flush();
  t.same(chunks, ['a\n']);
  t.equal(calls.flush, 1);
  log.write('b\n');
  log.flushSync();
  t.same(chunks, ['a\n', 'b\n']);
  t.equal(calls.flushSync, 1);
  log.flushSync();
  t.same(chunks, ['a\n', 'b\n'], 'nothing pending: no empty write');
});

t.test(
  'lines are handed on as their UTF-8 bytes, each chunk whole characters, a line longer than the buffer too',
  async (t) => {
    const { stream, bytes } = target();
    const log = batchWrites(stream);
    // Multi-byte characters filling the buffer, then a line longer than the buffer, then a short one.
    const lines = [
      ...Array.from({ length: 900 }, (_, i) => `{"n":${i},"name":"${'€'.repeat(20)}"}\n`),
      `{"big":"${'ü'.repeat(70_000)}"}\n`,
      '{"after":"ok"}\n',
    ];
    for (const line of lines) log.write(line);
    log.flushSync();
    t.ok(bytes.length >= 3, `${bytes.length} chunks`);
    for (const chunk of bytes)
      t.equal(Buffer.from(chunk.toString('utf8')).length, chunk.length, 'no character split across chunks');
    t.equal(Buffer.concat(bytes).toString('utf8'), lines.join(''), 'every line, in order, byte for byte');
  },
);
