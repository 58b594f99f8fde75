// A player can only feed zones of its own amplifier, even when several amplifiers are configured at once.

import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import t from 'tap';
import { Amplifiers, createAudio } from '../../daemon/domain/audio/index.js';
import { EventBus } from '../../daemon/domain/shared/index.js';
import { asHttpError } from '../../daemon/http/problem.js';
import { AudioRepo, type PlayerRow } from '../../daemon/store/audio-repo.js';
import { MetaRepo } from '../../daemon/store/meta-repo.js';
import { UsersRepo } from '../../daemon/store/users-repo.js';
import { SimulatedDriver } from '../../drivers/simulated/index.js';
import { admin, audioRig } from '../helpers/audio-rig.js';

function playerOn(key: string, driver: string, channel: number): PlayerRow {
  return {
    id: randomUUID(),
    name: `${key} ${channel}`,
    volume: 0.3,
    input_amplifier: key,
    input_driver: driver,
    input_channel: channel,
    created_at: new Date().toISOString(),
    output_kind: null,
    output_target: null,
  };
}

/** The simulated amplifier of --driver and a second one of the same family. */
async function setup(t: Test) {
  const driver = new SimulatedDriver({ applyDelayMs: 0 });
  const amplifiers = new Amplifiers([
    { name: 'simulated', key: 'simulated', driver },
    { name: 'Second amp', key: 'second-amp', driver: new SimulatedDriver({ applyDelayMs: 0 }) },
  ]);
  return { ...(await audioRig(t, { amplifiers })), driver };
}

t.test('a player of another configured amplifier cannot be attached to a zone and nothing changes', async (t) => {
  const { repo, audio, driver, events } = await setup(t);
  const foreign = playerOn('second-amp', 'simulated', 1);
  repo.insertPlayer(foreign);
  const zone = audio.zones.list(admin).find((z) => z.output.amplifier === 'simulated')!;
  const sent: unknown[] = [];
  const setZone = driver.setZone.bind(driver);
  driver.setZone = (channel, change) => {
    sent.push({ channel, change });
    setZone(channel, change);
  };
  const refused = (() => {
    try {
      audio.players.attachZones(admin, foreign.id, [zone.id]);
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  t.equal(asHttpError(refused)?.status, 400, 'a 400');
  t.match((refused as Error).message, /can only feed zones of that amplifier/);
  t.same(audio.zones.get(admin, zone.id), zone, 'zone unchanged');
  t.same(audio.players.get(admin, foreign.id).zoneIds, []);
  t.same(sent, [], 'nothing sent to the amplifier');
  t.same(events, [], 'no events');
});

t.test('a route across amplifiers left by an older version is dropped at start, the zone keeps playing', async (t) => {
  const first = await audioRig(t);
  const zone = first.audio.zones.list(admin)[0]!;
  const foreign = playerOn('monoprice', 'monoprice', 2);
  first.repo.insertPlayer(foreign);
  await first.audio.zones.setPower(admin, zone.id, true);
  first.store.transaction(() => first.repo.updateZone({ ...first.repo.zone(zone.id)!, player_id: foreign.id }));

  const repo = new AudioRepo(first.store);
  const audio = createAudio({
    store: first.store,
    repo,
    users: new UsersRepo(first.store.db),
    meta: new MetaRepo(first.store.db),
    bus: new EventBus(64),
    amplifiers: new SimulatedDriver(),
  });
  await audio.hardware.start();
  t.teardown(() => audio.hardware.stop());
  t.match(audio.zones.get(admin, zone.id), { playerId: null, power: true });
  t.equal(new AudioRepo(first.store).zonesRoutedAcrossAmplifiers().length, 0, 'stored without the route');
});
