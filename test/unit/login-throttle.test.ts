// Failed-login back-off on an injected clock: free failures, exponential growth, the cap, expiry and reset.
import t from 'tap';
import { LoginThrottle } from '../../daemon/domain/login-throttle.js';

const KEYS = ['user:alice', 'addr:192.0.2.1'];

function throttle(options: { maxEntries?: number } = {}) {
  const clock = { now: 1_000_000 };
  const limiter = new LoginThrottle({ freeFailures: 5, baseDelayMs: 1000, maxDelayMs: 8000, ...options }, () => clock.now);
  return { clock, limiter };
}

/** Records `n` failures and returns the back-off seen right after each one. */
function failures(limiter: LoginThrottle, n: number, keys = KEYS): number[] {
  const waits: number[] = [];
  for (let i = 0; i < n; i++) {
    limiter.recordFailure(keys);
    waits.push(limiter.retryAfterMs(keys));
  }
  return waits;
}

t.test('nothing is blocked before any failure', async (t) => {
  t.equal(throttle().limiter.retryAfterMs(KEYS), 0);
});

t.test('the first four failures cost nothing and the fifth starts the back-off', async (t) => {
  const { limiter } = throttle();
  t.same(failures(limiter, 5), [0, 0, 0, 0, 1000]);
});

t.test('each further failure doubles the back-off', async (t) => {
  const { limiter } = throttle();
  t.same(failures(limiter, 8).slice(4), [1000, 2000, 4000, 8000]);
});

t.test('the back-off is capped at the maximum delay', async (t) => {
  const { limiter } = throttle();
  t.same(failures(limiter, 12).slice(7), [8000, 8000, 8000, 8000, 8000]);
});

t.test('the back-off counts down with the clock and ends when it runs out', async (t) => {
  const { clock, limiter } = throttle();
  failures(limiter, 6);
  clock.now += 1500;
  t.equal(limiter.retryAfterMs(KEYS), 500);
  clock.now += 500;
  t.equal(limiter.retryAfterMs(KEYS), 0);
});

t.test('a failure after the back-off ran out still counts towards the next, longer one', async (t) => {
  const { clock, limiter } = throttle();
  failures(limiter, 6);
  clock.now += 2000;
  limiter.recordFailure(KEYS);
  t.equal(limiter.retryAfterMs(KEYS), 4000);
});

t.test('a success clears the failures of its keys', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 7);
  limiter.recordSuccess(KEYS);
  t.equal(limiter.retryAfterMs(KEYS), 0);
  t.same(failures(limiter, 5), [0, 0, 0, 0, 1000], 'and the free failures are available again');
});

t.test('a blocked key blocks any request that includes it', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 5, ['user:alice', 'addr:192.0.2.1']);
  t.equal(limiter.retryAfterMs(['user:alice', 'addr:198.51.100.7']), 1000, 'same user from another address');
  t.equal(limiter.retryAfterMs(['user:bob', 'addr:192.0.2.1']), 1000, 'another user from the same address');
  t.equal(limiter.retryAfterMs(['user:bob', 'addr:198.51.100.7']), 0, 'neither');
});

t.test('keys are counted independently', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 5; i++) limiter.recordFailure(['user:u' + i, 'addr:192.0.2.1']);
  t.equal(limiter.retryAfterMs(['addr:192.0.2.1']), 1000, 'five users from one address block the address');
  t.equal(limiter.retryAfterMs(['user:u0']), 0, 'but no single user');
});

t.test('a success clears only its own keys', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 5, ['user:alice', 'addr:192.0.2.1']);
  limiter.recordSuccess(['user:bob', 'addr:198.51.100.7']);
  t.equal(limiter.retryAfterMs(['user:alice']), 1000);
});

t.test('entries long past their last failure are forgotten', async (t) => {
  const { clock, limiter } = throttle();
  failures(limiter, 5, ['user:old']);
  clock.now += 16_000;
  limiter.recordFailure(['user:new']);
  failures(limiter, 4, ['user:old']);
  t.equal(limiter.retryAfterMs(['user:old']), 0, 'the old failures no longer count');
});

t.test('the number of tracked keys is bounded', async (t) => {
  const { limiter } = throttle({ maxEntries: 3 });
  failures(limiter, 5, ['user:first']);
  for (let i = 0; i < 4; i++) limiter.recordFailure([`user:flood${i}`]);
  t.equal(limiter.retryAfterMs(['user:first']), 0, 'the oldest entry was dropped to make room');
});
