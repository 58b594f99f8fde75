// The emulator's device end: a stream it stops using is closed, so nothing it once attached outlives it.
import { PassThrough } from 'node:stream';
import t from 'tap';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';

t.test('an emulator attached to a new stream closes the one it replaced', async (t) => {
  const emulator = new RnetEmulator({ controllers: 1 });
  const first = new PassThrough();
  const second = new PassThrough();
  t.teardown(() => emulator.close());
  emulator.attach(first);
  emulator.attach(second);
  t.ok(first.destroyed, 'the replaced stream is closed');
  t.notOk(second.destroyed, 'the new stream stays open');
});

t.test('a closed emulator closes the stream it had attached', async (t) => {
  const emulator = new RnetEmulator({ controllers: 1 });
  const stream = new PassThrough();
  emulator.attach(stream);
  await emulator.close();
  t.ok(stream.destroyed);
});
