// The event bus: domain events are numbered and replayed; internal events reach only those who ask and leave no trace.
import t from 'tap';
import { EventBus, type BusEvent, type StampedEvent } from '../../daemon/domain/events.js';

t.test('an internal event reaches only subscribers that asked for internal events', async (t) => {
  const bus = new EventBus(8);
  const plain: StampedEvent[] = [];
  const wide: BusEvent[] = [];
  bus.subscribe((event) => plain.push(event));
  bus.subscribe((event) => wide.push(event), { internal: true });
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
  t.equal(second.id, first.id + 1, 'the next domain event follows without a gap');
  t.same(bus.since(0)?.map((e) => e.type), ['hardware.status', 'hardware.status'], 'replay holds domain events only');
});

t.test('a domain event reaches both kinds of subscriber with its id', async (t) => {
  const bus = new EventBus(8);
  const plain: StampedEvent[] = [];
  const wide: BusEvent[] = [];
  bus.subscribe((event) => plain.push(event));
  bus.subscribe((event) => wide.push(event), { internal: true });
  const event = bus.publish({ type: 'user.changed', payload: { userId: 'u1' } });
  t.same(plain, [event]);
  t.same(wide, [event]);
});
