// The behaviour every amplifier driver owes the daemon; each driver's test file runs it against its own rig.
import type { Test } from 'tap';
import type { AmplifierDriver, DriverEvent, ZoneState } from '../../drivers/driver.js';
import { stepToVolume, volumeToStep } from '../../drivers/driver.js';
import { ALONE } from '../helpers/concurrency.js';
import { within, WAIT_MS as SUITE_WAIT_MS } from '../helpers/wait-for.js';

/** A driver plus a handle on the hardware behind it (an emulator, or the simulated driver's own memory). */
export interface DriverRig {
  /** Built, not started. */
  driver: AmplifierDriver;
  /** Changes the hardware behind the driver's back, like a keypad or a front panel. */
  keypad(channel: number, change: Partial<ZoneState>): void;
  /** What the hardware really holds now, not what the driver believes. */
  hardware(channel: number): ZoneState;
  /** Resolves once the driver has looked at the hardware again (a completed poll); at once for push-only drivers. */
  observed(): Promise<void>;
  /** Volume commands that reached the wire for a zone, for drivers that have a wire. */
  volumeWrites?(channel: number): number;
  /** The hardware goes away (the port vanishes, or the amplifier loses power); resolves once it is gone. */
  unplug?(): Promise<void>;
  /** The hardware comes back (the port returns, or the amplifier is powered again); resolves once it is there. */
  replug?(): Promise<void>;
}

export interface ConformanceHarness {
  /** Builds a fresh driver and hardware (every zone off) and registers their teardown on `t`. */
  create(t: Test): Promise<DriverRig>;
  /** What the description must say. */
  expect: { zones: number; inputs: number; volumeSteps: number };
  /** Cases this driver cannot meet, each with the reason; reported as skips, never dropped silently. */
  skip?: Partial<Record<ConformanceCase, string>>;
}

export const CONFORMANCE_CASES = [
  'describes its zones, inputs and volume steps',
  'starting with a desired state makes the hardware match it',
  'setZone returns before the hardware changes',
  'setZone power, source, volume and mute reach the hardware',
  'a volume burst ends at the last value',
  'a volume burst reaches the wire as fewer writes than changes',
  'a keypad change becomes exactly one zone event with the new state',
  'changes the driver makes are not reported back as zone events',
  'a keypad volume change while muted reports the new state',
  'a driver that loses the hardware and gets it back re-applies the desired state and goes online again, applying changes made while offline',
  'stop leaves no timers behind',
] as const;
export type ConformanceCase = (typeof CONFORMANCE_CASES)[number];

/**
 * The suite's wait limit (20 s): a missing event fails the same, and a loaded machine stretches the poll cycle of a
 * paced serial line (a keypad change is only seen at the next poll).
 */
const WAIT_MS = SUITE_WAIT_MS;

/** Resolves with the first event matching `test`; fails with a message naming what was awaited. */
export function nextEvent<E extends DriverEvent>(
  driver: AmplifierDriver,
  test: (event: DriverEvent) => event is E,
  what: string,
  timeoutMs = WAIT_MS,
): Promise<E> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = driver.onEvent((event) => {
      if (!test(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

export const isStatus = (online: boolean) => (e: DriverEvent): e is Extract<DriverEvent, { type: 'status' }> =>
  e.type === 'status' && e.online === online;

export const isZoneEvent = (channel: number) => (e: DriverEvent): e is Extract<DriverEvent, { type: 'zone' }> =>
  e.type === 'zone' && e.channel === channel;

/** `settled()` with a bound, so a driver that never settles fails the test instead of hanging it. */
export async function settledWithin(driver: AmplifierDriver, timeoutMs = WAIT_MS): Promise<void> {
  await within(driver.settled(), timeoutMs, 'the driver to settle');
}

function quantise(state: ZoneState, steps: number): ZoneState {
  return { ...state, volume: stepToVolume(volumeToStep(state.volume, steps), steps) };
}

/** A rig hook the case needs; a rig without it must list the case in its skip list. */
function hook<K extends 'unplug' | 'replug' | 'volumeWrites'>(rig: DriverRig, name: K): NonNullable<DriverRig[K]> {
  const fn = rig[name];
  if (!fn) throw new Error(`the rig has no ${name}(): implement it or put this case in the skip list with the reason`);
  return fn.bind(rig) as NonNullable<DriverRig[K]>;
}

/**
 * Cases that run ALONE when a file runs the others concurrently: counting the process's timers needs the process to
 * itself, and a burst spread over event-loop turns must not share them with other rigs (longer turns, more writes).
 */
const RUN_ALONE: ReadonlySet<ConformanceCase> = new Set([
  'stop leaves no timers behind',
  'a volume burst reaches the wire as fewer writes than changes',
]);

const timerCount = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

export function driverConformance(t: Test, harness: ConformanceHarness): void {
  const skip = harness.skip ?? {};
  for (const name of Object.keys(skip)) {
    if (!(CONFORMANCE_CASES as readonly string[]).includes(name)) throw new Error(`skip list names no case "${name}"`);
  }
  const run = (name: ConformanceCase, body: (t: Test, rig: DriverRig) => Promise<void>): void => {
    const reason = skip[name];
    if (reason) {
      t.test(name, { skip: reason }, () => undefined);
      return;
    }
    t.test(name, RUN_ALONE.has(name) ? ALONE : {}, async (t) => body(t, await harness.create(t)));
  };
  const channels = (rig: DriverRig): number[] => rig.driver.describe().zones.map((z) => z.channel);
  const steps = (rig: DriverRig): number => rig.driver.describe().volumeSteps;

  run('describes its zones, inputs and volume steps', async (t, { driver }) => {
    const description = driver.describe();
    t.equal(description.zones.length, harness.expect.zones, 'zone count');
    t.equal(new Set(description.zones.map((z) => z.channel)).size, description.zones.length, 'zone channels are unique');
    t.equal(description.inputs.length, harness.expect.inputs, 'input count');
    t.same(description.inputs.map((i) => i.channel), description.inputs.map((_, i) => i + 1), 'inputs are 1..S');
    t.equal(description.volumeSteps, harness.expect.volumeSteps, 'volume steps');
  });

  run('starting with a desired state makes the hardware match it', async (t, rig) => {
    const [a, b] = channels(rig) as [number, number];
    const desired = new Map<number, ZoneState>([
      [a, { power: true, muted: false, volume: 0.5, source: 2 }],
      [b, { power: true, muted: true, volume: 0.25, source: 3 }],
    ]);
    const online = nextEvent(rig.driver, isStatus(true), 'status online');
    await rig.driver.start(desired);
    await online;
    await settledWithin(rig.driver);
    t.same(rig.hardware(a), quantise(desired.get(a)!, steps(rig)), `zone ${a}`);
    t.same(rig.hardware(b), quantise(desired.get(b)!, steps(rig)), `zone ${b}`);
    t.ok(rig.driver.online, 'driver reports online');
  });

  run('setZone returns before the hardware changes', async (t, rig) => {
    const [a] = channels(rig) as [number];
    await rig.driver.start(new Map());
    await settledWithin(rig.driver);
    const before = rig.hardware(a);
    t.equal(rig.driver.setZone(a, { power: !before.power }), undefined);
    t.same(rig.hardware(a), before, 'the hardware has not changed yet');
    await settledWithin(rig.driver);
    t.equal(rig.hardware(a).power, !before.power, 'and then it does');
  });

  run('setZone power, source, volume and mute reach the hardware', async (t, rig) => {
    const [, b] = channels(rig) as [number, number];
    await rig.driver.start(new Map());
    await settledWithin(rig.driver);
    rig.driver.setZone(b, { power: true });
    rig.driver.setZone(b, { source: 4 });
    rig.driver.setZone(b, { volume: 0.5 });
    rig.driver.setZone(b, { muted: true });
    await settledWithin(rig.driver);
    const expected = quantise({ power: true, muted: true, volume: 0.5, source: 4 }, steps(rig));
    t.same(rig.hardware(b), expected, 'hardware');
    t.same(rig.driver.hardwareState(b), expected, 'hardwareState() agrees');
  });

  run('a volume burst ends at the last value', async (t, rig) => {
    const [a] = channels(rig) as [number];
    await rig.driver.start(new Map([[a, { power: true, muted: false, volume: 0.1, source: 1 }]]));
    await settledWithin(rig.driver);
    for (let i = 1; i <= 40; i++) rig.driver.setZone(a, { volume: i / 50 });
    await settledWithin(rig.driver);
    t.equal(rig.hardware(a).volume, quantise({ ...rig.hardware(a), volume: 40 / 50 }, steps(rig)).volume);
  });

  run('a volume burst reaches the wire as fewer writes than changes', async (t, rig) => {
    const [a] = channels(rig) as [number];
    await rig.driver.start(new Map([[a, { power: true, muted: false, volume: 0.1, source: 1 }]]));
    await settledWithin(rig.driver);
    const volumeWrites = hook(rig, 'volumeWrites');
    const before = volumeWrites(a);
    const changes = 40;
    // Spread over event-loop turns, so the driver gets to write while the burst is still going on.
    for (let i = 1; i <= changes; i++) {
      rig.driver.setZone(a, { volume: i / 50 });
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await settledWithin(rig.driver);
    const writes = volumeWrites(a) - before;
    t.ok(writes >= 1 && writes < changes / 2, `${writes} volume writes for ${changes} changes`);
    t.equal(rig.hardware(a).volume, quantise({ ...rig.hardware(a), volume: changes / 50 }, steps(rig)).volume);
  });

  run('a keypad change becomes exactly one zone event with the new state', async (t, rig) => {
    const [a] = channels(rig) as [number];
    await rig.driver.start(new Map([[a, { power: true, muted: false, volume: 0.25, source: 1 }]]));
    await settledWithin(rig.driver);
    const events: DriverEvent[] = [];
    rig.driver.onEvent((e) => {
      if (e.type === 'zone') events.push(e);
    });
    const expected = quantise({ power: true, muted: false, volume: 0.75, source: 3 }, steps(rig));
    const seen = nextEvent(rig.driver, isZoneEvent(a), `zone event for ${a}`);
    rig.keypad(a, { volume: 0.75, source: 3 });
    const event = await seen;
    t.same(event.state, expected, 'event carries the new state');
    await rig.observed();
    await rig.observed();
    t.equal(events.length, 1, 'and no second event after further polls');
    t.same(rig.driver.hardwareState(a), expected, 'hardwareState() agrees');
  });

  run('changes the driver makes are not reported back as zone events', async (t, rig) => {
    const [a, b] = channels(rig) as [number, number];
    await rig.driver.start(new Map());
    await settledWithin(rig.driver);
    const events: DriverEvent[] = [];
    rig.driver.onEvent((e) => {
      if (e.type === 'zone') events.push(e);
    });
    rig.driver.setZone(a, { power: true, volume: 0.6, source: 5 });
    rig.driver.setZone(b, { power: true, muted: true });
    await settledWithin(rig.driver);
    await rig.observed();
    await rig.observed();
    t.same(events, [], 'no zone events');
  });

  run('a keypad volume change while muted reports the new state', async (t, rig) => {
    const [a] = channels(rig) as [number];
    await rig.driver.start(new Map([[a, { power: true, muted: true, volume: 0.25, source: 1 }]]));
    await settledWithin(rig.driver);
    const volume = quantise({ ...rig.hardware(a), volume: 0.75 }, steps(rig)).volume;
    const isNewVolume = (e: DriverEvent): e is Extract<DriverEvent, { type: 'zone' }> =>
      isZoneEvent(a)(e) && e.state.volume === volume;
    const seen = nextEvent(rig.driver, isNewVolume, `zone event for ${a} with the new volume`);
    rig.keypad(a, { volume: 0.75 });
    const event = await seen;
    // Whether the keypad's change also un-muted is the amplifier's business; the event must say what it now holds.
    t.same(event.state, rig.hardware(a), 'the event carries what the hardware holds');
    await rig.observed();
    await rig.observed();
    t.same(rig.driver.hardwareState(a), rig.hardware(a), 'hardwareState() agrees after further polls');
  });

  run(
    'a driver that loses the hardware and gets it back re-applies the desired state and goes online again, applying changes made while offline',
    async (t, rig) => {
      const [a, b] = channels(rig) as [number, number];
      const unplug = hook(rig, 'unplug');
      const replug = hook(rig, 'replug');
      const online = nextEvent(rig.driver, isStatus(true), 'status online');
      await rig.driver.start(new Map([[a, { power: true, muted: false, volume: 0.5, source: 2 }]]));
      await online;
      await settledWithin(rig.driver);
      const offline = nextEvent(rig.driver, isStatus(false), 'status offline');
      await unplug();
      await offline;
      t.equal(rig.driver.online, false, 'offline while the hardware is gone');
      // Meanwhile the amplifier forgot the zone (a power cycle, a front panel): the desired state must be pushed again.
      rig.keypad(a, { power: false });
      rig.driver.setZone(a, { volume: 0.75 });
      rig.driver.setZone(b, { power: true, source: 3, volume: 0.25 });
      const back = nextEvent(rig.driver, isStatus(true), 'status online again');
      await replug();
      await back;
      await settledWithin(rig.driver);
      t.ok(rig.driver.online, 'online again');
      t.same(rig.hardware(a), quantise({ power: true, muted: false, volume: 0.75, source: 2 }, steps(rig)), 'desired state re-applied');
      t.same(rig.hardware(b), quantise({ power: true, muted: false, volume: 0.25, source: 3 }, steps(rig)), 'change made offline applied');
      t.same(rig.driver.hardwareState(b), rig.hardware(b), 'hardwareState() agrees');
    },
  );

  run('stop leaves no timers behind', async (t, rig) => {
    const [a] = channels(rig) as [number];
    const before = timerCount();
    await rig.driver.start(new Map([[a, { power: true, muted: false, volume: 0.3, source: 2 }]]));
    await settledWithin(rig.driver);
    rig.driver.setZone(a, { volume: 0.4 }); // leave work in flight to be cancelled
    await rig.driver.stop();
    t.ok(timerCount() <= before, `timers after stop (${timerCount()}) not above before start (${before})`);
    t.equal(rig.driver.online, false, 'reports offline once stopped');
  });
}
