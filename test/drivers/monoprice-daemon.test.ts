// The whole daemon on the Monoprice driver, on an in-memory line: the cases every serial family shares
// (test/drivers/daemon-cases.ts), with the Monoprice's own addresses and commands; then tone controls and amplifier
// status on a family that lacks some of them.
import t from 'tap';
import type { Clock } from '../../drivers/core/clock.js';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import { daemonCases } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import type { DriverWiring } from './memory-rig.js';
import { STEPS } from './monoprice-rig.js';

daemonCases(t, {
  name: 'monoprice',
  steps: STEPS,
  channels: [11, 12, 13, 14, 15, 16],
  channel: 11,
  keypadVolume: 25,
  secondUnit: [21, 22, 23, 24, 25, 26],
  pollIntervalMs: 5000,
  emulator: (clock, { secondUnit }) => new MonopriceEmulator({ units: secondUnit ? 2 : 1, clock }),
  driver: (wiring) => new MonopriceDriver(wiring),
  state: (emulator, channel) => emulator.state(channel),
  // `<11VO25`: zone, attribute, value.
  writes: (emulator) =>
    emulator.commands.flatMap((command) => {
      const m = /^<(\d\d)([A-Z]{2})(\d\d)$/.exec(command);
      return m
        ? [
            {
              channel: Number(m[1]),
              attribute: m[2] === 'VO' ? 'volume' : m[2] === 'PR' ? 'power' : 'other',
              value: Number(m[3]),
            },
          ]
        : [];
    }),
  secondUnitFitted: (emulator, fitted) => (emulator.units = fitted ? 2 : 1),
});

// Tone controls and amplifier status on a family that lacks some: Monoprice has no loudness and no party mode.
const monoprice = {
  emulator: (clock: Clock) => new MonopriceEmulator({ units: 1, clock }),
  driver: (wiring: DriverWiring) => new MonopriceDriver(wiring),
};

t.test('on the monoprice driver, a zone shows the tone it has and says it lacks loudness and party mode', async (t) => {
  const { zones, api } = await daemonOnMemory(t, monoprice);
  const zone = (await api.get(`/api/zones/${zones[0]!.id}`)).body;
  t.same(zone.tone, { bass: 0, treble: 0, balance: 0, loudness: null });
  t.same(zone.toneControls, {
    bass: { available: true, down: 7, up: 7 },
    treble: { available: true, down: 7, up: 7 },
    balance: { available: true, down: 10, up: 10 },
    loudness: { available: false, reason: 'the Monoprice protocol has no loudness command' },
  });
  t.same(zone.amplifierStatus, { paging: false, doNotDisturb: false, party: null });
});

t.test('on the monoprice driver, loudness is a 409 quoting why, and bass reaches the wire', async (t) => {
  const { zones, api, emulator, until } = await daemonOnMemory(t, monoprice);
  const id = zones[0]!.id;
  const refused = await api.put(`/api/zones/${id}/tone`, { bass: 1, loudness: true });
  t.equal(refused.status, 409);
  t.match(refused.body.detail, 'has no loudness control: the Monoprice protocol has no loudness command');
  t.equal((await api.get(`/api/zones/${id}`)).body.tone.bass, 0, 'nothing changed');
  // A Monoprice takes settings only for a zone that is on.
  t.equal((await api.put(`/api/zones/${id}/power`, { power: true })).status, 204);
  t.equal((await api.put(`/api/zones/${id}/tone`, { bass: 1 })).status, 204);
  await until(() => emulator.state(11).bass === 14, 'full boost (step 14) on the amplifier');
  t.equal(emulator.commands.filter((c) => c.startsWith('<11BS')).at(-1), '<11BS14', 'written as BS');
});

t.test(
  'on the monoprice driver, a bass change at the keypad reaches the event stream as zone.toneChanged',
  async (t) => {
    const { zones, emulator, events, until } = await daemonOnMemory(t, monoprice);
    emulator.keypad(11, { bass: 0 });
    await until(() => events.some((e) => e.type === 'zone.toneChanged'), 'zone.toneChanged');
    t.same(
      events.find((e) => e.type === 'zone.toneChanged')?.payload,
      { zoneId: zones[0]!.id, tone: { bass: -1, treble: 0, balance: 0, loudness: null } },
      'full cut',
    );
  },
);

t.test('on the monoprice driver, a page (PA) reaches the event stream as zone.statusChanged', async (t) => {
  const { zones, emulator, events, until } = await daemonOnMemory(t, monoprice);
  emulator.keypad(11, { pa: true });
  await until(() => events.some((e) => e.type === 'zone.statusChanged'), 'zone.statusChanged');
  t.match(
    events.find((e) => e.type === 'zone.statusChanged'),
    { payload: { zoneId: zones[0]!.id, amplifierStatus: { paging: true, doNotDisturb: false, party: null } } },
  );
});
