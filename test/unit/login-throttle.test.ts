// Failed-password back-off on an injected clock: free failures, growth, the cap, expiry, and who a success or a
// trusted address lets through.
import t from 'tap';
import { canonicalAddress, isLoopback, LoginThrottle } from '../../daemon/domain/accounts/login-throttle.js';

const ADDRESS = '192.0.2.1';
const OTHER_ADDRESS = '198.51.100.7';

function throttle(options: { maxEntries?: number } = {}) {
  const clock = { now: 1_000_000 };
  const limiter = new LoginThrottle(
    { freeFailures: 5, baseDelayMs: 1000, maxDelayMs: 8000, ...options },
    () => clock.now,
  );
  return { clock, limiter };
}

/** Runs `n` wrong-password checks and returns the back-off seen right after each one. */
function failures(limiter: LoginThrottle, n: number, username = 'alice', address = ADDRESS): number[] {
  const waits: number[] = [];
  for (let i = 0; i < n; i++) {
    limiter.begin(username, address).failed();
    waits.push(limiter.retryAfterMs(username, address));
  }
  return waits;
}

t.test('nothing is blocked before any failure', async (t) => {
  t.equal(throttle().limiter.retryAfterMs('alice', ADDRESS), 0);
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
  t.equal(limiter.retryAfterMs('alice', ADDRESS), 500);
  clock.now += 500;
  t.equal(limiter.retryAfterMs('alice', ADDRESS), 0);
});

t.test('a failure after the back-off ran out still counts towards the next, longer one', async (t) => {
  const { clock, limiter } = throttle();
  failures(limiter, 6);
  clock.now += 2000;
  limiter.begin('alice', ADDRESS).failed();
  t.equal(limiter.retryAfterMs('alice', ADDRESS), 4000);
});

t.test("a success clears that username's failures", async (t) => {
  const { limiter } = throttle();
  failures(limiter, 4, 'alice', ADDRESS);
  limiter.begin('alice', ADDRESS).succeeded();
  t.same(failures(limiter, 5, 'alice', OTHER_ADDRESS), [0, 0, 0, 0, 1000], 'the username has its free failures again');
});

t.test(
  "a success does not clear the address's failures, so spraying with an own account in between is stopped",
  async (t) => {
    const { limiter } = throttle();
    for (let i = 0; i < 4; i++) limiter.begin(`target${i}`, ADDRESS).failed();
    limiter.begin('mallory', ADDRESS).succeeded();
    limiter.begin('target4', ADDRESS).failed();
    t.equal(limiter.retryAfterMs('target5', ADDRESS), 1000, 'the fifth failure from the address starts its back-off');
    t.equal(limiter.retryAfterMs('mallory', ADDRESS), 1000, 'for its own account too');
  },
);

t.test('a success is not counted as a failure of the address', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 10; i++) limiter.begin('alice', ADDRESS).succeeded();
  t.same(failures(limiter, 5, 'bob', ADDRESS), [0, 0, 0, 0, 1000]);
});

t.test('a blocked username blocks it from any other address', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 5, 'alice', ADDRESS);
  t.equal(limiter.retryAfterMs('alice', OTHER_ADDRESS), 1000);
  t.equal(limiter.retryAfterMs('ALICE', OTHER_ADDRESS), 1000, 'in any letter case');
});

t.test('a blocked username does not hold back an address the account is trusted from', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 5, 'admin', ADDRESS);
  t.equal(limiter.retryAfterMs('admin', OTHER_ADDRESS, true), 0);
  t.equal(
    limiter.retryAfterMs('admin', OTHER_ADDRESS, false),
    1000,
    'control: the same address untrusted is held back',
  );
});

t.test('a blocked address blocks every username, trusted or not', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 5; i++) limiter.begin(`ghost${i}`, ADDRESS).failed();
  t.equal(limiter.retryAfterMs('admin', ADDRESS, true), 1000);
  t.equal(limiter.retryAfterMs('admin', OTHER_ADDRESS, true), 0, 'another address is not affected');
});

t.test('failures from a trusted address still count against the username for everyone else', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 5; i++) limiter.begin('admin', ADDRESS).failed();
  t.equal(limiter.retryAfterMs('admin', OTHER_ADDRESS), 1000);
});

t.test('checks still running count: a sixth may not start while five are undecided', async (t) => {
  const { limiter } = throttle();
  const running = Array.from({ length: 5 }, () => limiter.begin('alice', ADDRESS));
  t.equal(limiter.retryAfterMs('bob', OTHER_ADDRESS), 0, 'control: other keys are free');
  t.ok(limiter.retryAfterMs('alice', OTHER_ADDRESS) > 0, 'the username waits');
  t.ok(limiter.retryAfterMs('bob', ADDRESS) > 0, 'the address waits');
  for (const attempt of running) attempt.succeeded();
  t.equal(limiter.retryAfterMs('alice', ADDRESS), 0, 'free again once they succeeded');
});

t.test('an attempt is decided once: a failure after its success changes nothing', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 5; i++) {
    const attempt = limiter.begin('alice', ADDRESS);
    attempt.succeeded();
    attempt.failed();
  }
  t.equal(limiter.retryAfterMs('alice', ADDRESS), 0);
});

t.test('one address in other spellings is the same key', async (t) => {
  const { limiter } = throttle();
  failures(limiter, 3, 'a', '::ffff:192.0.2.1');
  failures(limiter, 2, 'b', '0:0:0:0:0:ffff:c000:201');
  t.equal(limiter.retryAfterMs('c', ADDRESS), 1000);
  failures(limiter, 5, 'd', '2001:0db8:0000:0000:0000:0000:0000:0001');
  t.equal(limiter.retryAfterMs('e', '2001:db8::1'), 1000);
});

t.test('canonical addresses: IPv4-mapped IPv6 is IPv4, IPv6 is compressed lower case', async (t) => {
  t.equal(canonicalAddress('::FFFF:10.0.0.1'), '10.0.0.1');
  t.equal(canonicalAddress('2001:DB8:0:0:0:0:0:A'), '2001:db8::a');
  t.equal(canonicalAddress('10.0.0.1'), '10.0.0.1');
  t.equal(canonicalAddress(''), '');
});

t.test('loopback is 127.0.0.0/8 and ::1 in any spelling, nothing else', async (t) => {
  for (const address of [
    '127.0.0.1',
    '127.9.8.7',
    '::1',
    '0000:0000:0000:0000:0000:0000:0000:0001',
    '::ffff:127.0.0.1',
  ]) {
    t.ok(isLoopback(address), address);
  }
  for (const address of ['192.0.2.1', '::2', '::ffff:192.0.2.1', '128.0.0.1', '', 'localhost'])
    t.notOk(isLoopback(address), address || '(empty)');
});

t.test('keys are counted independently', async (t) => {
  const { limiter } = throttle();
  for (let i = 0; i < 5; i++) limiter.begin(`u${i}`, ADDRESS).failed();
  t.equal(limiter.retryAfterMs('u0', OTHER_ADDRESS), 0, 'five users from one address block no single user');
});

t.test('entries long past their last failure are forgotten', async (t) => {
  const { clock, limiter } = throttle();
  failures(limiter, 5, 'old', ADDRESS);
  clock.now += 16_000;
  limiter.begin('new', OTHER_ADDRESS).failed();
  failures(limiter, 4, 'old', ADDRESS);
  t.equal(limiter.retryAfterMs('old', ADDRESS), 0, 'the old failures no longer count');
});

t.test('the number of tracked keys is bounded', async (t) => {
  const { limiter } = throttle({ maxEntries: 3 });
  failures(limiter, 5, 'first', ADDRESS);
  for (let i = 0; i < 4; i++) limiter.begin(`flood${i}`, `192.0.2.${10 + i}`).failed();
  t.equal(limiter.retryAfterMs('first', OTHER_ADDRESS), 0, 'the oldest entry was dropped to make room');
});
