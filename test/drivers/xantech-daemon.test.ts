// The whole daemon on the Xantech driver over a real pty: API changes reach the wire, activity reports reach the stream.
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { createPtyPair } from '../helpers/pty.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { client } from '../helpers/client.js';
import { openStream, eventOf, isEvent } from '../helpers/sse.js';
import { FAST, FAST_EMULATOR } from './xantech-rig.js';

t.test('daemon on the xantech driver', async (t) => {
  const pty = await createPtyPair();
  const emulator = new XantechEmulator(FAST_EMULATOR);
  await emulator.attachPath(pty.b);
  // The safety poll out of the way: what the daemon hears from a keypad must come from an activity report.
  const driver = new XantechDriver({ serialPort: pty.a, ...FAST, activityPollIntervalMs: 60_000 });
  const d = await startTestDaemon(t, { driver });
  t.teardown(async () => {
    await emulator.close();
    await pty.close();
  });
  const api = client(d.base, d.adminKey);
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

  t.test('zones are the eight outputs and health names the driver', async (t) => {
    t.same(zones.map((z) => z.output.channel), [1, 2, 3, 4, 5, 6, 7, 8]);
    t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'xantech', online: true }] });
  });

  t.test('attach and volume reach the wire as !...+ commands, power first', async (t) => {
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
    const volumeOnWire = emulator.waitForCommand((c) => c === '!1VO19');
    t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
    await volumeOnWire;
    const sets = emulator.commands.filter((c) => c.startsWith('!1'));
    t.ok(sets.indexOf('!1PR1') >= 0, 'powered on');
    t.ok(sets.indexOf('!1PR1') < sets.indexOf('!1SS3'), 'power before source');
    t.match(emulator.zone(1), { power: true, source: 3, volume: 19 });
  });

  t.test('a keypad change reported by the amplifier becomes an event and the stored state', async (t) => {
    emulator.keypad(1, { volume: 30 });
    const m = await stream.next(isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id && Math.round(p.volume * 38) === 30), 5000, 'keypad event');
    t.ok(eventOf(m));
    t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * 38), 30);
  });
});
