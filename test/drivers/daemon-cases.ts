// What the whole daemon does with each serial family, on the in-memory line: its zones, API changes on the wire
// (power first), the keypad's volume adopted when a zone is switched on there (the bug report: the stored volume was
// written back over it) or the turn-on volume applied instead, an amplifier unplugged and back, and a unit that stops
// answering seen as unavailable.
import type { Test } from 'tap';
import type { Clock } from '../../drivers/core/clock.js';
import type { AmplifierDriver } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { type ApiZone, daemonOnMemory } from './daemon-rig.js';
import type { DriverWiring } from './memory-rig.js';

/** A write as the emulator recorded it. */
export interface WireWrite {
  channel: number;
  attribute: 'power' | 'volume' | 'other';
  value: number;
}

/** What the cases need of an emulator besides its line: keypads (volume in device steps). */
interface KeypadEmulator extends EmulatorPort {
  keypad(channel: number, change: { power?: boolean; volume?: number }): void;
}

export interface DaemonCaseFamily<D extends AmplifierDriver, E extends KeypadEmulator> {
  name: string;
  steps: number;
  /** The zones of the smallest amplifier, as the daemon lists them. */
  channels: number[];
  /** The zone the cases use, on the master unit. */
  channel: number;
  /** The volume (device steps) the bug report's keypad switched a zone on at. */
  keypadVolume: number;
  /** A second unit's zones (Monoprice unit 2, RNET controller 2, Xantech's expansion). */
  secondUnit: number[];
  pollIntervalMs: number;
  emulator(clock: Clock, options: { secondUnit: boolean }): E;
  driver(wiring: DriverWiring & { secondUnit: boolean }): D;
  /** What the zone holds now (volume in device steps). */
  state(emulator: E, channel: number): { power: boolean; volume: number; source: number };
  /** The writes the emulator received, in order. */
  writes(emulator: E): WireWrite[];
  /** The second unit powered off (it stops answering) or on again. */
  secondUnitFitted(emulator: E, fitted: boolean): void;
}

export function daemonCases<D extends AmplifierDriver, E extends KeypadEmulator>(
  t: Test,
  family: DaemonCaseFamily<D, E>,
): void {
  const { name, channel, steps, keypadVolume } = family;
  const setup = (t: Test, secondUnit = false, prepare?: (emulator: E) => void) =>
    daemonOnMemory(
      t,
      {
        emulator: (clock) => family.emulator(clock, { secondUnit }),
        driver: (wiring) => family.driver({ ...wiring, secondUnit }),
      },
      prepare,
    );
  const zoneOf = (zones: ApiZone[]) => zones.find((z) => z.output.channel === channel)!;
  const state = (emulator: E) => {
    const { power, volume, source } = family.state(emulator, channel);
    return { power, volume, source };
  };

  t.test(`on the ${name} driver, zones are the amplifier's outputs and health names the driver`, async (t) => {
    const { api, zones } = await setup(t);
    t.same(
      zones.map((z) => z.output.channel),
      family.channels,
    );
    t.match((await api.get('/api/health')).body, { status: 'ok', drivers: [{ name, online: true }] });
  });

  t.test(`on the ${name} driver, attach and volume reach the wire, power first`, async (t) => {
    const { api, zones, emulator, until, driver } = await setup(t);
    const player = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body;
    t.equal((await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [zoneOf(zones).id] })).status, 204);
    t.equal((await api.put(`/api/players/${player.id}/volume`, { volume: 0.5 })).status, 204);
    await until(driver.settled(), 'the writes on the wire');
    t.equal(family.writes(emulator).find((w) => w.channel === channel)?.attribute, 'power', 'power first');
    t.same(state(emulator), { power: true, source: 3, volume: volumeToStep(0.5, steps) });
  });

  t.test(
    `on the ${name} driver, unplugged: the API answers and health says offline; plugged back: the change made meanwhile is written`,
    async (t) => {
      const { api, zones, emulator, serial, driver, events, until } = await setup(t);
      const zone = zoneOf(zones);
      t.equal((await api.put(`/api/zones/${zone.id}/power`, { power: true })).status, 204);
      await until(driver.settled(), 'the power-on written');
      serial.unplug();
      await until(() => events.some((e) => e.type === 'hardware.status' && !e.payload.online), 'hardware offline');
      t.match((await api.get('/api/health')).body, { status: 'degraded', drivers: [{ name, online: false }] });
      t.equal(
        (await api.put(`/api/zones/${zone.id}/volume`, { volume: 0.2 })).status,
        204,
        'answered without the line',
      );
      serial.replug();
      await until(
        () => family.state(emulator, channel).volume === volumeToStep(0.2, steps),
        'the change made meanwhile on the amplifier',
      );
      t.match((await api.get('/api/health')).body, { status: 'ok' });
    },
  );

  t.test(
    `on the ${name} driver, a zone switched on at its keypad keeps the keypad's volume: stored, announced, never overwritten`,
    async (t) => {
      // The zone is off, holding the volume the daemon stored (0.3): nothing differs at start.
      const stored = volumeToStep(0.3, steps);
      const rig = await setup(t, false, (emulator) => emulator.keypad(channel, { power: false, volume: stored }));
      const zone = zoneOf(rig.zones);
      t.match(zone, { power: false, volume: 0.3 }, 'the daemon starts with its stored volume');
      const mark = family.writes(rig.emulator).length;
      rig.emulator.keypad(channel, { power: true, volume: keypadVolume });
      const adopted = stepToVolume(keypadVolume, steps);
      await rig.until(
        () =>
          rig.events.some(
            (e) => e.type === 'zone.volumeChanged' && e.payload.zoneId === zone.id && e.payload.volume === adopted,
          ),
        "zone.volumeChanged with the keypad's volume",
      );
      await rig.time.advance(3 * family.pollIntervalMs); // more polls: nothing is written back later either
      t.match((await rig.api.get(`/api/zones/${zone.id}`)).body, { power: true, volume: adopted }, 'stored');
      t.ok(
        rig.events.some((e) => e.type === 'zone.powerChanged' && e.payload.zoneId === zone.id && e.payload.power),
        'the power-on announced',
      );
      t.same(
        family
          .writes(rig.emulator)
          .slice(mark)
          .filter((w) => w.channel === channel),
        [],
        'nothing was written to the zone',
      );
      t.match(state(rig.emulator), { power: true, volume: keypadVolume }, "it plays on at the keypad's volume");
    },
  );

  t.test(`on the ${name} driver, a zone switched on at its keypad starts at its turn-on volume`, async (t) => {
    const rig = await setup(t);
    const zone = zoneOf(rig.zones);
    t.equal((await rig.api.put(`/api/zones/${zone.id}`, { turnOnVolume: 0.15 })).status, 200);
    const turnOn = volumeToStep(0.15, steps);
    rig.emulator.keypad(channel, { power: true, volume: keypadVolume });
    await rig.until(() => family.state(rig.emulator, channel).volume === turnOn, 'the turn-on volume on the amplifier');
    await rig.until(rig.driver.settled(), 'the driver to settle');
    t.match((await rig.api.get(`/api/zones/${zone.id}`)).body, { power: true, volume: 0.15 }, 'stored');
    const volumes = family.writes(rig.emulator).filter((w) => w.channel === channel && w.attribute === 'volume');
    t.same(
      volumes.map((w) => w.value),
      [turnOn],
      'one volume written: the turn-on volume',
    );
    const reported = rig.events.filter((e) => e.type === 'zone.volumeChanged' && e.payload.zoneId === zone.id);
    t.same(
      reported.map((e) => e.type === 'zone.volumeChanged' && e.payload.volume),
      [0.15],
      'the turn-on volume is what was announced',
    );
  });

  t.test(
    `on the ${name} driver, the zones of a unit that stops answering are unavailable (409, nothing written), and available again when it answers`,
    async (t) => {
      const rig = await setup(t, true);
      const amplifier = rig.d.daemon.services.amplifiers.list[0]!.driver;
      const unit = family.secondUnit;
      await rig.until(
        () => unit.every((c) => amplifier.describe().zones.some((z) => z.channel === c)),
        'the second unit found',
      );
      const zones = (await rig.api.get('/api/zones')).body as Array<
        ApiZone & { available: boolean; unavailableReason: string | null }
      >;
      const zone = zones.find((z) => z.output.channel === unit[0])!;
      t.match(zone, { available: true, unavailableReason: null }, 'its zones are available');
      family.secondUnitFitted(rig.emulator, false);
      await rig.until(() => unit.every((c) => !amplifier.availability(c).available), 'its zones unavailable');
      t.match(amplifier.availability(unit[0]!).reason, /does not answer/, 'the driver says why');
      t.match(
        (await rig.api.get(`/api/zones/${zone.id}`)).body,
        { available: false, unavailableReason: /does not answer/ },
        'and so does the zone',
      );
      t.ok(
        rig.events.some(
          (e) => e.type === 'zone.availabilityChanged' && e.payload.zoneId === zone.id && !e.payload.available,
        ),
        'announced',
      );
      const mark = family.writes(rig.emulator).length;
      const refused = await rig.api.put(`/api/zones/${zone.id}/power`, { power: true });
      t.equal(refused.status, 409, 'a write to it is refused');
      t.match(refused.body.detail, /does not answer/, 'naming the unit');
      await rig.until(rig.driver.settled(), 'the driver to settle');
      t.same(family.writes(rig.emulator).slice(mark), [], 'nothing was written');
      t.ok(amplifier.availability(channel).available, "the master's zones stay available");
      family.secondUnitFitted(rig.emulator, true);
      await rig.until(() => unit.every((c) => amplifier.availability(c).available), 'its zones available again');
      t.match((await rig.api.get(`/api/zones/${zone.id}`)).body, { available: true, unavailableReason: null });
      t.equal((await rig.api.put(`/api/zones/${zone.id}/power`, { power: true })).status, 204, 'and writable');
      await rig.until(() => family.state(rig.emulator, unit[0]!).power, 'the power-on on the amplifier');
    },
  );
}
