// Each serial family end to end through the real serialport on a socat pseudo-terminal, in real time: a zone routed
// power first and a keypad's change heard, the adapter unplugged and plugged back, a port that appears after start.
// Everything else about the drivers runs on the in-memory line (the families' own test files).
import t from 'tap';
import { type AmplifierDriver, stepToVolume, volumeToStep, type ZoneState } from '../../drivers/driver.js';
import type { EmulatorPort } from '../../drivers/emulator-port.js';
import { isStatus, isZoneEvent, nextEventWithin } from './events.js';
import * as monoprice from './monoprice-rig.js';
import * as rnet from './rnet-rig.js';
import { type SerialRig, settledWithin, startOnline } from './serial-rig.js';
import * as xantech from './xantech-rig.js';

interface PtyFamily {
  name: string;
  /** A rig whose every unit answers, so no probe waits for a timeout. */
  rig(
    t: Parameters<typeof monoprice.ptyRig>[0],
    deferredPort?: boolean,
  ): Promise<SerialRig<AmplifierDriver, EmulatorPort>>;
  channel: number;
  /** The writes `{ power: true, source: 2, volume: 0.5 }` puts on the wire, in order. */
  routed: string[];
  isWrite(command: string): boolean;
  /** What the zone holds. */
  state(rig: SerialRig<AmplifierDriver, EmulatorPort>): ZoneState;
  hold(rig: SerialRig<AmplifierDriver, EmulatorPort>, state: ZoneState): void;
}

const families: PtyFamily[] = [
  {
    name: 'monoprice',
    rig: (t, deferredPort) => monoprice.ptyRig(t, { emulator: { units: 3 }, deferredPort }),
    channel: 11,
    routed: ['<11PR01', '<11CH02', '<11VO19'],
    isWrite: (c) => c.startsWith('<'),
    state: (r) => monoprice.fromStatus((r.emulator as monoprice.Rig['emulator']).state(11)),
    hold: (r, state) => (r.emulator as monoprice.Rig['emulator']).keypad(11, monoprice.toKeypad(state)),
  },
  {
    name: 'rnet',
    rig: (t, deferredPort) => rnet.ptyRig(t, { emulator: { controllers: 6 }, deferredPort }),
    channel: 11,
    routed: ['power 11 on', 'source 11 2', 'volume 11 25'],
    isWrite: (c) => !c.startsWith('info'),
    state: (r) => rnet.fromEmulated((r.emulator as rnet.Rig['emulator']).state(11)),
    hold: (r, state) => (r.emulator as rnet.Rig['emulator']).keypad(11, rnet.toEmulated(state)),
  },
  {
    name: 'xantech',
    rig: (t, deferredPort) => xantech.ptyRig(t, { deferredPort }),
    channel: 1,
    routed: ['!1PR1', '!1SS2', '!1VO19'],
    isWrite: (c) => c.startsWith('!'),
    state: (r) => xantech.fromStatus((r.emulator as xantech.Rig['emulator']).zone(1)),
    hold: (r, state) => (r.emulator as xantech.Rig['emulator']).keypad(1, xantech.toKeypad(state)),
  },
];

for (const family of families) {
  const { name, channel } = family;
  const playing: ZoneState = { power: true, muted: false, volume: 0.3, source: 1 };

  t.test(
    `${name} over a real serial port: a zone is routed power first, and a keypad change becomes one event`,
    async (t) => {
      const r = await family.rig(t);
      await startOnline(r);
      const mark = r.emulator.commands.length;
      r.driver.setZone(channel, { power: true, source: 2, volume: 0.5 });
      await settledWithin(r.driver);
      t.same(r.emulator.commands.slice(mark).filter(family.isWrite), family.routed);
      const event = nextEventWithin(r.driver, isZoneEvent(channel), 'the keypad event');
      family.hold(r, { ...family.state(r), volume: 0.8 });
      t.same((await event).state, family.state(r), 'the event carries what the zone holds');
    },
  );

  t.test(
    `${name} over a real serial port: the adapter unplugged goes offline, and plugged back gets the change made meanwhile`,
    async (t) => {
      const r = await family.rig(t);
      family.hold(r, playing);
      await startOnline(r, new Map([[channel, family.state(r)]]));
      const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
      await r.unplug();
      t.match((await offline).detail, /closed|unplugged|EIO/, 'a write may fail before the close is seen');
      r.driver.setZone(channel, { volume: 0.5, source: 6 });
      const online = nextEventWithin(r.driver, isStatus(true), 'status online after replug');
      await r.replug();
      await online;
      await settledWithin(r.driver);
      const steps = r.driver.describe().volumeSteps;
      t.same(family.state(r), { ...playing, source: 6, volume: stepToVolume(volumeToStep(0.5, steps), steps) });
    },
  );

  t.test(
    `${name} over a real serial port: a port missing at start is reported offline and used once it appears`,
    async (t) => {
      const r = await family.rig(t, true);
      const offline = nextEventWithin(r.driver, isStatus(false), 'status offline');
      await r.driver.start(new Map());
      t.match((await offline).detail, /cannot open/);
      r.driver.setZone(channel, { power: true, source: 3 });
      const online = nextEventWithin(r.driver, isStatus(true), 'status online');
      await r.replug();
      await online;
      await settledWithin(r.driver);
      t.match(family.state(r), { power: true, source: 3 });
    },
  );
}
