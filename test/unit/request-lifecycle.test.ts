// The socket request lifecycle: which moves exist, what counts as under way, and what a client going away does.
import t from 'tap';
import { isPaused, isUnderWay, move, onAbort, type RequestState } from '../../daemon/http/request-lifecycle.js';

const ALL: RequestState[] = [
  'routing',
  'reading',
  'waiting',
  'rejecting',
  'handling',
  'held',
  'orphaned',
  'answered',
  'aborted',
];

t.test('a response is written at most once: nothing leaves answered or aborted', async (t) => {
  for (const from of ['answered', 'aborted'] as const) {
    for (const to of ALL) t.throws(() => move(from, to), /no move/, `${from} → ${to}`);
  }
});

t.test(
  'a request whose client went away mid-handler is never answered, only closed when its handler settles',
  async (t) => {
    t.equal(onAbort('handling'), 'orphaned');
    t.equal(onAbort('held'), 'orphaned');
    t.throws(() => move('orphaned', 'answered'), /no move/);
    t.equal(move('orphaned', 'aborted'), 'aborted');
    t.ok(isUnderWay('orphaned'), 'shutdown still waits for its handler');
  },
);

t.test('a client going away before its handler runs ends the request at once', async (t) => {
  for (const state of ['reading', 'waiting', 'rejecting'] as const) t.equal(onAbort(state), 'aborted', state);
  for (const state of ['routing', 'answered', 'aborted'] as const) t.equal(onAbort(state), undefined, state);
});

t.test('shutdown waits exactly for the states that outlive the uWS handler call', async (t) => {
  t.same(ALL.filter(isUnderWay), ['reading', 'waiting', 'rejecting', 'handling', 'held', 'orphaned']);
});

t.test('only a handler that outlived the turn it went async in has its socket paused', async (t) => {
  t.same(ALL.filter(isPaused), ['held']);
  t.notOk(isPaused('rejecting'), 'a framing error is answered and the connection closed: nothing to resume');
  t.equal(move('handling', 'held'), 'held');
  t.equal(move('held', 'answered'), 'answered');
  t.throws(() => move('waiting', 'held'), /no move/, 'a request not yet taken up has no handler to outlive its turn');
});

t.test(
  'a synchronous answer goes straight from routing to answered; a body is read before anything runs',
  async (t) => {
    t.equal(move('routing', 'answered'), 'answered');
    t.throws(() => move('reading', 'handling'), /no move/, 'the handler runs only after the end-of-turn take-up');
    t.equal(move('reading', 'waiting'), 'waiting');
    t.equal(move('waiting', 'handling'), 'handling');
  },
);
