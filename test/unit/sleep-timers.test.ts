// The sleep-timer service on a hand-driven clock: one timer for the earliest zone due, rescheduled from events, no waiting.
import t from 'tap';
import { type SleepAudio, SleepTimers } from '../../daemon/domain/scenes/index.js';
import { type Caller, EventBus, type ZoneView } from '../../daemon/domain/shared/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

const MINUTE = 60_000;
const ADMIN: Caller = {
  userId: 'u',
  username: 'admin',
  role: 'Admin',
  playerIds: new Set(),
  zoneIds: new Set(),
  credential: { kind: 'account' },
};

/** Zones with timers, as audio's ZoneSleep keeps them, publishing zone.sleepChanged as it does. */
class FakeAudio implements SleepAudio {
  readonly sleeps = new Map<string, number>();
  readonly poweredOff: Array<{ zoneId: string; at: number }> = [];
  /** A zone whose timer expired() fails to clear (a fault the service must not spin on). */
  stuck = new Set<string>();
  constructor(private readonly bus: EventBus) {}
  set(_caller: Caller, zoneId: string, untilMs: number | null): ZoneView {
    if (untilMs === null) this.sleeps.delete(zoneId);
    else this.sleeps.set(zoneId, untilMs);
    this.changed(zoneId);
    return { id: zoneId } as ZoneView;
  }
  expired(zoneId: string, now: number): undefined {
    const until = this.sleeps.get(zoneId);
    if (until === undefined || until > now) return;
    this.poweredOff.push({ zoneId, at: now });
    if (this.stuck.has(zoneId)) return;
    this.sleeps.delete(zoneId);
    this.changed(zoneId);
  }
  timers(): Array<{ zoneId: string; sleepUntil: number }> {
    return [...this.sleeps].map(([zoneId, sleepUntil]) => ({ zoneId, sleepUntil }));
  }
  private changed(zoneId: string): void {
    const until = this.sleeps.get(zoneId);
    this.bus.publish({
      type: 'zone.sleepChanged',
      payload: { zoneId, sleepUntil: until === undefined ? null : new Date(until).toISOString() },
    });
  }
}

function setup(t: { teardown(fn: () => void): void }) {
  const bus = new EventBus(64);
  const clock = new ManualClock(1_000_000);
  const audio = new FakeAudio(bus);
  const timers = new SleepTimers(audio, bus, () => undefined, clock);
  t.teardown(() => timers.stop());
  return { bus, clock, audio, timers };
}

t.test('the service keeps one timer, for the zone due first', async (t) => {
  const { clock, timers } = setup(t);
  timers.start();
  timers.set(ADMIN, 'kitchen', 10);
  timers.set(ADMIN, 'bedroom', 5);
  t.same(clock.dueTimes(), [clock.time + 5 * MINUTE]);
});

t.test('a zone powers off when its time comes, and the next zone is scheduled', async (t) => {
  const { clock, audio, timers } = setup(t);
  timers.start();
  const start = clock.time;
  timers.set(ADMIN, 'kitchen', 10);
  timers.set(ADMIN, 'bedroom', 5);
  clock.advance(5 * MINUTE - 1);
  t.same(audio.poweredOff, [], 'nothing before the time');
  clock.advance(1);
  t.same(audio.poweredOff, [{ zoneId: 'bedroom', at: start + 5 * MINUTE }]);
  t.same(clock.dueTimes(), [start + 10 * MINUTE]);
  clock.advance(5 * MINUTE);
  t.same(
    audio.poweredOff.map((p) => p.zoneId),
    ['bedroom', 'kitchen'],
  );
  t.same(clock.dueTimes(), [], 'no timer left');
});

t.test('fractions of a minute are kept to the millisecond', async (t) => {
  const { clock, audio, timers } = setup(t);
  timers.start();
  timers.set(ADMIN, 'kitchen', 0.005);
  t.equal(audio.sleeps.get('kitchen'), clock.time + 300);
});

t.test('zero minutes cancels the timer', async (t) => {
  const { clock, audio, timers } = setup(t);
  timers.start();
  timers.set(ADMIN, 'kitchen', 5);
  timers.set(ADMIN, 'kitchen', 0);
  t.equal(audio.sleeps.has('kitchen'), false);
  t.same(clock.dueTimes(), []);
  clock.advance(10 * MINUTE);
  t.same(audio.poweredOff, []);
});

t.test('a timer moved later by another path is followed through its event', async (t) => {
  const { clock, audio, timers } = setup(t);
  timers.start();
  const start = clock.time;
  timers.set(ADMIN, 'kitchen', 5);
  audio.set(ADMIN, 'kitchen', start + 20 * MINUTE);
  clock.advance(10 * MINUTE);
  t.same(audio.poweredOff, []);
  t.same(clock.dueTimes(), [start + 20 * MINUTE]);
});

t.test('at start, stored timers already due fire at once and the others are scheduled', async (t) => {
  const { clock, audio, timers } = setup(t);
  audio.sleeps.set('overdue', clock.time - MINUTE);
  audio.sleeps.set('later', clock.time + 3 * MINUTE);
  timers.start();
  t.same(clock.dueTimes(), [clock.time], 'due now');
  clock.advance(0);
  t.same(
    audio.poweredOff.map((p) => p.zoneId),
    ['overdue'],
  );
  t.same(clock.dueTimes(), [clock.time + 3 * MINUTE]);
});

t.test('stop clears the timer and stops following changes', async (t) => {
  const { clock, audio, timers } = setup(t);
  timers.start();
  timers.set(ADMIN, 'kitchen', 5);
  timers.stop();
  t.same(clock.dueTimes(), []);
  audio.set(ADMIN, 'bedroom', clock.time + MINUTE);
  t.same(clock.dueTimes(), [], 'a change after stop schedules nothing');
});

t.test('a zone whose timer stays due after it fired is not fired again and again', async (t) => {
  const { clock, audio, timers } = setup(t);
  audio.stuck.add('kitchen');
  timers.start();
  timers.set(ADMIN, 'kitchen', 1);
  timers.set(ADMIN, 'bedroom', 2);
  clock.advance(MINUTE);
  t.same(
    audio.poweredOff.map((p) => p.zoneId),
    ['kitchen'],
  );
  t.same(clock.dueTimes(), [clock.time + MINUTE], 'the next timer is the other zone');
  clock.advance(MINUTE);
  t.same(
    audio.poweredOff.map((p) => p.zoneId),
    ['kitchen', 'bedroom'],
  );
});

t.test('minutes outside 0 to 1440 are refused and change nothing', async (t) => {
  const { audio, timers } = setup(t);
  timers.start();
  for (const minutes of [-1, 1441, Number.NaN]) {
    t.throws(() => timers.set(ADMIN, 'kitchen', minutes), {
      kind: 'invalid',
      message: /"minutes" must be a number from 0 to 1440/,
    });
  }
  t.equal(audio.sleeps.size, 0);
});
