// Scenes on the Monoprice driver, on an in-memory line: no zone is heard while its source or volume changes (no
// pops), and the zones end in the scene's state, for an apply and for its undo.
import t from 'tap';
import { MonopriceDriver } from '../../drivers/monoprice/driver.js';
import { MonopriceEmulator } from '../../drivers/monoprice/emulator.js';
import type { ZoneStatus } from '../../drivers/monoprice/protocol.js';
import { daemonOnMemory } from './daemon-rig.js';
import { STEPS } from './monoprice-rig.js';

/** A set command as it reached the amplifier, with the zone's state right after it was carried out. */
interface Received {
  command: string;
  zone: number;
  attribute: string;
  after: ZoneStatus;
}

/** Records every set command the amplifier receives until stopped. */
function record(emulator: MonopriceEmulator): { received: Received[]; stop: () => void } {
  const received: Received[] = [];
  const listener = (command: string) => {
    const set = /^<([1-3][1-6])([A-Z]{2})\d\d$/.exec(command);
    if (set)
      received.push({ command, zone: Number(set[1]), attribute: set[2]!, after: emulator.state(Number(set[1])) });
  };
  emulator.on('command', listener);
  return { received, stop: () => emulator.off('command', listener) };
}

/** Source and volume commands that reached a zone while it was on and unmuted: each would be heard as a pop. */
const audibleChanges = (received: Received[]) =>
  received
    .filter((r) => (r.attribute === 'CH' || r.attribute === 'VO') && r.after.power && !r.after.mute)
    .map((r) => r.command);

const step = (volume: number) => Math.round(volume * STEPS);

t.test(
  'on the monoprice amplifier, applying a scene and undoing it mute every zone before its source or volume changes',
  async (t) => {
    const { emulator, driver, api, zones, until } = await daemonOnMemory(t, {
      emulator: (clock) => new MonopriceEmulator({ units: 1, clock }),
      driver: (wiring) => new MonopriceDriver(wiring),
    });
    const [z11, z12, z13, z14] = zones.map((z) => z.id) as [string, string, string, string];
    const a = (await api.post('/api/players', { name: 'Streamer', input: { channel: 3 } })).body as { id: string };
    const b = (await api.post('/api/players', { name: 'Turntable', input: { channel: 5 } })).body as { id: string };

    // Before: 11 and 14 play player A, 12 plays player B, 13 is off.
    t.equal((await api.post(`/api/players/${a.id}/attach-zones`, { zoneIds: [z11, z14] })).status, 204);
    t.equal((await api.post(`/api/players/${b.id}/attach-zones`, { zoneIds: [z12] })).status, 204);
    for (const [id, volume] of [
      [z11, 0.5],
      [z12, 0.2],
      [z14, 0.4],
    ] as const)
      t.equal((await api.put(`/api/zones/${id}/volume`, { volume })).status, 204);
    await until(driver.settled(), 'the starting state to reach the amplifier');
    const before = [11, 12, 13, 14].map((zone) => emulator.state(zone));
    const zone13 = (await api.get(`/api/zones/${z13}`)).body;
    t.match(before, [
      { power: true, mute: false, source: 3, volume: step(0.5) },
      { power: true, mute: false, source: 5, volume: step(0.2) },
      { power: false },
      { power: true, mute: false, source: 3, volume: step(0.4) },
    ]);

    // The scene: every playing zone changes source and volume, the off zone comes on, the last zone goes off.
    const scene = (await api.post('/api/scenes', { name: 'Swap', zoneIds: [z11, z12, z13, z14] })).body as {
      id: string;
    };
    const wanted = [
      { zoneId: z11, power: true, volume: 0.3, muted: false, playerId: b.id },
      { zoneId: z12, power: true, volume: 0.7, muted: false, playerId: a.id },
      { zoneId: z13, power: true, volume: 0.4, muted: false, playerId: a.id },
      { zoneId: z14, power: false, volume: 0.4, muted: false, playerId: a.id },
    ];
    t.equal((await api.put(`/api/scenes/${scene.id}`, { zones: wanted })).status, 200);

    const apply = record(emulator);
    // The apply waits for the amplifier between its phases: the clock is run until it answers.
    t.equal((await until(api.post(`/api/scenes/${scene.id}/apply`), 'the apply')).status, 200);
    await until(driver.settled(), 'the apply to reach the amplifier');
    apply.stop();
    const routed = apply.received.filter((r) => r.attribute === 'CH' || r.attribute === 'VO').map((r) => r.command);
    t.ok(
      ['<11CH05', '<11VO11', '<12CH03', '<12VO27', '<13CH03', '<13VO15'].every((c) => routed.includes(c)),
      `sources and volumes were sent: ${routed.join(' ')}`,
    );
    t.same(audibleChanges(apply.received), [], 'no source or volume change reached a zone that was on and unmuted');
    t.match(
      [11, 12, 13, 14].map((zone) => emulator.state(zone)),
      [
        { power: true, mute: false, source: 5, volume: step(0.3) },
        { power: true, mute: false, source: 3, volume: step(0.7) },
        { power: true, mute: false, source: 3, volume: step(0.4) },
        { power: false },
      ],
    );
    t.match((await api.get(`/api/zones/${z11}`)).body, { power: true, muted: false, volume: 0.3, playerId: b.id });
    t.match((await api.get(`/api/zones/${z14}`)).body, { power: false });

    const undo = record(emulator);
    t.equal((await until(api.post('/api/scenes/undo'), 'the undo')).status, 200);
    await until(driver.settled(), 'the undo to reach the amplifier');
    undo.stop();
    t.ok(
      undo.received.some((r) => r.attribute === 'CH'),
      'the undo routed sources back',
    );
    t.same(audibleChanges(undo.received), [], 'nor during the undo');
    // An amplifier ignores all but power for a zone that is off: zone 13 keeps what it last played until it is on again.
    t.match(
      [11, 12, 13, 14].map((zone) => emulator.state(zone)),
      [before[0], before[1], { power: false }, before[3]],
      'back where it started',
    );
    t.same((await api.get(`/api/zones/${z13}`)).body, zone13, 'the zone that went back off reports what it had');
  },
);
