// The whole daemon on the RNET driver over a real pty: API changes reach the bus, wall keypads reach the stream.
import t from 'tap';
import { RnetDriver } from '../../drivers/rnet/driver.js';
import { RnetEmulator } from '../../drivers/rnet/emulator.js';
import { eventOf, isEvent } from '../helpers/sse.js';
import { daemonOnDriver } from './daemon-rig.js';
import { FAST } from './rnet-rig.js';

t.test('daemon on the rnet driver', async (t) => {
  const { pty, emulator, api, zones, stream } = await daemonOnDriver(t, new RnetEmulator({ controllers: 1 }), (serialPort) =>
    new RnetDriver({ serialPort, ...FAST }),
  );

  t.test('zones are controller 1 zones 1 to 6, as channels 11 to 16', async (t) => {
    t.same(zones.map((z) => z.output.channel), [11, 12, 13, 14, 15, 16]);
    t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name: 'rnet', online: true }] });
  });

  t.test('attach, volume and mute reach the bus as RNET events, power first', async (t) => {
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
    const volumeOnBus = emulator.waitForCommand((c) => c === 'volume 11 25');
    t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id] })).status, 204);
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
    await volumeOnBus;
    const sent = emulator.commands.filter((c) => / 11( |$)/.test(c) && !c.startsWith('info'));
    t.ok(sent.indexOf('power 11 on') >= 0 && sent.indexOf('power 11 on') < sent.indexOf('source 11 3'), 'power before source');
    t.match(emulator.state(11), { power: true, source: 3, volume: 25 });
    const muted = emulator.waitForCommand((c) => c === 'mute 11');
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/mute`, { muted: true })).status, 204);
    await muted;
    t.equal(emulator.state(11).muted, true);
  });

  t.test('a wall keypad change becomes an event and the stored state', async (t) => {
    emulator.press(11, 'volume-up'); // also un-mutes, as the controller does
    const m = await stream.next(
      isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id && Math.round(p.volume * 50) === 26),
      5000,
      'keypad event',
    );
    t.ok(eventOf(m));
    const zone = (await api.get(`/api/zones/${zones[0]!.id}`)).body;
    t.equal(Math.round(zone.volume * 50), 26);
    t.equal(zone.muted, false);
  });

  t.test('unplugged: the API keeps serving and health says offline; replugged: the change made meanwhile is applied', async (t) => {
    await pty.kill();
    await stream.next(isEvent('hardware.status', (p) => p.online === false), 5000, 'hardware offline');
    t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name: 'rnet', online: false }] });
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.2 })).status, 204, 'answered without the line');
    const back = stream.next(isEvent('hardware.status', (p) => p.online === true), 5000, 'hardware online');
    const applied = emulator.waitForCommand((c) => c === 'volume 11 10');
    await pty.replug();
    await emulator.attachPath(pty.b);
    await back;
    await applied;
    t.equal(emulator.state(11).volume, 10);
  });
});
