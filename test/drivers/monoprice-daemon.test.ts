// The whole daemon on the Monoprice driver over a real pty: API changes reach the wire, keypads reach the stream.
import t from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { createPtyPair } from '../helpers/pty.js';
import { FAST } from './monoprice-rig.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { client } from '../helpers/client.js';
import { openStream, eventOf, isEvent } from '../helpers/sse.js';

t.test('daemon on the monoprice driver', async (t) => {
  const pty = await createPtyPair();
  const emulator = new MonopriceEmulator({ units: 1 });
  await emulator.attachPath(pty.b);
  const driver = new MonopriceDriver({ serialPort: pty.a, ...FAST });
  const d = await startTestDaemon(t, { driver });
  t.teardown(async () => {
    await emulator.close();
    await pty.close();
  });
  const api = client(d.base, d.adminKey);
  // start() resolves once the driver runs; the link comes up on its own schedule.
  if (!driver.online) {
    await new Promise<void>((resolve) => {
      const off = driver.onEvent((e) => {
        if (e.type === 'status' && e.online) {
          off();
          resolve();
        }
      });
    });
  }
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; output: { channel: number } }>;
  const stream = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
  t.teardown(() => stream.close());
  await stream.next((m) => m.retry !== undefined);

  t.test('zones are the amplifier addresses of the fitted unit', async (t) => {
    t.same(zones.map((z) => z.output.channel), [11, 12, 13, 14, 15, 16]);
    t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'monoprice', online: true }] });
  });

  t.test('attach and volume reach the wire as the right commands, power first', async (t) => {
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
    const volumeOnWire = emulator.waitForCommand((c) => c === '<11VO19');
    t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
    await volumeOnWire;
    const sets = emulator.commands.filter((c) => c.startsWith('<11'));
    t.ok(sets.indexOf('<11PR01') >= 0, 'powered on');
    t.ok(sets.indexOf('<11PR01') < sets.indexOf('<11CH03'), 'power before source');
    t.ok(sets.includes('<11CH03'), 'source selected');
    t.match(emulator.state(11), { power: true, source: 3, volume: 19 });
  });

  t.test('a keypad change on the amplifier becomes an event and the stored state', async (t) => {
    emulator.keypad(11, { volume: 30 });
    const m = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id && Math.round(p.volume * 38) === 30), 5000, 'keypad event');
    t.ok(eventOf(m));
    t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * 38), 30);
  });

  t.test('unplugged: the API keeps serving and health says offline; replugged: the change made meanwhile is applied', async (t) => {
    await pty.kill();
    await stream.next(isEvent('hardware.status', (p) => p.online === false), 5000, 'hardware offline');
    t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name: 'monoprice', online: false }] });
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.25 })).status, 204, 'answered without the line');
    const online = stream.next(isEvent('hardware.status', (p) => p.online === true, ), 5000, 'hardware online');
    // Listen before replugging: the driver may push the change before the online event is seen here.
    const applied = emulator.waitForCommand((c) => c === '<11VO10');
    await pty.replug();
    await emulator.attachPath(pty.b);
    await online;
    await applied;
    t.equal(emulator.state(11).volume, 10);
  });
});
