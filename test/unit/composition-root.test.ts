// The composition root hands out one typed object of services once start() resolved, the same one start() resolves
// with; before that, asking for it says what to do.
import t from 'tap';
import { rmSync } from 'node:fs';
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
