// The composition root hands out one typed object of services once start() resolved, the same one start() resolves
// with; before that, asking for it says what to do.

import { rmSync } from 'node:fs';
import t from 'tap';
import { Daemon } from '../../daemon/app.js';
import { defaultConfig } from '../../daemon/config.js';
import { createLogger } from '../../daemon/log.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';

t.test('a daemon not yet started has no services, and says to await start() first', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const daemon = new Daemon({ config: { ...defaultConfig(), stateDir }, logger: createLogger('silent') });
  t.throws(() => daemon.services, /the daemon is not started: await start\(\) first/);
});

t.test('the services the daemon hands out are the ones its routes answer with', async (t) => {
  const d = await startTestDaemon(t);
  const { services } = d.daemon;
  const admin = services.authentication.callerOfAccount('admin')!;
  const player = services.players.create(admin, { name: 'Kitchen', input: { channel: 1 } });
  const listed = await d.daemon.inject({ method: 'GET', path: '/api/players', headers: { 'x-api-key': d.adminKey } });
  t.same(
    listed.body.map((p: { id: string }) => p.id),
    [player.id],
  );
  t.equal(
    services.udn,
    (await d.daemon.inject({ method: 'GET', path: '/description.xml' })).text.match(/<UDN>(.*)<\/UDN>/)?.[1],
  );
});

/** Has `object[name]` note `label` in `heard` each time it is called, then do what it did. */
function record<O extends object>(heard: string[], label: string, object: O, name: keyof O & string): void {
  const original = object[name] as (...args: unknown[]) => unknown;
  Object.assign(object, {
    [name]: (...args: unknown[]) => {
      heard.push(label);
      return original.apply(object, args);
    },
  });
}

t.test(
  'after a restore each service reloads what it keeps by itself: the stored rows first, what clients hold last',
  async (t) => {
    const d = await startTestDaemon(t);
    const { services } = d.daemon;
    const admin = services.authentication.callerOfAccount('admin')!;
    services.players.create(admin, { name: 'Kitchen', input: { channel: 1 } });
    const lastBefore = services.bus.lastId;
    const heard: string[] = [];
    record(heard, 'amplifiers', services.hardware, 'reload');
    record(heard, 'stream players', services.playback, 'reload');
    record(heard, 'receivers', services.receivers, 'reload');
    record(heard, 'sleep timers', services.sleepTimers, 'reschedule');
    record(heard, 'bridge', services.mqtt, 'resync');
    record(heard, 'accounts', services.users, 'accountsReplaced');
    record(heard, 'event streams', services.streams, 'closeAll');
    services.bus.publish({ type: 'configuration.replaced', payload: {} });
    t.same(
      [...heard].sort(),
      ['accounts', 'amplifiers', 'bridge', 'event streams', 'receivers', 'sleep timers', 'stream players'],
      'each reacted once',
    );
    t.equal(heard[0], 'amplifiers', 'the rows are reread before any service reads them');
    t.same(heard.slice(-2).sort(), ['accounts', 'event streams'], 'cached callers and event streams end last');
    t.match(services.bus.replay(lastBefore), { reset: /restored/ }, 'no event from before it is replayed');
  },
);

t.test(
  "a player deleted leaves its users' assignment lists: their views say so at once and their access is re-checked",
  async (t) => {
    const d = await startTestDaemon(t);
    const { services } = d.daemon;
    const admin = services.authentication.callerOfAccount('admin')!;
    const player = services.players.create(admin, { name: 'Kitchen', input: { channel: 1 } });
    const op = await services.users.create(admin, {
      username: 'kitchen-op',
      role: 'Operator',
      assignments: { playerIds: [player.id], zoneIds: [] },
    });
    t.same(services.users.get(admin, op.id).assignments.playerIds, [player.id], 'assigned (and the view kept)');
    const changed: string[] = [];
    t.teardown(
      services.bus.subscribe(
        'test',
        (event) => {
          if (event.type === 'access.changed') changed.push(event.payload.userId);
        },
        { internal: true },
      ),
    );
    services.players.remove(admin, player.id);
    t.same(services.users.get(admin, op.id).assignments.playerIds, []);
    t.same(changed, [op.id], "the user's access is re-checked");
  },
);
