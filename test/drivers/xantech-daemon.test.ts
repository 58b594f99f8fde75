// The whole daemon on the Xantech driver, on an in-memory line: the cases every serial family shares
// (test/drivers/daemon-cases.ts), a keypad change the amplifier reports by itself reaching the zone, and its tone controls.
import t from 'tap';
import { XantechDriver } from '../../drivers/xantech/driver.js';
import { XantechEmulator } from '../../drivers/xantech/emulator.js';
import { daemonCases } from './daemon-cases.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './xantech-rig.js';

daemonCases(t, {
  name: 'xantech',
  steps: STEPS,
  channels: [1, 2, 3, 4, 5, 6, 7, 8],
  channel: 1,
  keypadVolume: 30,
  secondUnit: [9, 10, 11, 12, 13, 14, 15, 16],
  pollIntervalMs: 60_000, // with zone-activity reports on, the poll is a safety net
  emulator: (clock, { secondUnit }) => new XantechEmulator({ zones: secondUnit ? 16 : 8, clock }),
  driver: (wiring) => new XantechDriver({ ...wiring, zones: wiring.secondUnit ? 16 : 8 }),
  state: (emulator, channel) => emulator.zone(channel),
  // `!1VO25`: zone, attribute, value.
  writes: (emulator) =>
    emulator.commands.flatMap((command) => {
      const m = /^!(\d{1,2})([A-Z]{2})(\d{1,2})$/.exec(command);
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
  secondUnitFitted: (emulator, fitted) => (emulator.zones = fitted ? 16 : 8),
});

t.test(
  'on the xantech driver, a keypad change the amplifier reports becomes the stored state, without a poll',
  async (t) => {
    const { api, zones, emulator, events, until, driver } = await daemonOnMemory(t, {
      emulator: (clock) => new XantechEmulator({ clock }),
      driver: (wiring) => new XantechDriver(wiring),
    });
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/power`, { power: true })).status, 204);
    await until(driver.settled(), 'the zone on, and read again');
    const asked = emulator.commands.length;
    emulator.keypad(1, { volume: 30 });
    await until(
      () => events.some((e) => e.type === 'zone.volumeChanged' && Math.round(e.payload.volume * STEPS) === 30),
      'the keypad event',
    );
    t.equal(Math.round((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume * STEPS), 30);
    t.notOk(emulator.commands.slice(asked).includes('?1ZD'), 'the activity report carried it, not a poll');
  },
);

t.test(
  'on the xantech driver, a treble change at the keypad reaches the zone and the event stream; loudness is a 409 quoting why',
  async (t) => {
    const { api, zones, emulator, events, until } = await daemonOnMemory(t, {
      emulator: (clock) => new XantechEmulator({ clock }),
      driver: (wiring) => new XantechDriver(wiring),
    });
    const id = zones[0]!.id;
    const zone = (await api.get(`/api/zones/${id}`)).body;
    t.match(zone.toneControls, {
      balance: { available: true, down: 32, up: 31 },
      loudness: { available: false, reason: 'the Xantech protocol has no loudness command' },
    });
    t.match(zone.amplifierStatus, { paging: false });
    const refused = await api.put(`/api/zones/${id}/tone`, { loudness: false });
    t.equal(refused.status, 409);
    t.match(refused.body.detail, 'the Xantech protocol has no loudness command');
    t.equal((await api.put(`/api/zones/${id}/power`, { power: true })).status, 204);
    emulator.keypad(1, { treble: 14 });
    await until(() => events.some((e) => e.type === 'zone.toneChanged'), 'zone.toneChanged');
    t.same(events.find((e) => e.type === 'zone.toneChanged')?.payload, {
      zoneId: id,
      tone: { bass: 0, treble: 1, balance: 0, loudness: null },
    });
    t.equal((await api.get(`/api/zones/${id}`)).body.tone.treble, 1, 'stored');
  },
);
