// The output switch (drivers/receivers/output-switch.ts) on a real FIFO: only the selected source's frames come out,
// whole and in order, a switch never splits a frame, a source not selected is not read, and a full output holds the
// selected source back instead of buffering without end.
import { execFileSync } from 'node:child_process';
import { constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { type DropPace, FRAME_BYTES, fifoOutput, OutputSwitch } from '../../drivers/receivers/output-switch.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Changes, waitFor } from '../helpers/wait-for.js';

/** A frame whose four bytes say which source wrote it: misaligned output shows as a frame no source wrote. */
const FRAMES = { a: [1, 2, 3, 4], b: [5, 6, 7, 8] } as const;
const frames = (who: keyof typeof FRAMES, count: number) =>
  Buffer.from(Array.from({ length: count }, () => FRAMES[who]).flat());

/** A FIFO, the switch writing into it (dropping at `drop`'s pace, if given), and a reader that keeps what it read. */
function rig(t: Test, drop?: DropPace) {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-switch-'));
  const fifo = path.join(dir, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const output = fifoOutput(fifo);
  const sw = new OutputSwitch(output, drop);
  const reader = new Socket({ fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK), writable: false });
  const received: Buffer[] = [];
  const changes = new Changes();
  reader.on('data', (chunk: Buffer) => {
    received.push(chunk);
    changes.notify();
  });
  const sources = { a: new PassThrough(), b: new PassThrough() };
  sw.add('a', sources.a);
  sw.add('b', sources.b);
  t.teardown(() => {
    reader.destroy();
    output.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const bytes = () => Buffer.concat(received);
  return {
    sw,
    sources,
    reader,
    bytes,
    /** Waits until the reader has `count` bytes in all. */
    until: (count: number) =>
      waitFor(() => bytes().length >= count, undefined, { what: `${count} bytes on the FIFO`, changes }),
    /** The frames read, each named by the source that wrote it ('?' for bytes no source wrote together). */
    who: () => {
      const all = bytes();
      const out: string[] = [];
      for (let i = 0; i + FRAME_BYTES <= all.length; i += FRAME_BYTES) {
        const frame = [...all.subarray(i, i + FRAME_BYTES)].join();
        out.push(frame === FRAMES.a.join() ? 'a' : frame === FRAMES.b.join() ? 'b' : '?');
      }
      return out.join('');
    },
  };
}

t.test('only the selected source reaches the output, in whole frames, whatever its chunks', async (t) => {
  const r = rig(t);
  r.sw.select('a');
  const a = frames('a', 10);
  for (const [from, to] of [
    [0, 3],
    [3, 8],
    [8, 15],
    [15, 24],
    [24, 40],
  ] as const)
    r.sources.a.write(a.subarray(from, to));
  r.sources.b.write(frames('b', 10));
  await r.until(40);
  t.equal(r.who(), 'aaaaaaaaaa');
  t.same(r.sw.counts('b'), { forwarded: 0, seen: 0 }, 'the source not selected was not read');
});

t.test('a switch in the middle of a frame splits none: each source goes on from its next whole frame', async (t) => {
  const r = rig(t);
  const a = frames('a', 3);
  r.sw.select('a');
  r.sources.a.write(a.subarray(0, 6));
  await r.until(4);
  r.sw.select('b');
  r.sources.b.write(frames('b', 2));
  await r.until(12);
  r.sw.select('a');
  // The rest of the frame A was in when it lost the output, then one whole frame.
  r.sources.a.write(a.subarray(6, 12));
  await r.until(16);
  t.equal(r.who(), 'abba', 'no frame is made of two sources or of two halves');
  t.equal(r.bytes().length, 16);
  t.equal(r.sw.active, 'a');
});

t.test('with no source selected the output gets nothing and no source is read', async (t) => {
  const r = rig(t);
  r.sw.select('a');
  r.sources.a.write(frames('a', 1));
  await r.until(4);
  r.sw.select(null);
  r.sources.a.write(frames('a', 5));
  r.sources.b.write(frames('b', 5));
  // Selecting b afterwards shows that everything a wrote meanwhile stayed unread: only b's frames follow.
  r.sw.select('b');
  await r.until(24);
  t.equal(r.who(), 'abbbbb');
  t.same(r.sw.counts('a'), { forwarded: 4, seen: 4 });
});

t.test('a full output holds the selected source back; once read, everything it wrote arrives', async (t) => {
  const r = rig(t);
  r.reader.pause();
  r.sw.select('a');
  const chunk = frames('a', 4096);
  let written = 0;
  // Written until the source's own buffer says wait: the switch stopped reading it because the FIFO is full.
  for (let i = 0; i < 1000; i++) {
    written += chunk.length;
    if (!r.sources.a.write(chunk)) break;
  }
  t.ok(r.sources.a.writableNeedDrain, `the source was held back after ${written} bytes`);
  t.ok(written < 1000 * chunk.length, 'before the bound of this test');
  r.reader.resume();
  await r.until(written);
  t.equal(r.bytes().length, written);
  t.match(r.who(), /^a+$/);
});

t.test('a source removed while selected leaves the output with none', async (t) => {
  const r = rig(t);
  r.sw.select('b');
  r.sw.remove('b');
  t.equal(r.sw.active, null);
  t.throws(() => r.sw.select('b'), /no source named b/);
  t.throws(() => r.sw.add('a', new PassThrough()), /already has a source named a/);
});

t.test('with a drop pace, a source not selected is read at that pace and none of it reaches the output', async (t) => {
  const clock = new ManualClock(0);
  const r = rig(t, { bytesPerSecond: 4000, clock });
  const seenB = () => r.sw.counts('b')!.seen;
  r.sw.select('a');
  // A second of b at the pace is read at once; what it writes after waits for the pace.
  r.sources.b.write(frames('b', 1000));
  await waitFor(() => seenB() === 4000, undefined, { what: 'the first second of b read' });
  r.sources.b.write(frames('b', 1000));
  r.sources.a.write(frames('a', 2));
  await r.until(8);
  t.equal(seenB(), 4000, 'b waits while a plays');
  clock.advance(999);
  r.sources.a.write(frames('a', 2));
  await r.until(16);
  t.equal(seenB(), 4000, 'not before a second has passed');
  clock.advance(1);
  await waitFor(() => seenB() === 8000, undefined, { what: 'the second second of b read' });
  t.equal(r.who(), 'aaaa', 'only the selected source reached the output');
  t.same(r.sw.counts('b'), { forwarded: 0, seen: 8000 });
});
