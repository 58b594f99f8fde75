// Tone controls and amplifier status on the zone resource, PUT /api/zones/{id}/tone and its refusals, the
// zone.toneChanged and zone.statusChanged events, and the tone kept across a restart (simulated amplifier, every control).

import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import type { StampedEvent } from '../../daemon/domain/shared/index.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { startDaemon, startTestDaemon, tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { waitFor } from '../helpers/wait-for.js';

async function setup(t: Test) {
  const d = await startTestDaemon(t);
  const api = injectClient(d.daemon, d.adminKey);
  const driver = d.driver as SimulatedDriver;
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; name: string; output: { channel: number } }>;
  const events: StampedEvent[] = [];
  t.teardown(d.daemon.services.bus.subscribe('test', (event) => events.push(event)));
  const zone = async (id: string) => (await api.get(`/api/zones/${id}`)).body;
  return { d, api, driver, zones, events, zone };
}

t.test(
  'a zone of the simulated amplifier shows its tone, every control with its steps, and its amplifier status',
  async (t) => {
    const { zones, zone } = await setup(t);
    const shown = await zone(zones[0]!.id);
    t.same(shown.tone, { bass: 0, treble: 0, balance: 0, loudness: false });
    t.same(shown.toneControls, {
      bass: { available: true, down: 7, up: 7 },
      treble: { available: true, down: 7, up: 7 },
      balance: { available: true, down: 10, up: 10 },
      loudness: { available: true },
    });
    t.same(shown.amplifierStatus, { paging: false, doNotDisturb: false, party: false });
  },
);

t.test(
  'PUT tone sets the controls named: 204, the zone shows them, the amplifier has them, one zone.toneChanged',
  async (t) => {
    const { api, driver, zones, events, zone } = await setup(t);
    const id = zones[1]!.id;
    const res = await api.put(`/api/zones/${id}/tone`, { bass: 1, balance: -0.5, loudness: true });
    t.equal(res.status, 204, res.text);
    t.same((await zone(id)).tone, { bass: 1, treble: 0, balance: -0.5, loudness: true });
    await driver.settled();
    t.match(driver.amplifierTone(2), { bass: 1, treble: 0, balance: -0.5, loudness: true });
    const toneEvents = events.filter((e) => e.type === 'zone.toneChanged');
    t.same(
      toneEvents.map((e) => e.payload),
      [{ zoneId: id, tone: { bass: 1, treble: 0, balance: -0.5, loudness: true } }],
    );
    t.equal((await api.put(`/api/zones/${id}/tone`, { treble: -1 })).status, 204);
    t.same(
      (await zone(id)).tone,
      { bass: 1, treble: -1, balance: -0.5, loudness: true },
      'a control left out keeps its value',
    );
  },
);

t.test('a tone value off the scale is a 400 naming the range, and nothing changes', async (t) => {
  const { api, zones, events, zone } = await setup(t);
  const id = zones[0]!.id;
  const res = await api.put(`/api/zones/${id}/tone`, { bass: 1.5, treble: 0.5 });
  t.equal(res.status, 400);
  t.match(res.body.detail, '"bass" must be a number from -1 to 1, got 1.5');
  t.same((await zone(id)).tone, { bass: 0, treble: 0, balance: 0, loudness: false });
  t.notOk(events.some((e) => e.type === 'zone.toneChanged'));
});

t.test('a tone body naming no control, or a field that is no control, is a 400 saying what to send', async (t) => {
  const { api, zones, zone } = await setup(t);
  const id = zones[0]!.id;
  const empty = await api.put(`/api/zones/${id}/tone`, {});
  t.equal(empty.status, 400);
  t.match(empty.body.detail, 'send at least one of "bass", "treble", "balance" and "loudness"');
  const unknown = await api.put(`/api/zones/${id}/tone`, { bass: 0.5, bas: 0.5 });
  t.equal(unknown.status, 400);
  t.match(unknown.body.detail, '"bas" is no tone control');
  t.equal((await zone(id)).tone.bass, 0, 'the known field of a refused body is not applied');
  const notBoolean = await api.put(`/api/zones/${id}/tone`, { loudness: 'yes' });
  t.equal(notBoolean.status, 400);
  t.match(notBoolean.body.detail, '"loudness" must be true or false');
});

t.test(
  'PUT tone follows the volume rules: 404 for a zone not assigned, 403 for a Viewer, 409 while the zone cannot answer',
  async (t) => {
    const { d, api, driver, zones } = await setup(t);
    const op = await createUser(api, 'tone-op', 'Operator', { playerIds: [], zoneIds: [zones[0]!.id] });
    const viewer = await createUser(api, 'tone-viewer', 'Viewer', { playerIds: [], zoneIds: [zones[0]!.id] });
    const opApi = injectClient(d.daemon, op.apiKey);
    t.equal(
      (await opApi.put(`/api/zones/${zones[0]!.id}/tone`, { bass: 0.5 })).status,
      204,
      'an Operator sets its own zone',
    );
    t.equal(
      (await opApi.put(`/api/zones/${zones[1]!.id}/tone`, { bass: 0.5 })).status,
      404,
      'another zone does not exist for it',
    );
    t.equal(
      (await injectClient(d.daemon, viewer.apiKey).put(`/api/zones/${zones[0]!.id}/tone`, { bass: 0.5 })).status,
      403,
    );
    driver.simulateUnit([3], false);
    const refused = await api.put(`/api/zones/${zones[2]!.id}/tone`, { bass: 0.5 });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, 'does not answer');
  },
);

t.test('a tone change on the amplifier (a keypad) is adopted, stored and announced as zone.toneChanged', async (t) => {
  const { driver, zones, events, zone } = await setup(t);
  const id = zones[3]!.id;
  driver.simulateKeypad(4, { treble: 1, loudness: true });
  const changed = await waitFor(() => events.find((e) => e.type === 'zone.toneChanged'), undefined, {
    what: 'zone.toneChanged',
  });
  t.same(changed.payload, { zoneId: id, tone: { bass: 0, treble: 1, balance: 0, loudness: true } });
  t.same((await zone(id)).tone, { bass: 0, treble: 1, balance: 0, loudness: true });
});

t.test(
  'a page on the amplifier shows in amplifierStatus and as zone.statusChanged, and tone writes still land meanwhile',
  async (t) => {
    const { api, driver, zones, events, zone } = await setup(t);
    const id = zones[0]!.id;
    driver.simulateKeypad(1, { paging: true });
    const paged = await waitFor(() => events.find((e) => e.type === 'zone.statusChanged'), undefined, {
      what: 'zone.statusChanged',
    });
    t.same(paged.payload, { zoneId: id, amplifierStatus: { paging: true, doNotDisturb: false, party: false } });
    t.same((await zone(id)).amplifierStatus, { paging: true, doNotDisturb: false, party: false });
    t.equal((await api.put(`/api/zones/${id}/tone`, { bass: -1 })).status, 204, 'not refused while paging');
    await driver.settled();
    t.equal(driver.amplifierTone(1)?.bass, -1, 'the write reached the amplifier');
    driver.simulateKeypad(1, { paging: false });
    const ended = await waitFor(() => events.filter((e) => e.type === 'zone.statusChanged')[1], undefined, {
      what: 'the page to end',
    });
    t.same(ended.payload, { zoneId: id, amplifierStatus: { paging: false, doNotDisturb: false, party: false } });
  },
);

t.test('the tone survives a restart and is given to the amplifier at start', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const first = await startDaemon({ stateDir });
  const api = injectClient(first.daemon, first.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  t.equal(
    (await api.put(`/api/zones/${zones[4]!.id}/tone`, { bass: -1, treble: 1, balance: 0.5, loudness: true })).status,
    204,
  );
  await first.stop();

  const driver = new SimulatedDriver({ applyDelayMs: 1 });
  const second = await startDaemon({ stateDir, driver });
  t.teardown(() => second.stop());
  const again = injectClient(second.daemon, first.adminKey);
  t.same((await again.get(`/api/zones/${zones[4]!.id}`)).body.tone, {
    bass: -1,
    treble: 1,
    balance: 0.5,
    loudness: true,
  });
  t.match(driver.amplifierTone(5), { bass: -1, treble: 1, balance: 0.5, loudness: true }, 'the amplifier has it again');
});

t.test(
  'a tone changed on the amplifier is stored: after a restart the zone shows it and the amplifier is handed it',
  async (t) => {
    const stateDir = tempDir();
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const firstDriver = new SimulatedDriver({ applyDelayMs: 1 });
    const first = await startDaemon({ stateDir, driver: firstDriver });
    const api = injectClient(first.daemon, first.adminKey);
    const id = ((await api.get('/api/zones')).body as Array<{ id: string }>)[2]!.id;
    const events: StampedEvent[] = [];
    const unsubscribe = first.daemon.services.bus.subscribe('test', (event) => events.push(event));
    firstDriver.simulateKeypad(3, { bass: -1, loudness: true });
    await waitFor(() => events.some((e) => e.type === 'zone.toneChanged'), undefined, { what: 'zone.toneChanged' });
    unsubscribe();
    await first.stop();

    const driver = new SimulatedDriver({ applyDelayMs: 1 });
    const second = await startDaemon({ stateDir, driver });
    t.teardown(() => second.stop());
    t.same((await injectClient(second.daemon, first.adminKey).get(`/api/zones/${id}`)).body.tone, {
      bass: -1,
      treble: 0,
      balance: 0,
      loudness: true,
    });
    t.match(driver.amplifierTone(3), { bass: -1, loudness: true });
  },
);

t.test('a tone between two steps is kept as written when the amplifier reads back the same step', async (t) => {
  const { api, driver, zones, events, zone } = await setup(t);
  const id = zones[0]!.id;
  t.equal((await api.put(`/api/zones/${id}/tone`, { bass: 0.5 })).status, 204);
  await driver.settled();
  events.length = 0;
  driver.simulateKeypad(1, { volume: 0.5 }); // a zone event, carrying the tone the amplifier holds (bass at step 4 of 7)
  await waitFor(() => events.some((e) => e.type === 'zone.volumeChanged'), undefined, { what: 'the keypad volume' });
  t.equal((await zone(id)).tone.bass, 0.5);
  t.notOk(
    events.some((e) => e.type === 'zone.toneChanged'),
    'no tone change announced',
  );
});
