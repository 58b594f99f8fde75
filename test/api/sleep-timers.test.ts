// Sleep timers from outside: PUT /api/zones/{id}/sleep, the zone's sleepUntil, power-off when due, and restarts.

import { rmSync } from 'node:fs';
import t from 'tap';
import type { EventBus, StampedEvent } from '../../daemon/domain/shared/events.js';
import { startDaemon, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { within } from '../helpers/wait-for.js';

interface Zone {
  id: string;
  power: boolean;
  sleepUntil: string | null;
}

/** Resolves with the first event on the bus (from now on) that matches. */
function nextEvent(bus: EventBus, match: (event: StampedEvent) => boolean, what: string): Promise<StampedEvent> {
  let off = (): void => undefined;
  const seen = new Promise<StampedEvent>((resolve) => {
    off = bus.subscribe('test', (event) => {
      if (match(event)) resolve(event);
    });
  });
  return within(seen, undefined, what).finally(off);
}

const poweredOff = (zoneId: string) => (e: StampedEvent) =>
  e.type === 'zone.powerChanged' && e.payload.zoneId === zoneId && e.payload.power === false;

t.test('sleep timers', async (t) => {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Zone[];
  const [z1, z2, z3, z4] = zones.map((z) => z.id) as [string, string, string, string];
  const operator = await createUser(api, 'sleepy-op', 'Operator', { playerIds: [], zoneIds: [z1, z2, z3] });
  const viewer = await createUser(api, 'sleepy-viewer', 'Viewer', { playerIds: [], zoneIds: [z1] });
  const op = injectClient(d.daemon, operator.apiKey);
  const zone = async (id: string) => (await api.get(`/api/zones/${id}`)).body as Zone;
  const on = async (id: string) => {
    const res = await api.put(`/api/zones/${id}/power`, { power: true });
    if (res.status !== 204) throw new Error(`powering zone ${id} on: ${res.status} ${res.text}`);
  };

  t.test('an operator sets a timer on a zone that is on: the zone shows when it powers off', async (t) => {
    await on(z1);
    const changed = nextEvent(
      d.daemon.services.bus,
      (e) => e.type === 'zone.sleepChanged' && e.payload.zoneId === z1,
      'zone.sleepChanged',
    );
    const before = Date.now();
    const res = await op.put(`/api/zones/${z1}/sleep`, { minutes: 30 });
    t.equal(res.status, 200);
    t.equal(res.body.id, z1);
    const until = Date.parse(res.body.sleepUntil);
    t.ok(until >= before + 30 * 60_000 && until <= Date.now() + 30 * 60_000, 'thirty minutes from the request');
    t.equal((await zone(z1)).sleepUntil, res.body.sleepUntil, 'the zone keeps it');
    t.match((await changed).payload, { zoneId: z1, sleepUntil: res.body.sleepUntil });
    t.equal((await op.put(`/api/zones/${z1}/sleep`, { minutes: 0 })).status, 200);
  });

  t.test('a zone powers off when its timer is due, and the timer is gone', async (t) => {
    await on(z2);
    const off = nextEvent(d.daemon.services.bus, poweredOff(z2), 'the zone to power off');
    t.equal((await op.put(`/api/zones/${z2}/sleep`, { minutes: 0.005 })).status, 200);
    await off;
    t.match(await zone(z2), { power: false, sleepUntil: null });
    await d.driver.settled();
    t.equal(d.driver.hardwareState(2)?.power, false, 'the amplifier was told');
  });

  t.test('zero minutes cancels a timer: the zone stays on while a later timer elsewhere fires', async (t) => {
    await on(z1);
    await on(z3);
    t.equal((await op.put(`/api/zones/${z1}/sleep`, { minutes: 0.002 })).status, 200);
    const res = await op.put(`/api/zones/${z1}/sleep`, { minutes: 0 });
    t.equal(res.status, 200);
    t.equal(res.body.sleepUntil, null);
    const off = nextEvent(d.daemon.services.bus, poweredOff(z3), 'the other zone to power off');
    t.equal((await op.put(`/api/zones/${z3}/sleep`, { minutes: 0.005 })).status, 200);
    await off;
    t.match(await zone(z1), { power: true, sleepUntil: null }, 'the cancelled zone is still on');
  });

  t.test('a timer on a zone that is off is a conflict and changes nothing', async (t) => {
    await api.put(`/api/zones/${z4}/power`, { power: false });
    const res = await api.put(`/api/zones/${z4}/sleep`, { minutes: 10 });
    t.equal(res.status, 409);
    t.match(res.headers.get('content-type'), /problem\+json/);
    t.equal((await zone(z4)).sleepUntil, null);
  });

  t.test('powering a zone off by hand ends its timer', async (t) => {
    await on(z1);
    t.equal((await op.put(`/api/zones/${z1}/sleep`, { minutes: 60 })).status, 200);
    const cleared = nextEvent(
      d.daemon.services.bus,
      (e) => e.type === 'zone.sleepChanged' && e.payload.zoneId === z1 && e.payload.sleepUntil === null,
      'the timer to end',
    );
    t.equal((await op.put(`/api/zones/${z1}/power`, { power: false })).status, 204);
    await cleared;
    t.equal((await zone(z1)).sleepUntil, null);
  });

  t.test('minutes must be a number from 0 to 1440: anything else is a 400 and changes nothing', async (t) => {
    await on(z1);
    for (const body of [{ minutes: -1 }, { minutes: 1441 }, { minutes: '5' }, { minutes: null }, {}]) {
      const res = await op.put(`/api/zones/${z1}/sleep`, body);
      t.equal(res.status, 400, JSON.stringify(body));
      t.ok(res.body.errors?.minutes, 'names the field');
    }
    t.equal((await zone(z1)).sleepUntil, null);
  });

  t.test('a viewer cannot set a timer and an operator cannot see a zone outside its assignments', async (t) => {
    await on(z4);
    t.equal((await injectClient(d.daemon, viewer.apiKey).put(`/api/zones/${z1}/sleep`, { minutes: 5 })).status, 403);
    t.equal((await op.put(`/api/zones/${z4}/sleep`, { minutes: 5 })).status, 404);
    t.equal((await zone(z4)).sleepUntil, null);
  });
});

t.test('a timer survives a restart and powers the zone off when due', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startDaemon({ stateDir });
  t.teardown(() => first.stop());
  const api = injectClient(first.daemon, first.adminKey);
  const [kitchen, bedroom] = ((await api.get('/api/zones')).body as Zone[]).map((z) => z.id) as [string, string];
  for (const id of [kitchen, bedroom]) await api.put(`/api/zones/${id}/power`, { power: true });
  const late = (await api.put(`/api/zones/${kitchen}/sleep`, { minutes: 20 })).body.sleepUntil as string;
  const soon = (await api.put(`/api/zones/${bedroom}/sleep`, { minutes: 10 })).body.sleepUntil as string;
  await first.stop();

  // A clock that stands still until told: the timers can only fire when the test moves it.
  const clock = new ManualClock();
  const second = await startDaemon({ stateDir, clock });
  t.teardown(() => second.stop());
  const again = injectClient(second.daemon, first.adminKey);
  t.match(
    (await again.get(`/api/zones/${bedroom}`)).body,
    { power: true, sleepUntil: soon },
    'still set after the restart',
  );
  t.same(clock.dueTimes(), [Date.parse(soon)], 'one timer, for the zone due first');
  const off = nextEvent(second.daemon.services.bus, poweredOff(bedroom), 'the zone to power off');
  clock.advance(Date.parse(soon) - clock.now());
  await off;
  t.match((await again.get(`/api/zones/${bedroom}`)).body, { power: false, sleepUntil: null });
  t.match((await again.get(`/api/zones/${kitchen}`)).body, { power: true, sleepUntil: late }, 'the later timer waits');
  t.same(clock.dueTimes(), [Date.parse(late)]);
});

t.test('a timer that came due while the daemon was down fires as soon as it starts', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startDaemon({ stateDir });
  t.teardown(() => first.stop());
  const api = injectClient(first.daemon, first.adminKey);
  const kitchen = ((await api.get('/api/zones')).body as Zone[])[0]!.id;
  await api.put(`/api/zones/${kitchen}/power`, { power: true });
  const until = Date.parse((await api.put(`/api/zones/${kitchen}/sleep`, { minutes: 5 })).body.sleepUntil);
  await first.stop();

  // The daemon comes back an hour later.
  const clock = new ManualClock(until + 60 * 60_000);
  const second = await startDaemon({ stateDir, clock });
  t.teardown(() => second.stop());
  t.same(clock.dueTimes(), [clock.now()], 'due at once');
  clock.advance(0);
  t.match((await injectClient(second.daemon, first.adminKey).get(`/api/zones/${kitchen}`)).body, {
    power: false,
    sleepUntil: null,
  });
});
