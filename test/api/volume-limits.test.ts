// Volume limits from outside: every path that sets a zone's volume ends at or below its maxVolume, and a zone that
// powers on starts at its turn-on volume (simulated amplifier; the Monoprice path is in test/drivers).
import t, { type Test } from 'tap';
import { asWriter, type StampedEvent } from '../../daemon/domain/shared/index.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { waitFor } from '../helpers/wait-for.js';

const STEPS = 38;
const step = (volume: number) => Math.round(volume * STEPS);

interface Zone {
  id: string;
  name: string;
  volume: number;
  power: boolean;
  muted: boolean;
  maxVolume: number;
  turnOnVolume: number | null;
  output: { channel: number };
}

async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const zones = (await api.get('/api/zones')).body as Zone[];
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const zone = async (id: string): Promise<Zone> => (await api.get(`/api/zones/${id}`)).body;
  const limit = async (id: string, body: Record<string, unknown>) => {
    const res = await api.put(`/api/zones/${id}`, body);
    if (res.status !== 200) throw new Error(`setting ${JSON.stringify(body)} failed: ${res.status} ${res.text}`);
    return res.body as Zone;
  };
  const powerOn = async (id: string) => {
    const res = await api.put(`/api/zones/${id}/power`, { power: true });
    if (res.status !== 204) throw new Error(`power on failed: ${res.status} ${res.text}`);
  };
  return { d, api, driver, zones, events, zone, limit, powerOn };
}

t.test('a new zone has no limit: maxVolume 1, no turn-on volume, no sleep timer', async (t) => {
  const { zones } = await setup(t);
  t.match(zones[0], { maxVolume: 1, turnOnVolume: null, sleepUntil: null });
});

t.test(
  'an admin sets the limits with PUT /api/zones/{id}, and the zone and its zone.updated event show them',
  async (t) => {
    const { api, zones, events, zone } = await setup(t);
    const res = await api.put(`/api/zones/${zones[0]!.id}`, { maxVolume: 0.6, turnOnVolume: 0.25 });
    t.equal(res.status, 200);
    t.match(res.body, { id: zones[0]!.id, name: zones[0]!.name, maxVolume: 0.6, turnOnVolume: 0.25 });
    t.match(await zone(zones[0]!.id), { maxVolume: 0.6, turnOnVolume: 0.25 });
    const updated = events.find((e) => e.type === 'zone.updated');
    t.match(updated?.payload, { zone: { id: zones[0]!.id, maxVolume: 0.6, turnOnVolume: 0.25, sleepUntil: null } });
    t.equal(
      (await api.put(`/api/zones/${zones[0]!.id}`, { turnOnVolume: null })).body.turnOnVolume,
      null,
      'null clears the turn-on volume',
    );
    t.equal((await zone(zones[0]!.id)).maxVolume, 0.6, 'a field left out keeps its value');
  },
);

t.test(
  'a zone volume above the limit is clamped to the limit, not refused, on the amplifier and in the events',
  async (t) => {
    const { api, driver, zones, events, zone, limit, powerOn } = await setup(t);
    const id = zones[1]!.id;
    await limit(id, { maxVolume: 0.5 });
    await powerOn(id);
    t.equal((await api.put(`/api/zones/${id}/volume`, { volume: 0.9 })).status, 204);
    t.equal((await zone(id)).volume, 0.5);
    await driver.settled();
    t.equal(step(driver.hardwareState(2)!.volume), step(0.5));
    const reported = events.filter((e) => e.type === 'zone.volumeChanged').map((e) => e.payload);
    t.same(reported, [{ zoneId: id, volume: 0.5 }], 'the event reports the effective volume');
    t.equal((await api.put(`/api/zones/${id}/volume`, { volume: 0.3 })).status, 204);
    t.equal((await zone(id)).volume, 0.3, 'below the limit the request is taken as it is');
  },
);

t.test('lowering the limit below the current volume pulls the zone down at once', async (t) => {
  const { api, driver, zones, events, zone, limit, powerOn } = await setup(t);
  const id = zones[2]!.id;
  await powerOn(id);
  await api.put(`/api/zones/${id}/volume`, { volume: 0.8 });
  events.length = 0;
  const updated = await limit(id, { maxVolume: 0.4 });
  t.equal(updated.volume, 0.4, 'the answer shows the pulled-down volume');
  t.equal((await zone(id)).volume, 0.4);
  await driver.settled();
  t.equal(step(driver.hardwareState(3)!.volume), step(0.4), 'the amplifier follows');
  t.ok(events.some((e) => e.type === 'zone.volumeChanged' && e.payload.zoneId === id && e.payload.volume === 0.4));
  await limit(id, { maxVolume: 0.9 });
  t.equal((await zone(id)).volume, 0.4, 'raising the limit again does not raise the volume');
});

t.test(
  'a zone switched on starts at its turn-on volume; one left above a lowered limit is kept and applied clamped',
  async (t) => {
    const { driver, zones, zone, limit, powerOn } = await setup(t);
    const id = zones[3]!.id;
    await limit(id, { turnOnVolume: 0.2 });
    await powerOn(id);
    t.equal((await zone(id)).volume, 0.2);
    const other = zones[4]!.id;
    await limit(other, { turnOnVolume: 0.8 });
    t.equal((await limit(other, { maxVolume: 0.35 })).turnOnVolume, 0.8, 'kept when the limit is lowered below it');
    await powerOn(other);
    t.equal((await zone(other)).volume, 0.35, 'applied clamped to the limit');
    await driver.settled();
    t.equal(step(driver.hardwareState(5)!.volume), step(0.35));
  },
);

t.test(
  'attach keeps the volume of a zone that plays and starts a zone that was off at its turn-on volume, clamped',
  async (t) => {
    const { api, zones, zone, limit, powerOn } = await setup(t);
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 2 } })).body;
    const [playing, off] = [zones[0]!.id, zones[1]!.id];
    await powerOn(playing);
    await api.put(`/api/zones/${playing}/volume`, { volume: 0.45 });
    await limit(playing, { turnOnVolume: 0.1 });
    await limit(off, { turnOnVolume: 0.7 });
    await limit(off, { maxVolume: 0.3 });
    t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [playing, off] })).status, 204);
    t.match(
      await zone(playing),
      { volume: 0.45, power: true, playerId: player.id },
      'the playing zone keeps its volume',
    );
    t.match(
      await zone(off),
      { volume: 0.3, power: true, playerId: player.id },
      'the zone that was off starts at min(turn-on, limit)',
    );
  },
);

t.test('a group volume change above a zone limit clamps that zone only', async (t) => {
  const { api, driver, zones, zone, limit } = await setup(t);
  const player = (await api.post('/api/players', { name: 'Group', input: { channel: 3 } })).body;
  await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[1]!.id] });
  await limit(zones[0]!.id, { maxVolume: 0.25 });
  t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.9 })).status, 204);
  t.equal((await zone(zones[0]!.id)).volume, 0.25);
  t.equal((await zone(zones[1]!.id)).volume, 0.9);
  await driver.settled();
  t.equal(step(driver.hardwareState(1)!.volume), step(0.25));
});

t.test(
  'a keypad raise above the limit is pulled back on the amplifier, reported as the limit, and logged',
  async (t) => {
    const { d, driver, zones, events, zone, limit, powerOn } = await setup(t);
    const id = zones[5]!.id;
    await limit(id, { maxVolume: 0.5 });
    await powerOn(id);
    await driver.settled();
    events.length = 0;
    driver.simulateKeypad(6, { volume: 1 });
    t.equal((await zone(id)).volume, 0.5, 'stored and reported as the limit');
    await driver.settled();
    t.equal(step(driver.hardwareState(6)!.volume), step(0.5), 'pulled back on the amplifier');
    const volumes = events.filter((e) => e.type === 'zone.volumeChanged').map((e) => e.payload);
    t.same(volumes, [{ zoneId: id, volume: 0.5 }], 'no event ever reports the raise');
    // The logger writes on its own schedule: wait for the line rather than expect it at once.
    const warning = await waitFor(
      () => d.logs.map((line) => JSON.parse(line)).find((entry) => entry.level === 40 && entry.zoneId === id),
      undefined,
      {
        what: 'the warning naming the zone',
      },
    );
    t.match(warning.msg, /Zone 6.*above its limit/);
  },
);

t.test('a keypad raise within the limit is taken as it is', async (t) => {
  const { driver, zones, zone, limit, powerOn } = await setup(t);
  const id = zones[5]!.id;
  await limit(id, { maxVolume: 0.5 });
  await powerOn(id);
  await driver.settled();
  driver.simulateKeypad(6, { volume: 15 / STEPS });
  t.equal(step((await zone(id)).volume), 15);
});

t.test('a zone switched on at the keypad starts at its turn-on volume, on the amplifier too', async (t) => {
  const { driver, zones, zone, limit } = await setup(t);
  const id = zones[0]!.id;
  await limit(id, { maxVolume: 0.6, turnOnVolume: 0.2 });
  driver.simulateKeypad(1, { power: true, volume: 0.9 });
  t.match(await zone(id), { power: true, volume: 0.2 });
  await driver.settled();
  t.equal(step(driver.hardwareState(1)!.volume), step(0.2));
});

t.test('an apply (the primitive under scenes) clamps each zone to its limit', async (t) => {
  const { d, zones, zone, limit } = await setup(t);
  const id = zones[0]!.id;
  await limit(id, { maxVolume: 0.3 });
  const admin = d.daemon.services.authentication.callerOfAccount('admin')!;
  const { changed } = await d.daemon.services.zoneStates.apply(asWriter(admin), [
    { zoneId: id, power: true, volume: 0.95, muted: false, playerId: null },
  ]);
  t.same(changed, [id]);
  t.match(await zone(id), { power: true, muted: false, volume: 0.3 });
});

t.test(
  'limits are for admins, are fractions from 0 to 1, and a body without a known field changes nothing',
  async (t) => {
    const { api, zones, zone } = await setup(t);
    const id = zones[0]!.id;
    const op = await createUser(api, 'limit-operator', 'Operator', { playerIds: [], zoneIds: [id] });
    t.equal(
      (await api.put(`/api/zones/${id}`, { maxVolume: 0.5 }, { key: op.apiKey })).status,
      403,
      'an operator cannot set a limit',
    );
    for (const body of [
      { maxVolume: 1.5 },
      { maxVolume: -0.1 },
      { maxVolume: '0.5' },
      { maxVolume: null },
      { turnOnVolume: 2 },
      { turnOnVolume: 'loud' },
    ]) {
      const res = await api.put(`/api/zones/${id}`, body);
      t.equal(res.status, 400, `${JSON.stringify(body)} is refused`);
      t.ok(res.body.errors[Object.keys(body)[0]!], 'and names the field');
    }
    const empty = await api.put(`/api/zones/${id}`, {});
    t.equal(empty.status, 400, 'an empty body is refused');
    t.match(empty.body.detail, /at least one of "name", "maxVolume" and "turnOnVolume"/);
    const misspelt = await api.put(`/api/zones/${id}`, { maxvolume: 0.2 });
    t.equal(misspelt.status, 400, 'a body with only an unknown field is refused too');
    t.match(misspelt.body.detail, /maxVolume/);
    const both = await api.put(`/api/zones/${id}`, { maxVolume: 0.5, turnOnVolume: 3 });
    t.equal(both.status, 400, 'one bad field fails the whole body');
    t.match(await zone(id), { maxVolume: 1, turnOnVolume: null }, 'nothing changed');
  },
);
