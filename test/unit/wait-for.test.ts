// The suite's one wait: it resolves on a change notice with the condition's value, and a wait that times out names
// what it waited for and, when asked, what it saw meanwhile.
import t from 'tap';
import { Changes, waitFor } from '../helpers/wait-for.js';

t.test('a change notice re-checks the condition at once, and the wait resolves with its value', async (t) => {
  const changes = new Changes();
  let value: string | undefined;
  const waiting = waitFor(() => value, undefined, { what: 'a value', changes });
  value = 'here';
  changes.notify();
  t.equal(await waiting, 'here');
});

t.test('a wait that times out names what it waited for, and what it saw when it failed', async (t) => {
  const seen: string[] = [];
  let asked = 0;
  const waiting = waitFor(() => false, 30, {
    what: 'the volume 0.2',
    seen: () => {
      asked++;
      return JSON.stringify(seen);
    },
  }).catch((err: Error) => err);
  seen.push('state playing'); // after the wait began: what was seen is read when it fails, not when it begins
  const error = await waiting;
  t.equal(asked, 1, 'what was seen is read once');
  t.equal((error as Error).message, 'timed out after 30 ms waiting for the volume 0.2; seen: ["state playing"]');
  const plain = await waitFor(() => false, 30, { what: 'nothing' }).catch((err: Error) => err);
  t.equal((plain as Error).message, 'timed out after 30 ms waiting for nothing');
});

t.test('a condition that throws fails the wait at once with its error', async (t) => {
  await t.rejects(
    waitFor(() => {
      throw new Error('the receiver exited');
    }),
    { message: 'the receiver exited' },
  );
});
