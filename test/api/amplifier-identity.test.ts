// Amplifier identity in the store: an install upgraded from the single-amplifier schema keeps its ids, listed
// amplifiers keep their zones across restarts and reordering, and a renamed amplifier's zones are kept, unavailable.

import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { type AmplifierConfig, amplifierKey } from '../../daemon/config.js';
import { MIGRATIONS } from '../../daemon/store/migrations.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';

interface Zone {
  id: string;
  name: string;
  playerId: string | null;
  output: { amplifier: string; driver: string; channel: number };
}

const simulated = (name: string): AmplifierConfig => ({
  name,
  key: amplifierKey(name),
  driver: 'simulated',
  port: undefined,
  options: {},
});

/** Schema version 2, the last one before amplifier lists, with rows as the single simulated amplifier made them. */
function schemaTwoDatabase(stateDir: string) {
  const db = new Database(path.join(stateDir, 'azc.db'));
  db.pragma('foreign_keys = ON');
  db.exec(MIGRATIONS[0]!);
  db.exec(MIGRATIONS[1]!);
  db.pragma('user_version = 2');
  const at = '2026-01-01T00:00:00.000Z';
  const ids = {
    player: '11111111-1111-4111-8111-111111111111',
    zones: [1, 2, 3, 4, 5].map((c) => `2222222${c}-2222-4222-8222-222222222222`),
    inputs: [1, 2, 3, 4, 5, 6].map((c) => `3333333${c}-3333-4333-8333-333333333333`),
  };
  db.prepare(
    `INSERT INTO players (id, name, volume, input_driver, input_channel, created_at) VALUES (?, 'Streamer', 0.4, 'simulated', 2, ?)`,
  ).run(ids.player, at);
  const zone = db.prepare(
    `INSERT INTO zones (id, name, volume, muted, power, source, player_id, output_driver, output_channel, created_at)
     VALUES (?, ?, 0.3, 0, ?, ?, ?, 'simulated', ?, ?)`,
  );
  ids.zones.forEach((id, i) =>
    zone.run(id, `Room ${i + 1}`, i === 0 ? 1 : 0, i === 0 ? 2 : 1, i === 0 ? ids.player : null, i + 1, at),
  );
  const input = db.prepare(
    `INSERT INTO input_devices (id, name, kind, input_driver, input_channel, is_favorite, created_at) VALUES (?, ?, 'line-in', 'simulated', ?, ?, ?)`,
  );
  ids.inputs.forEach((id, i) => input.run(id, `Input ${i + 1}`, i + 1, i === 0 ? 1 : 0, at));
  // An admin deleted zone 6 on that version: it must stay deleted.
  db.prepare(`INSERT INTO meta (key, value) VALUES ('deleted:zone:simulated:6', 'deleted')`).run();
  db.close();
  return ids;
}

t.test('an install upgraded from the single-amplifier schema keeps its zone, player and input ids', async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const ids = schemaTwoDatabase(stateDir);

  const d = await startDaemon({ stateDir, configuredAmplifiers: true });
  t.teardown(() => d.stop());
  t.equal(d.daemon.services.store.schemaVersion, MIGRATIONS.length);
  const api = injectClient(d.daemon, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Zone[];
  t.same(
    zones.map((z) => z.id),
    ids.zones,
    'the same zones, zone 6 stays deleted',
  );
  t.same(
    zones[0]!.output,
    { amplifier: 'simulated', driver: 'simulated', channel: 1 },
    'named after the driver of --driver',
  );
  t.equal(zones[0]!.playerId, ids.player, 'the route is kept');
  const player = (await api.get(`/api/players/${ids.player}`)).body;
  t.match(player, {
    name: 'Streamer',
    zoneIds: [ids.zones[0]],
    input: { amplifier: 'simulated', driver: 'simulated', channel: 2 },
  });
  const inputs = (await api.get('/api/input-devices')).body as Array<{ id: string; isFavorite: boolean }>;
  t.same(
    inputs.map((i) => i.id),
    ids.inputs,
  );
  t.equal(inputs[0]!.isFavorite, true);
  t.equal(
    (await api.post(`/api/players/${ids.player}/attach-zones`, { zoneIds: [ids.zones[1]] })).status,
    204,
    'the upgraded player still feeds its amplifier',
  );
  const taken = await api.post('/api/players', { name: 'Again', input: { channel: 2 } });
  t.equal(taken.status, 409, 'the upgraded player still holds its input');
});

t.test(
  'listed amplifiers keep their zones across restarts and reordering; a renamed one is kept, unavailable',
  async (t) => {
    const stateDir = tempDir();
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const run = async (names: string[]) => {
      const d = await startDaemon({
        stateDir,
        configuredAmplifiers: true,
        config: { amplifiers: names.map(simulated) },
      });
      const api = injectClient(d.daemon, d.adminKey);
      const zones = (await api.get('/api/zones')).body as Zone[];
      const byAmp = (name: string) => zones.filter((z) => z.output.amplifier === name).map((z) => z.id);
      return { d, api, zones, byAmp };
    };

    const first = await run(['Kitchen', 'Garage']);
    const kitchen = first.byAmp('Kitchen');
    const garage = first.byAmp('Garage');
    t.equal(kitchen.length, 6);
    t.equal(garage.length, 6);
    t.equal(new Set([...kitchen, ...garage]).size, 12, 'two amplifiers of one driver have distinct zones');
    const player = (
      await first.api.post('/api/players', { name: 'Garage streamer', input: { amplifier: 'Garage', channel: 1 } })
    ).body;
    t.equal((await first.api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [garage[0]] })).status, 204);
    const cross = await first.api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen[0]] });
    t.equal(cross.status, 400, 'two amplifiers of the same driver are still two amplifiers');
    t.match(cross.body.detail, /"Garage" amplifier.*amplifier "Kitchen"/);
    const inputs = (await first.api.get('/api/input-devices')).body as Array<{
      id: string;
      input: { amplifier: string; channel: number };
    }>;
    const garageInput = inputs.find((i) => i.input.amplifier === 'Garage' && i.input.channel === 6)!;
    t.equal((await first.api.del(`/api/input-devices/${garageInput.id}`)).status, 204);
    const ambiguous = await first.api.post('/api/input-devices', { name: 'Turntable', input: { channel: 6 } });
    t.equal(ambiguous.status, 400, 'an input device needs its amplifier named when there are several');
    t.match(ambiguous.body.detail, /name one in "input\.amplifier" \("Kitchen", "Garage"\)/);
    const turntable = await first.api.post('/api/input-devices', {
      name: 'Turntable',
      input: { amplifier: 'garage', channel: 6 },
    });
    t.equal(turntable.status, 201);
    t.same(turntable.body.input, { amplifier: 'Garage', driver: 'simulated', channel: 6 });
    await first.d.stop();

    const reordered = await run(['Garage', 'Kitchen']);
    t.same(reordered.byAmp('Kitchen'), kitchen, 'reordering the list keeps the ids');
    t.same(reordered.byAmp('Garage'), garage);
    t.equal((await reordered.api.get(`/api/zones/${garage[0]}`)).body.playerId, player.id, 'and the routes');
    await reordered.d.stop();

    const renamed = await run(['Kitchen', 'Workshop']);
    t.same(renamed.byAmp('Kitchen'), kitchen);
    t.equal(renamed.byAmp('Workshop').length, 6);
    t.notOk(
      renamed.byAmp('Workshop').some((id) => garage.includes(id)),
      'a renamed amplifier starts with new zones',
    );
    const notConfigured = 'amplifier "garage" (driver simulated) is not configured';
    t.match(
      (await renamed.api.get(`/api/zones/${garage[0]}`)).body,
      { output: { amplifier: 'garage' }, playerId: player.id, available: false, unavailableReason: notConfigured },
      "the old name's zones are listed as unavailable, with their route",
    );
    t.match(
      (await renamed.api.get(`/api/players/${player.id}`)).body,
      { available: false, unavailableReason: notConfigured },
      'and so is its player',
    );
    const health = (await renamed.api.get('/api/health')).body;
    t.same(health.amplifiers, [
      { name: 'Kitchen', driver: 'simulated', online: true },
      { name: 'Workshop', driver: 'simulated', online: true },
    ]);
    t.match(
      health,
      { status: 'ok', unavailableZones: 0 },
      'zones of an amplifier that is not configured are no fault of the hardware',
    );
    await renamed.d.stop();

    const back = await run(['kitchen', 'GARAGE']);
    t.same(back.byAmp('kitchen'), kitchen, 'names differing only in case are the same amplifier');
    t.same(back.byAmp('GARAGE'), garage, "the old name's zones come back unchanged");
    t.equal((await back.api.get(`/api/zones/${garage[0]}`)).body.playerId, player.id);
    await back.d.stop();
  },
);
