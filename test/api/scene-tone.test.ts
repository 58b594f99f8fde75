// Scenes and tone: a scene captures each zone's tone and applies it (the amplifier, the zone and zone.toneChanged),
// undo brings the tone back, and a scene without a tone (saved before tone controls) leaves the tone alone.
import t, { type Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/index.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const ids = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((z) => z.id);
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const setTone = async (id: string, tone: Record<string, unknown>) => {
    const res = await api.put(`/api/zones/${id}/tone`, tone);
    if (res.status !== 204) throw new Error(`setting the tone of zone ${id}: ${res.status} ${res.text}`);
  };
  const toneOf = async (id: string) => (await api.get(`/api/zones/${id}`)).body.tone;
  return { d, api, driver, ids, events, setTone, toneOf };
}

t.test("a scene captures each zone's tone and applying it sets the tone on the amplifier and the zone", async (t) => {
  const { api, driver, ids, events, setTone, toneOf } = await setup(t);
  await setTone(ids[0]!, { bass: 1, treble: -1, balance: 0.5, loudness: true });
  const scene = (await api.post('/api/scenes', { name: 'Bright', zoneIds: [ids[0]] })).body;
  t.same(scene.zones[0].tone, { bass: 1, treble: -1, balance: 0.5, loudness: true });
  await setTone(ids[0]!, { bass: 0, treble: 0, balance: 0, loudness: false });
  events.length = 0;
  t.equal((await api.post(`/api/scenes/${scene.id}/apply`)).status, 200);
  t.same(await toneOf(ids[0]!), { bass: 1, treble: -1, balance: 0.5, loudness: true });
  await driver.settled();
  t.match(driver.amplifierTone(1), { bass: 1, treble: -1, balance: 0.5, loudness: true });
  t.same(
    events.filter((e) => e.type === 'zone.toneChanged').map((e) => e.payload),
    [{ zoneId: ids[0], tone: { bass: 1, treble: -1, balance: 0.5, loudness: true } }],
  );
  t.equal((await api.post('/api/scenes/undo')).status, 200);
  t.same(await toneOf(ids[0]!), { bass: 0, treble: 0, balance: 0, loudness: false }, 'undo brings the tone back');
});

t.test('a scene zone without a tone (saved before tone controls) applies none', async (t) => {
  const { api, driver, ids, events, setTone, toneOf } = await setup(t);
  const scene = (await api.post('/api/scenes', { name: 'Old', zoneIds: [ids[1]] })).body;
  const zones = scene.zones.map(({ tone: _tone, ...rest }: Record<string, unknown>) => ({ ...rest, volume: 0.25 }));
  t.equal((await api.put(`/api/scenes/${scene.id}`, { zones })).status, 200);
  t.equal((await api.get(`/api/scenes/${scene.id}`)).body.zones[0].tone, undefined, 'the scene has no tone');
  await setTone(ids[1]!, { treble: 0.5 });
  events.length = 0;
  t.equal((await api.post(`/api/scenes/${scene.id}/apply`)).status, 200);
  t.equal((await api.get(`/api/zones/${ids[1]}`)).body.volume, 0.25, 'the rest of the scene is applied');
  t.same(await toneOf(ids[1]!), { bass: 0, treble: 0.5, balance: 0, loudness: false }, 'the tone is left as it was');
  await driver.settled();
  t.equal(driver.amplifierTone(2)?.treble, 4 / 7, 'the amplifier keeps it (at its step nearest 0.5)');
  t.notOk(events.some((e) => e.type === 'zone.toneChanged'));
});

t.test('an edited scene zone with a tone off the scale is refused with a 400 naming the range', async (t) => {
  const { api, ids } = await setup(t);
  const scene = (await api.post('/api/scenes', { name: 'Edited', zoneIds: [ids[2]] })).body;
  const zones = [{ ...scene.zones[0], tone: { bass: 2 } }];
  const res = await api.put(`/api/scenes/${scene.id}`, { zones });
  t.equal(res.status, 400);
  t.match(res.body.detail, 'must be a number from -1 to 1, got 2');
});
