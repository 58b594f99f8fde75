// The event bus: domain events are numbered and replayed; internal events reach only those who ask and leave no trace.
import t from 'tap';
import { type BusEvent, EventBus, type StampedEvent } from '../../daemon/domain/shared/events.js';

t.test('an internal event reaches only subscribers that asked for internal events', async (t) => {
  const bus = new EventBus(8);
  const plain: StampedEvent[] = [];
  const wide: BusEvent[] = [];
  bus.subscribe('test', (event) => plain.push(event));
  bus.subscribe('test', (event) => wide.push(event), { internal: true });
  bus.publish({ type: 'access.changed', payload: { userId: 'u1' } });
  t.same(plain, [], 'not a plain subscriber');
  t.same(wide, [{ type: 'access.changed', payload: { userId: 'u1' } }], 'a subscriber that asked');
});

t.test('an internal event takes no id and is never replayed', async (t) => {
  const bus = new EventBus(8);
  const first = bus.publish({ type: 'hardware.status', payload: { driver: 'simulated', online: true } });
  bus.publish({ type: 'access.changed', payload: { userId: 'u1' } });
  t.equal(bus.lastId, first.id, 'the id counter did not move');
  const second = bus.publish({ type: 'hardware.status', payload: { driver: 'simulated', online: false } });
  t.equal(second.seq, first.seq + 1, 'the next domain event follows without a gap');
  const replay = bus.replay(`${bus.run}-0`);
  t.same(
    'events' in replay && replay.events.map((e) => e.type),
    ['hardware.status', 'hardware.status'],
    'replay holds domain events only',
  );
});

t.test('a domain event reaches both kinds of subscriber with its id', async (t) => {
  const bus = new EventBus(8);
  const plain: StampedEvent[] = [];
  const wide: BusEvent[] = [];
  bus.subscribe('test', (event) => plain.push(event));
  bus.subscribe('test', (event) => wide.push(event), { internal: true });
  const event = bus.publish({ type: 'user.changed', payload: { userId: 'u1' } });
  t.same(plain, [event]);
  t.same(wide, [event]);
});

t.test("an event's id is the bus's run and the event's number in that run", async (t) => {
  const bus = new EventBus(8, 12);
  t.equal(bus.lastId, '12-0', 'before any event');
  const first = bus.publish({ type: 'user.changed', payload: { userId: 'u1' } });
  const second = bus.publish({ type: 'user.changed', payload: { userId: 'u2' } });
  t.same([first.id, second.id], ['12-1', '12-2']);
});

t.test('a resume from an id of this run replays the events after it, and from the last one nothing', async (t) => {
  const bus = new EventBus(8, 3);
  const ids = [1, 2, 3].map((n) => bus.publish({ type: 'user.changed', payload: { userId: `u${n}` } }).id);
  t.same(bus.replay(ids[0]!), {
    events: [2, 3].map((n) => ({ type: 'user.changed', payload: { userId: `u${n}` }, id: `3-${n}`, seq: n })),
  });
  t.same(bus.replay(ids[2]!), { events: [] });
});

t.test(
  'a resume from an id of an earlier run is a reset, even when this run has an event of that number',
  async (t) => {
    // The run before the restart got to 5; this one has 9 events: 6 to 9 of this run are not what the client missed.
    const bus = new EventBus(64, 8);
    for (let n = 1; n <= 9; n++) bus.publish({ type: 'user.changed', payload: { userId: `u${n}` } });
    t.match(bus.replay('7-5'), { reset: /restarted/ });
    t.match(bus.replay('5'), { reset: /restarted/ }, 'a bare number: an id from a version before runs');
  },
);

t.test('a resume the bus cannot serve says why: gone from the ring, restored over, not an id it sent', async (t) => {
  const bus = new EventBus(4, 1);
  for (let n = 1; n <= 10; n++) bus.publish({ type: 'user.changed', payload: { userId: `u${n}` } });
  t.match(bus.replay('1-2'), { reset: /no longer kept/ }, 'older than the ring');
  t.same(
    bus.replay('1-6'),
    {
      events: [7, 8, 9, 10].map((n) => ({ type: 'user.changed', payload: { userId: `u${n}` }, id: `1-${n}`, seq: n })),
    },
    'the ring holds the last four',
  );
  t.match(bus.replay('1-11'), { reset: /not an event id/ }, 'an id this run has not reached');
  t.match(bus.replay('anything'), { reset: /not an event id/ });
  bus.forgetHistory();
  t.match(bus.replay('1-10'), { reset: /restored/ });
});

t.test(
  'volume events kept in parts come back from the ring as they were published, among events of other kinds',
  async (t) => {
    // Capacity 5, 12 events: the ring wraps twice, and each slot held a volume event and an event of another kind.
    const bus = new EventBus(5, 2);
    const published: StampedEvent[] = [];
    bus.subscribe('test', (event) => published.push(event));
    for (let n = 1; n <= 4; n++) {
      bus.publish({ type: 'zone.volumeChanged', payload: { zoneId: `z${n}`, volume: n / 8 } });
      bus.publish({ type: 'player.volumeChanged', payload: { playerId: `p${n}`, volume: 1 - n / 16 } });
      bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: `z${n}`, muted: n % 2 === 0 } });
    }
    t.equal(published.length, 12);
    const replay = bus.replay(published[6]!.id);
    t.strictSame(replay, { events: published.slice(7) }, 'the five events after the resume point, each as delivered');
    t.strictSame(bus.replay(published[10]!.id), { events: [published[11]] }, 'the last one');
    t.match(bus.replay(published[5]!.id), { reset: /no longer kept/ }, 'one further back has left the ring');
  },
);

t.test(
  "a subscriber's exception is told with its owner and the event's type, and the others still get the event",
  async (t) => {
    const bus = new EventBus(8);
    const told: Array<[string, string, string]> = [];
    bus.onSubscriberError = (owner, type, error) => told.push([owner, type, (error as Error).message]);
    const after: string[] = [];
    bus.subscribe('faulty', () => {
      throw new Error('boom');
    });
    bus.subscribe('steady', (event) => after.push(event.type));
    bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: 'z1', muted: true } });
    t.same(told, [['faulty', 'zone.mutedChanged', 'boom']]);
    t.same(after, ['zone.mutedChanged'], 'the next subscriber got it');
  },
);

t.test('removeListeners undoes every subscription of one owner and no other', async (t) => {
  const bus = new EventBus(8);
  const seen: string[] = [];
  bus.subscribe('mqtt-bridge', () => seen.push('bridge 1'));
  bus.subscribe('mqtt-bridge', () => seen.push('bridge 2'), { internal: true });
  bus.subscribe('sleep-timers', () => seen.push('timers'));
  t.equal(bus.removeListeners('mqtt-bridge'), 2, 'both of its subscriptions');
  t.equal(bus.removeListeners('mqtt-bridge'), 0, 'none left');
  bus.publish({ type: 'zone.mutedChanged', payload: { zoneId: 'z1', muted: true } });
  t.same(seen, ['timers']);
  t.equal(bus.subscriberCount, 1);
});

t.test(
  'a subscriber of a later stage hears an event after one of an earlier stage, whatever the order they came in',
  (t) => {
    const bus = new EventBus();
    const heard: string[] = [];
    bus.subscribe('late', () => heard.push('clients'), { internal: true, stage: 'clients' });
    bus.subscribe('middle', () => heard.push('services'), { internal: true });
    bus.subscribe('early', () => heard.push('stored'), { internal: true, stage: 'stored' });
    bus.publish({ type: 'configuration.replaced', payload: {} });
    t.same(heard, ['stored', 'services', 'clients']);
    t.end();
  },
);

t.test('configuration.replaced forgets the history: a resume from before it is told to refetch', (t) => {
  const bus = new EventBus(8);
  const before = bus.publish({ type: 'user.changed', payload: { userId: 'u1' } });
  bus.publish({ type: 'configuration.replaced', payload: {} });
  t.match(bus.replay(before.id), { reset: /restored/ });
  t.end();
});
