// The behaviour every amplifier driver owes the daemon, the ownership rule first; each driver's test file runs it
// against its own rig, the serial families on an in-memory line with a hand-driven clock.
import type { Test } from 'tap';
import type {
  DriverEvent,
  SoundDescription,
  StepControl,
  ToneControl,
  ZoneFlag,
  ZoneState,
  ZoneTone,
} from '../../drivers/driver.js';
import { stepToTone, stepToVolume, TONE_CONTROLS, volumeToStep, ZONE_FLAGS } from '../../drivers/driver.js';
import type { ConformanceHarness, DriverRig } from './conformance-rig.js';
import { isAvailability, isStatus, isZoneEvent, nextEvent, zoneEvents } from './events.js';

export const CONFORMANCE_CASES = [
  'describes its zones, inputs and volume steps',
  'starting adopts what the amplifier holds and reports each zone that differs from what the daemon remembered',
  'setZone returns before the hardware changes',
  'setZone power, source, volume and mute reach the hardware',
  'a change to a zone that is off waits for its power-on, and is written then',
  'a volume burst ends at the last value',
  'a volume burst reaches the wire as fewer writes than changes',
  'a keypad change becomes exactly one zone event with the new state',
  'changes the driver makes are not reported back as zone events',
  'a keypad volume change while muted reports the new state',
  'a keypad power-on with a new volume is adopted, reported once, and never overwritten',
  'a keypad change supersedes a write made before it that had not reached the amplifier',
  'a write made after the read that shows a keypad change was sent wins over the keypad',
  'an intent made while the amplifier was unreachable is written on its return, and a keypad change made meanwhile is adopted',
  'a second unit fitted is described after the first, its zones driven and their keypad changes reported',
  'a unit that stops answering makes its zones unavailable, once each, and writes to them are not sent',
  'a unit that answers again makes its zones available again, once each',
  'after a restart with a unit gone, its remembered zones are described and unavailable',
  'line noise and garbage do not stop the driver',
  'stop leaves no timers behind',
  'stop while the amplifier is unreachable at start leaves no timers behind',
  'describes its tone controls and status flags, and each one it lacks with the reason',
  'starting reports a zone whose tone differs from the tone the daemon remembered, and writes none of it',
  'setTone bass reaches the amplifier and reads back',
  'setTone treble reaches the amplifier and reads back',
  'setTone balance reaches the amplifier and reads back',
  'setTone loudness reaches the amplifier and reads back',
  'a keypad tone change is adopted, reported as one zone event, and supersedes an older tone intent',
  'a tone value off the scale is refused with a RangeError naming the range, and nothing is written',
  'a tone control the family lacks is refused with the reason',
  'paging is reported when the amplifier shows it',
  'do-not-disturb is reported when the amplifier shows it',
  'party mode is reported when the amplifier shows it',
] as const;
export type ConformanceCase = (typeof CONFORMANCE_CASES)[number];

const OFF: ZoneState = { power: false, muted: false, volume: 0.3, source: 1 };
const ON: ZoneState = { power: true, muted: false, volume: 0.3, source: 1 };

const toneCase = (control: ToneControl): ConformanceCase => `setTone ${control} reaches the amplifier and reads back`;
const FLAG_CASES: Record<ZoneFlag, ConformanceCase> = {
  paging: 'paging is reported when the amplifier shows it',
  doNotDisturb: 'do-not-disturb is reported when the amplifier shows it',
  party: 'party mode is reported when the amplifier shows it',
};

/** Every value of a control on the shared scale that lands on a native step, full cut (or left) to full boost (right). */
function nativeValues(sound: SoundDescription, control: ToneControl): Array<number | boolean> {
  if (control === 'loudness') return [true, false, true];
  const scale = sound.controls[control as StepControl];
  if ('absent' in scale) return [];
  return Array.from({ length: scale.down + scale.up + 1 }, (_, step) => stepToTone(step, scale));
}

function quantise(state: ZoneState, steps: number): ZoneState {
  return { ...state, volume: stepToVolume(volumeToStep(state.volume, steps), steps) };
}

export function driverConformance(t: Test, harness: ConformanceHarness): void {
  const skip = harness.skip ?? {};
  for (const name of Object.keys(skip)) {
    if (!(CONFORMANCE_CASES as readonly string[]).includes(name)) throw new Error(`skip list names no case "${name}"`);
  }
  const run = (name: ConformanceCase, body: (t: Test) => Promise<void>): void => {
    const reason = skip[name];
    if (reason) t.test(name, { skip: reason }, () => undefined);
    else t.test(name, body);
  };
  const channels = (rig: DriverRig): number[] => rig.driver.describe().zones.map((z) => z.channel);
  const steps = (rig: DriverRig): number => rig.driver.describe().volumeSteps;
  const q = (rig: DriverRig, state: ZoneState): ZoneState => quantise(state, steps(rig));
  /** Sets the hardware as given, starts the driver remembering the same, and runs until it is online and settled. */
  const startWith = async (rig: DriverRig, zones: Array<[number, ZoneState]>, remembered = zones): Promise<void> => {
    for (const [channel, state] of zones) rig.keypad(channel, state);
    const online = nextEvent(rig.driver, isStatus(true));
    await rig.driver.start(new Map(remembered.map(([channel, state]) => [channel, q(rig, state)])));
    await rig.until(online, 'the driver online');
    await rig.until(rig.driver.settled(), 'the driver to settle');
  };
  const recorded = (rig: DriverRig): DriverEvent[] => {
    const events: DriverEvent[] = [];
    rig.driver.onEvent((e) => events.push(e));
    return events;
  };
  const settle = (rig: DriverRig) => rig.until(rig.driver.settled(), 'the driver to settle');
  const sound = (rig: DriverRig): SoundDescription => {
    const described = rig.driver.describe().sound;
    if (!described) throw new Error('the driver describes no tone controls');
    return described;
  };
  const setTone = (rig: DriverRig, channel: number, change: ZoneTone): void => {
    if (!rig.driver.setTone) throw new Error('the driver has no setTone');
    rig.driver.setTone(channel, change);
  };

  run('describes its zones, inputs and volume steps', async (t) => {
    const { driver } = await harness.create(t);
    const description = driver.describe();
    t.equal(description.zones.length, harness.expect.zones, 'zone count');
    t.equal(
      new Set(description.zones.map((z) => z.channel)).size,
      description.zones.length,
      'zone channels are unique',
    );
    t.equal(description.inputs.length, harness.expect.inputs, 'input count');
    t.same(
      description.inputs.map((i) => i.channel),
      description.inputs.map((_, i) => i + 1),
      'inputs are 1..S',
    );
    t.equal(description.volumeSteps, harness.expect.volumeSteps, 'volume steps');
  });

  run(
    'starting adopts what the amplifier holds and reports each zone that differs from what the daemon remembered',
    async (t) => {
      const rig = await harness.create(t);
      const [a, b] = channels(rig) as [number, number];
      const held = q(rig, { power: true, muted: false, volume: 0.5, source: 2 });
      const same = q(rig, { power: true, muted: true, volume: 0.25, source: 3 });
      const events = recorded(rig);
      await startWith(
        rig,
        [
          [a, held],
          [b, same],
        ],
        [
          [a, OFF],
          [b, same],
        ],
      );
      t.same(
        zoneEvents(events).map(({ channel, state }) => ({ channel, state })),
        [{ channel: a, state: held }],
        'one event, for the zone that differs, with what it holds',
      );
      t.same(rig.hardware(a), held, 'nothing the daemon remembered was written');
      t.same(rig.hardware(b), same, 'the zone that matched is as it was');
      t.same(rig.driver.hardwareState(a), held, 'hardwareState() agrees');
      t.ok(rig.driver.online, 'driver reports online');
    },
  );

  run('setZone returns before the hardware changes', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, []);
    const before = rig.hardware(a);
    t.equal(rig.driver.setZone(a, { power: !before.power }), undefined);
    t.same(rig.hardware(a), before, 'the hardware has not changed yet');
    await settle(rig);
    t.equal(rig.hardware(a).power, !before.power, 'and then it does');
  });

  run('setZone power, source, volume and mute reach the hardware', async (t) => {
    const rig = await harness.create(t);
    const [, b] = channels(rig) as [number, number];
    await startWith(rig, []);
    rig.driver.setZone(b, { power: true });
    rig.driver.setZone(b, { source: 4 });
    rig.driver.setZone(b, { volume: 0.5 });
    rig.driver.setZone(b, { muted: true });
    await settle(rig);
    const expected = q(rig, { power: true, muted: true, volume: 0.5, source: 4 });
    t.same(rig.hardware(b), expected, 'hardware');
    t.same(rig.driver.hardwareState(b), expected, 'hardwareState() agrees');
  });

  run('a change to a zone that is off waits for its power-on, and is written then', async (t) => {
    const rig = await harness.create(t);
    const [, b] = channels(rig) as [number, number];
    await startWith(rig, [[b, OFF]]);
    const writes = rig.volumeWrites?.(b);
    rig.driver.setZone(b, { volume: 0.5 });
    await settle(rig);
    await rig.observed();
    if (writes !== undefined) t.equal(rig.volumeWrites!(b), writes, 'nothing written to the zone while it is off');
    rig.driver.setZone(b, { power: true });
    await settle(rig);
    t.same(
      rig.hardware(b),
      q(rig, { ...OFF, power: true, volume: 0.5 }),
      'on, at the volume asked for while it was off',
    );
  });

  run('a volume burst ends at the last value', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.1, source: 1 }]]);
    for (let i = 1; i <= 40; i++) rig.driver.setZone(a, { volume: i / 50 });
    await settle(rig);
    t.equal(rig.hardware(a).volume, q(rig, { ...OFF, volume: 40 / 50 }).volume);
  });

  run('a volume burst reaches the wire as fewer writes than changes', async (t) => {
    const rig = await harness.create(t, { paced: true });
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.1, source: 1 }]]);
    const volumeWrites = rig.volumeWrites!.bind(rig);
    const before = volumeWrites(a);
    const changes = 100;
    // A slider dragged for a second at the line's real byte rate: the driver writes while the drag goes on.
    for (let i = 1; i <= changes; i++) {
      rig.driver.setZone(a, { volume: i / changes });
      await rig.advance(10);
    }
    await settle(rig);
    const writes = volumeWrites(a) - before;
    t.ok(writes >= 2 && writes < changes / 2, `${writes} volume writes for ${changes} changes`);
    t.equal(rig.hardware(a).volume, 1, 'the last value is what the amplifier holds');
  });

  run('a keypad change becomes exactly one zone event with the new state', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.25, source: 1 }]]);
    const events = recorded(rig);
    const expected = q(rig, { power: true, muted: false, volume: 0.75, source: 3 });
    const seen = nextEvent(rig.driver, isZoneEvent(a));
    rig.keypad(a, { volume: 0.75, source: 3 });
    t.same((await rig.until(seen, `a zone event for ${a}`)).state, expected, 'the event carries the new state');
    await rig.observed();
    await rig.observed();
    t.equal(zoneEvents(events).length, 1, 'and no second event after further polls');
    t.same(rig.driver.hardwareState(a), expected, 'hardwareState() agrees');
  });

  run('changes the driver makes are not reported back as zone events', async (t) => {
    const rig = await harness.create(t);
    const [a, b] = channels(rig) as [number, number];
    await startWith(rig, []);
    const events = recorded(rig);
    rig.driver.setZone(a, { power: true, volume: 0.6, source: 5 });
    rig.driver.setZone(b, { power: true, muted: true });
    await settle(rig);
    await rig.observed();
    await rig.observed();
    t.same(zoneEvents(events), [], 'no zone events');
  });

  run('a keypad volume change while muted reports the new state', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: true, volume: 0.25, source: 1 }]]);
    const volume = q(rig, { ...OFF, volume: 0.75 }).volume;
    const seen = nextEvent(
      rig.driver,
      (e): e is Extract<DriverEvent, { type: 'zone' }> => isZoneEvent(a)(e) && e.state.volume === volume,
    );
    rig.keypad(a, { volume: 0.75 });
    const event = await rig.until(seen, `a zone event for ${a} with the new volume`);
    // Whether the keypad's change also un-muted is the amplifier's business; the event must say what it now holds.
    t.same(event.state, rig.hardware(a), 'the event carries what the hardware holds');
    await rig.observed();
    await rig.observed();
    t.same(rig.driver.hardwareState(a), rig.hardware(a), 'hardwareState() agrees after further polls');
  });

  run('a keypad power-on with a new volume is adopted, reported once, and never overwritten', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, OFF]]);
    const events = recorded(rig);
    const writes = rig.volumeWrites?.(a);
    const on = q(rig, { power: true, muted: false, volume: 0.65, source: 1 });
    const seen = nextEvent(rig.driver, isZoneEvent(a));
    rig.keypad(a, { power: true, volume: 0.65 });
    t.same((await rig.until(seen, `the keypad's power-on of ${a}`)).state, on, "reported with the keypad's volume");
    await settle(rig);
    await rig.observed();
    await rig.observed();
    t.same(rig.hardware(a), on, "the zone plays at the keypad's volume");
    t.equal(zoneEvents(events).length, 1, 'one event');
    if (writes !== undefined) t.equal(rig.volumeWrites!(a), writes, 'no volume was written');
  });

  run('a keypad change supersedes a write made before it that had not reached the amplifier', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, OFF]]);
    const events = recorded(rig);
    rig.driver.setZone(a, { volume: 0.5 }); // the zone is off: the write waits for power-on
    const on = q(rig, { power: true, muted: false, volume: 0.7, source: 1 });
    const seen = nextEvent(rig.driver, isZoneEvent(a));
    rig.keypad(a, { power: true, volume: 0.7 });
    t.same((await rig.until(seen, `the keypad's change of ${a}`)).state, on, "the keypad's change is reported");
    await settle(rig);
    await rig.observed();
    t.same(rig.hardware(a), on, 'the older write was dropped, not written over the keypad');
    t.equal(zoneEvents(events).length, 1, 'one event');
  });

  run('a write made after the read that shows a keypad change was sent wins over the keypad', async (t) => {
    // At the line's real byte rate, the read's answer takes a while to arrive: the write is made while it does.
    const rig = await harness.create(t, { paced: true });
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.3, source: 1 }]]);
    const events = recorded(rig);
    let mark = -1;
    rig.keypadSeenThen(a, { volume: 0.7 }, () => {
      mark = events.length;
      rig.driver.setZone(a, { volume: 0.5 });
    });
    const wanted = q(rig, { ...OFF, volume: 0.5 }).volume;
    await rig.until(() => mark >= 0 && rig.hardware(a).volume === wanted, 'the newer write on the amplifier');
    await settle(rig);
    await rig.observed();
    t.equal(rig.hardware(a).volume, wanted, 'the amplifier holds the newer write');
    t.equal(rig.driver.hardwareState(a)?.volume, wanted, 'hardwareState() agrees');
    const keypadVolume = q(rig, { ...OFF, volume: 0.7 }).volume;
    t.same(
      zoneEvents(events.slice(mark), a).filter((e) => e.state.volume === keypadVolume),
      [],
      "the keypad's value was not reported after the write",
    );
  });

  run(
    'an intent made while the amplifier was unreachable is written on its return, and a keypad change made meanwhile is adopted',
    async (t) => {
      const rig = await harness.create(t);
      const [a, b, c] = channels(rig) as [number, number, number];
      const playing = { power: true, muted: false, volume: 0.25, source: 1 };
      await startWith(rig, [
        [a, { ...playing, volume: 0.5, source: 2 }],
        [b, OFF],
        [c, playing],
      ]);
      const events = recorded(rig);
      const offline = nextEvent(rig.driver, isStatus(false));
      rig.unplug();
      await rig.until(offline, 'the driver offline');
      t.equal(rig.driver.online, false, 'offline while the hardware is gone');
      rig.driver.setZone(a, { volume: 0.75 });
      rig.driver.setZone(b, { power: true, source: 3, volume: 0.25 });
      rig.keypad(c, { volume: 0.6 });
      const back = nextEvent(rig.driver, isStatus(true));
      rig.replug();
      await rig.until(back, 'the driver online again');
      await settle(rig);
      t.same(
        rig.hardware(a),
        q(rig, { ...playing, volume: 0.75, source: 2 }),
        'the change to a playing zone was written',
      );
      t.same(
        rig.hardware(b),
        q(rig, { ...playing, source: 3 }),
        'the zone switched on meanwhile was, with its settings',
      );
      t.same(rig.hardware(c), q(rig, { ...playing, volume: 0.6 }), "the keypad's change was kept");
      t.same(
        zoneEvents(events).map(({ channel, state }) => ({ channel, state })),
        [{ channel: c, state: q(rig, { ...playing, volume: 0.6 }) }],
        'and reported, alone',
      );
    },
  );

  run(
    'a second unit fitted is described after the first, its zones driven and their keypad changes reported',
    async (t) => {
      const rig = await harness.create(t, { secondUnit: 'fitted' });
      const { channels: unit } = rig.secondUnit;
      const [first, last] = [unit[0]!, unit.at(-1)!];
      await startWith(rig, []);
      await rig.until(() => unit.every((channel) => channels(rig).includes(channel)), 'the second unit described');
      t.same(channels(rig).slice(-unit.length), unit, "its zones are described after the first unit's, in order");
      t.equal(new Set(channels(rig)).size, channels(rig).length, 'each zone once');
      rig.driver.setZone(first, { power: true, source: 5 });
      await settle(rig);
      const { power, source } = rig.hardware(first);
      t.same({ power, source }, { power: true, source: 5 }, `a write reaches zone ${first}`);
      const events = recorded(rig);
      const seen = nextEvent(rig.driver, isZoneEvent(last));
      const pressed = q(rig, { power: true, muted: false, volume: 0.2, source: 3 });
      rig.keypad(last, pressed);
      t.same(
        (await rig.until(seen, `a zone event for ${last}`)).state,
        pressed,
        `a keypad change on zone ${last} is reported with its state`,
      );
      await rig.observed();
      t.equal(zoneEvents(events).length, 1, 'once');
    },
  );

  run(
    'a unit that stops answering makes its zones unavailable, once each, and writes to them are not sent',
    async (t) => {
      const rig = await harness.create(t, { secondUnit: 'fitted' });
      const { channels: unit } = rig.secondUnit;
      await startWith(rig, []);
      await rig.until(() => unit.every((channel) => channels(rig).includes(channel)), 'the second unit described');
      t.ok(
        unit.every((channel) => rig.driver.availability(channel).available),
        'its zones are available',
      );
      const events = recorded(rig);
      rig.secondUnit.remove();
      await rig.until(
        () => unit.every((channel) => events.some(isAvailability(channel, false))),
        'an availability event for each of its zones',
      );
      const availability = rig.driver.availability(unit[0]!);
      t.equal(availability.available, false, 'unavailable');
      t.match(availability.reason, /does not answer/, `with the reason: ${availability.reason}`);
      rig.driver.setZone(unit[0]!, { power: true });
      await settle(rig);
      await rig.observed();
      t.equal(rig.hardware(unit[0]!).power, false, 'the write was not sent');
      t.equal(events.filter((e) => e.type === 'availability').length, unit.length, 'one event per zone');
      t.ok(
        channels(rig).every((channel) => unit.includes(channel) || rig.driver.availability(channel).available),
        'the other zones stay available',
      );
    },
  );

  run('a unit that answers again makes its zones available again, once each', async (t) => {
    const rig = await harness.create(t, { secondUnit: 'fitted' });
    const { channels: unit } = rig.secondUnit;
    await startWith(rig, []);
    await rig.until(() => unit.every((channel) => channels(rig).includes(channel)), 'the second unit described');
    rig.secondUnit.remove();
    await rig.until(() => !rig.driver.availability(unit[0]!).available, 'the unit unavailable');
    const events = recorded(rig);
    rig.secondUnit.restore();
    await rig.until(
      () => unit.every((channel) => events.some(isAvailability(channel, true))),
      'an availability event for each of its zones',
    );
    t.ok(
      unit.every((channel) => rig.driver.availability(channel).available),
      'available again',
    );
    rig.driver.setZone(unit[0]!, { power: true });
    await settle(rig);
    t.equal(rig.hardware(unit[0]!).power, true, 'a write reaches it again');
    t.equal(events.filter((e) => e.type === 'availability').length, unit.length, 'one event per zone');
  });

  run('after a restart with a unit gone, its remembered zones are described and unavailable', async (t) => {
    const rig = await harness.create(t, { secondUnit: 'absent' });
    const { channels: unit } = rig.secondUnit;
    const [master] = channels(rig) as [number];
    await startWith(
      rig,
      [[master, OFF]],
      [[master, OFF], ...unit.map((channel): [number, ZoneState] => [channel, OFF])],
    );
    await rig.observed();
    t.ok(
      unit.every((channel) => channels(rig).includes(channel)),
      'the remembered zones are described',
    );
    for (const channel of unit) {
      const availability = rig.driver.availability(channel);
      t.equal(availability.available, false, `zone ${channel} unavailable`);
      t.match(availability.reason, /\S/, `with a reason: ${availability.reason}`);
    }
    t.ok(rig.driver.availability(master).available, 'the zones that answer are available');
  });

  run('line noise and garbage do not stop the driver', async (t) => {
    const rig = await harness.create(t);
    const [a, b] = channels(rig) as [number, number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.3, source: 1 }]]);
    const noisy = rig.noisy!.bind(rig);
    noisy(true);
    rig.driver.setZone(b, { power: true });
    await rig.observed();
    await rig.observed();
    noisy(false);
    // A garbled digit can still make a valid-looking status: clean polls replace what was learned from one.
    await rig.observed();
    await rig.observed();
    rig.driver.setZone(a, { volume: 0.5, source: 4 });
    await settle(rig);
    t.ok(rig.driver.online, 'still online');
    t.same(rig.hardware(a), q(rig, { power: true, muted: false, volume: 0.5, source: 4 }), 'and driving the amplifier');
  });

  run('stop leaves no timers behind', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, { power: true, muted: false, volume: 0.3, source: 2 }]]);
    rig.driver.setZone(a, { volume: 0.4 }); // leave work in flight to be cancelled
    await rig.advance(1);
    await rig.driver.stop();
    t.equal(rig.timers(), 0, 'no timer of the driver is left');
    t.equal(rig.driver.online, false, 'reports offline once stopped');
  });

  run('stop while the amplifier is unreachable at start leaves no timers behind', async (t) => {
    const rig = await harness.create(t);
    rig.unplug();
    const offline = nextEvent(rig.driver, isStatus(false));
    await rig.driver.start(new Map());
    await rig.until(offline, 'the driver offline');
    t.ok(rig.timers() > 0, 'it is waiting to try again');
    await rig.driver.stop();
    t.equal(rig.timers(), 0, 'no timer of the driver is left');
  });

  run('describes its tone controls and status flags, and each one it lacks with the reason', async (t) => {
    const { driver } = await harness.create(t);
    const described = driver.describe().sound;
    t.ok(described, 'the description says which tone controls and flags there are');
    if (!described) return;
    for (const control of TONE_CONTROLS) {
      const has = described.controls[control];
      if (typeof has === 'object' && 'absent' in has) {
        t.match(has.absent, /\S/, `${control}: absent, with the reason "${has.absent}"`);
        t.ok(skip[toneCase(control)], `${control}: its case is in the skip list, not dropped silently`);
      } else {
        if (control !== 'loudness')
          t.ok(has !== true && has.down > 0 && has.up > 0, `${control}: steps on both sides of flat`);
        t.notOk(skip[toneCase(control)], `${control}: present, so its case runs`);
      }
    }
    for (const flag of ZONE_FLAGS) {
      const has = described.flags[flag];
      if (has === true) t.notOk(skip[FLAG_CASES[flag]], `${flag}: reported, so its case runs`);
      else {
        t.match(has.absent, /\S/, `${flag}: absent, with the reason "${has.absent}"`);
        t.ok(skip[FLAG_CASES[flag]], `${flag}: its case is in the skip list, not dropped silently`);
      }
    }
  });

  run(
    'starting reports a zone whose tone differs from the tone the daemon remembered, and writes none of it',
    async (t) => {
      const rig = await harness.create(t);
      const [a, b] = channels(rig) as [number, number];
      const bass = sound(rig).controls.bass;
      if ('absent' in bass) throw new Error('every family has bass');
      const held = stepToTone(bass.down + 3, bass);
      rig.keypad(a, { ...ON, bass: held });
      rig.keypad(b, { ...ON, bass: 0 });
      const events = recorded(rig);
      const online = nextEvent(rig.driver, isStatus(true));
      await rig.driver.start(
        new Map([
          [a, { ...q(rig, ON), tone: { bass: 0 } }],
          [b, { ...q(rig, ON), tone: { bass: 0 } }],
        ]),
      );
      await rig.until(online, 'the driver online');
      await settle(rig);
      await rig.observed();
      const reported = zoneEvents(events);
      t.same(
        reported.map((e) => [e.channel, e.tone?.bass]),
        [[a, held]],
        'one event, for the zone whose bass differs, with what it holds',
      );
      t.equal(rig.hardwareTone(a).bass, held, 'the remembered bass was not written');
      t.equal(rig.driver.hardwareTone?.(a)?.bass, held, 'hardwareTone() agrees');
    },
  );

  for (const control of TONE_CONTROLS) {
    run(toneCase(control), async (t) => {
      const rig = await harness.create(t);
      const [a] = channels(rig) as [number];
      await startWith(rig, [[a, ON]]);
      const events = recorded(rig);
      const values = nativeValues(sound(rig), control);
      const missed: string[] = [];
      for (const value of values) {
        setTone(rig, a, { [control]: value });
        await settle(rig);
        if (rig.hardwareTone(a)[control] !== value)
          missed.push(`${String(value)} became ${String(rig.hardwareTone(a)[control])}`);
        if (rig.driver.hardwareTone?.(a)?.[control] !== value)
          missed.push(`${String(value)} read back as ${String(rig.driver.hardwareTone?.(a)?.[control])}`);
      }
      t.ok(values.length >= 2, `${values.length} values tried`);
      t.same(missed, [], 'every native step reached the amplifier and reads back as the value that wrote it');
      await rig.observed();
      await rig.observed();
      t.equal(rig.driver.hardwareTone?.(a)?.[control], values.at(-1), 'still so after further polls');
      t.same(zoneEvents(events), [], 'the writes were not reported back as zone events');
      t.same(rig.hardware(a), q(rig, ON), 'power, mute, volume and source are as they were');
    });
  }

  run('a keypad tone change is adopted, reported as one zone event, and supersedes an older tone intent', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, OFF]]);
    const bass = sound(rig).controls.bass;
    if ('absent' in bass) throw new Error('every family has bass');
    const keypadBass = stepToTone(bass.down - 2, bass);
    const events = recorded(rig);
    setTone(rig, a, { bass: 0.5 }); // the zone is off: the write waits for power-on
    const seen = nextEvent(rig.driver, isZoneEvent(a));
    rig.keypad(a, { power: true, bass: keypadBass });
    const event = await rig.until(seen, `the keypad's change of ${a}`);
    t.equal(event.tone?.bass, keypadBass, "the event carries the keypad's bass");
    t.same(event.state, q(rig, { ...OFF, power: true }), "and the zone's state");
    await settle(rig);
    await rig.observed();
    await rig.observed();
    t.equal(rig.hardwareTone(a).bass, keypadBass, 'the older intent was dropped, not written over the keypad');
    t.equal(rig.driver.hardwareTone?.(a)?.bass, keypadBass, 'hardwareTone() agrees');
    t.equal(zoneEvents(events).length, 1, 'one event');
    const later = nextEvent(rig.driver, isZoneEvent(a));
    rig.keypad(a, { bass: 0 });
    t.equal(
      (await rig.until(later, 'a keypad tone change alone')).tone?.bass,
      0,
      'a tone change alone is a zone event too',
    );
  });

  run('a tone value off the scale is refused with a RangeError naming the range, and nothing is written', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, ON]]);
    const before = rig.hardwareTone(a);
    const events = recorded(rig);
    t.throws(
      () => setTone(rig, a, { bass: 1.5 }),
      { name: 'RangeError', message: /"bass" must be a number from -1 to 1.*got 1.5/ },
      'above the scale',
    );
    t.throws(
      () => setTone(rig, a, { treble: Number.NaN }),
      { name: 'RangeError', message: /"treble" must be a number from -1 to 1/ },
      'not a number',
    );
    t.throws(
      () => setTone(rig, a, { treble: 0.5, balance: -2 }),
      { name: 'RangeError', message: /"balance".*got -2/ },
      'one bad value in a change',
    );
    await settle(rig);
    await rig.observed();
    t.same(rig.hardwareTone(a), before, 'nothing was written, not even the good value beside the bad one');
    t.same(zoneEvents(events), [], 'and nothing reported');
  });

  run('a tone control the family lacks is refused with the reason', async (t) => {
    const rig = await harness.create(t);
    const [a] = channels(rig) as [number];
    await startWith(rig, [[a, ON]]);
    const lacking = TONE_CONTROLS.filter((control) => {
      const has = sound(rig).controls[control];
      return typeof has === 'object' && 'absent' in has;
    });
    t.ok(lacking.length > 0, `lacks ${lacking.join(', ')}`);
    for (const control of lacking) {
      const has = sound(rig).controls[control] as { absent: string };
      const value = control === 'loudness' ? true : 0.5;
      const reason = has.absent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      t.throws(
        () => setTone(rig, a, { [control]: value }),
        { name: 'RangeError', message: new RegExp(`no ${control} control: ${reason}`) },
        control,
      );
    }
  });

  for (const flag of ZONE_FLAGS) {
    run(FLAG_CASES[flag], async (t) => {
      const rig = await harness.create(t);
      const [a] = channels(rig) as [number];
      await startWith(rig, [[a, ON]]);
      t.equal(rig.driver.hardwareFlags?.(a)?.[flag], false, 'off to begin with');
      const events = recorded(rig);
      const seen = nextEvent(rig.driver, isZoneEvent(a));
      rig.keypad(a, { [flag]: true });
      const event = await rig.until(seen, `a zone event for ${a}`);
      t.equal(event.flags?.[flag], true, 'the event says so');
      t.same(event.state, q(rig, ON), "with the zone's state, unchanged");
      t.equal(rig.driver.hardwareFlags?.(a)?.[flag], true, 'hardwareFlags() agrees');
      await rig.observed();
      await rig.observed();
      t.equal(zoneEvents(events).length, 1, 'one event');
      t.equal(rig.hardwareFlags(a)[flag], true, 'the driver wrote nothing to it');
    });
  }
}
