// The access policy on its own, and every write of the domain services refusing a caller below any front door.

import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Caller, Role } from '../../daemon/domain/shared/access.js';
import type { DomainEvent, PlayerView, StampedEvent, ZoneView } from '../../daemon/domain/shared/events.js';
import {
  accessChangeNeedsRefetch,
  canSeeEvent,
  canSeePlayer,
  canSeeZone,
  eventPayloadFor,
  playerFor,
  requireAdmin,
  requireAdminOrSelf,
  requireWriter,
  seesPayloadAsPublished,
  visiblePlayers,
  visibleZones,
  zoneFor,
} from '../../daemon/domain/shared/policy.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { refusal } from '../helpers/refusal.js';

const P1 = '11111111-1111-4111-8111-111111111111';
const P2 = '22222222-2222-4222-8222-222222222222';
const Z1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const Z2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

function caller(
  role: Role,
  playerIds: string[] = [],
  zoneIds: string[] = [],
  userId = `${role.toLowerCase()}-id`,
): Caller {
  return {
    userId,
    username: role.toLowerCase(),
    role,
    playerIds: new Set(playerIds),
    zoneIds: new Set(zoneIds),
    credential: { kind: 'session', sessionId: 's' },
  };
}

const admin = caller('Admin');
const operator = caller('Operator', [P1], [Z1]);
const viewer = caller('Viewer', [P1], [Z1]);

t.test('the policy on its own', async (t) => {
  t.test('only an admin passes requireAdmin, and the refusal names the operation', async (t) => {
    t.equal(await refusal(() => requireAdmin(admin, 'creating a player')), 'none');
    for (const who of [operator, viewer])
      t.equal(await refusal(() => requireAdmin(who, 'creating a player')), 'forbidden', who.role);
    t.throws(
      () => requireAdmin(operator, 'creating a player'),
      new Error('creating a player is for administrators only'),
    );
  });

  t.test('a viewer fails requireWriter; operators and admins pass', async (t) => {
    t.equal(await refusal(() => requireWriter(admin)), 'none');
    t.equal(await refusal(() => requireWriter(operator)), 'none');
    t.equal(await refusal(() => requireWriter(viewer)), 'forbidden');
  });

  t.test('requireAdminOrSelf lets an admin and the user themself through, no one else', async (t) => {
    t.equal(await refusal(() => requireAdminOrSelf(admin, operator.userId, 'reading a user')), 'none');
    t.equal(await refusal(() => requireAdminOrSelf(operator, operator.userId, 'reading a user')), 'none');
    t.equal(await refusal(() => requireAdminOrSelf(viewer, operator.userId, 'reading a user')), 'forbidden');
  });

  t.test('a non-admin sees only its assigned players and zones; an admin sees all', async (t) => {
    t.ok(canSeePlayer(operator, P1));
    t.notOk(canSeePlayer(operator, P2));
    t.ok(canSeeZone(viewer, Z1));
    t.notOk(canSeeZone(viewer, Z2));
    t.ok(canSeePlayer(admin, P2) && canSeeZone(admin, Z2));
  });

  t.test('list filtering keeps the order and drops what the caller may not see', async (t) => {
    const players = [{ id: P2 }, { id: P1 }];
    const zones = [{ id: Z2 }, { id: Z1 }];
    t.same(visiblePlayers(operator, players), [{ id: P1 }]);
    t.same(visibleZones(operator, zones), [{ id: Z1 }]);
    t.same(visiblePlayers(admin, players), players);
    t.same(visibleZones(caller('Operator'), zones), []);
  });

  const player: PlayerView = {
    id: P1,
    name: 'A',
    volume: 0.3,
    zoneIds: [Z2, Z1],
    input: { amplifier: 'simulated', driver: 'simulated', channel: 1 },
    output: null,
    state: 'idle',
    available: true,
    unavailableReason: null,
  };
  const tone = { bass: 0, treble: 0, balance: 0, loudness: null };
  const step = { available: true as const, down: 7, up: 7 };
  const toneControls = {
    bass: step,
    treble: step,
    balance: step,
    loudness: { available: false as const, reason: 'no loudness on this family' },
  };
  const amplifierStatus = { paging: false, doNotDisturb: false, party: null };
  const zone: ZoneView = {
    id: Z1,
    name: 'Kitchen',
    volume: 0.3,
    muted: false,
    power: true,
    playerId: P2,
    output: { amplifier: 'simulated', driver: 'simulated', channel: 1 },
    maxVolume: 1,
    turnOnVolume: null,
    sleepUntil: null,
    tone,
    toneControls,
    amplifierStatus,
    available: true,
    unavailableReason: null,
  };

  t.test('a player shows a non-admin only the attached zones it may see, fields in the same order', async (t) => {
    t.equal(JSON.stringify(playerFor(operator, player)), JSON.stringify({ ...player, zoneIds: [Z1] }));
    t.equal(playerFor(admin, player), player, 'an admin gets the view unchanged');
    t.equal(playerFor(null, player), player, 'the unrestricted view is unchanged');
  });

  t.test('a zone names its player only to a caller who may see that player', async (t) => {
    t.equal(JSON.stringify(zoneFor(operator, zone)), JSON.stringify({ ...zone, playerId: null }));
    t.equal(zoneFor(caller('Operator', [P2], [Z1]), zone), zone);
    t.equal(zoneFor(admin, zone), zone);
  });

  const events: Array<[DomainEvent, string]> = [
    [{ type: 'player.volumeChanged', payload: { playerId: P1, volume: 0.5 } }, 'P1'],
    [{ type: 'player.zonesChanged', payload: { playerId: P1, zoneIds: [Z1] } }, 'P1'],
    [{ type: 'player.created', payload: { player } }, 'P1'],
    [{ type: 'player.updated', payload: { player } }, 'P1'],
    [{ type: 'player.deleted', payload: { playerId: P1 } }, 'P1'],
    [{ type: 'zone.volumeChanged', payload: { zoneId: Z1, volume: 0.5 } }, 'Z1'],
    [{ type: 'zone.mutedChanged', payload: { zoneId: Z1, muted: true } }, 'Z1'],
    [{ type: 'zone.powerChanged', payload: { zoneId: Z1, power: true } }, 'Z1'],
    [{ type: 'zone.created', payload: { zone } }, 'Z1'],
    [{ type: 'zone.updated', payload: { zone } }, 'Z1'],
    [{ type: 'zone.deleted', payload: { zoneId: Z1 } }, 'Z1'],
    [
      {
        type: 'zone.availabilityChanged',
        payload: {
          zoneId: Z1,
          available: false,
          reason: 'amplifier "simulated" (driver simulated): unit 2 does not answer',
        },
      },
      'Z1',
    ],
    [{ type: 'zone.toneChanged', payload: { zoneId: Z1, tone } }, 'Z1'],
    [{ type: 'zone.statusChanged', payload: { zoneId: Z1, amplifierStatus } }, 'Z1'],
  ];

  t.test('a non-admin receives player and zone events only for its assignments', async (t) => {
    const other = caller('Operator', [P2], [Z2]);
    for (const [event] of events) {
      t.ok(canSeeEvent(operator, event), `${event.type} about an assigned one`);
      t.notOk(canSeeEvent(other, event), `${event.type} about another one`);
      t.ok(canSeeEvent(admin, event), `${event.type} for an admin`);
    }
  });

  t.test('user.changed goes to admins only, even about the caller itself', async (t) => {
    const event: DomainEvent = { type: 'user.changed', payload: { userId: operator.userId } };
    t.ok(canSeeEvent(admin, event));
    t.notOk(canSeeEvent(operator, event));
  });

  t.test('library and hardware events go to everyone', async (t) => {
    const library: DomainEvent[] = [
      { type: 'playlist.changed', payload: { playlistId: P1, reason: 'created' } },
      { type: 'playlist.exported', payload: { playlistId: P1, filePath: 'a.m3u8' } },
      { type: 'inputDevice.favoriteChanged', payload: { inputDeviceId: P1, isFavorite: true } },
      { type: 'hardware.status', payload: { driver: 'simulated', online: false } },
    ];
    for (const event of library) t.ok(canSeeEvent(caller('Viewer'), event), event.type);
  });

  t.test('an event payload names for a non-admin only the players and zones it may see', async (t) => {
    const zonesChanged: StampedEvent = {
      id: '1-7',
      seq: 7,
      type: 'player.zonesChanged',
      payload: { playerId: P1, zoneIds: [Z2, Z1] },
    };
    t.equal(JSON.stringify(eventPayloadFor(operator, zonesChanged)), `{"playerId":"${P1}","zoneIds":["${Z1}"]}`);
    t.equal(
      JSON.stringify(eventPayloadFor(operator, { type: 'player.created', payload: { player } })),
      JSON.stringify({ player: { ...player, zoneIds: [Z1] } }),
    );
    t.equal(
      JSON.stringify(eventPayloadFor(operator, { type: 'zone.updated', payload: { zone } })),
      JSON.stringify({ zone: { ...zone, playerId: null } }),
    );
    t.notOk(seesPayloadAsPublished(operator, zonesChanged), 'it gets its own copy');
  });

  t.test('an admin, and any caller for events that name nothing else, share the published payload', async (t) => {
    const zonesChanged: DomainEvent = { type: 'player.zonesChanged', payload: { playerId: P1, zoneIds: [Z2, Z1] } };
    const volume: DomainEvent = { type: 'zone.volumeChanged', payload: { zoneId: Z1, volume: 0.5 } };
    t.ok(seesPayloadAsPublished(admin, zonesChanged));
    t.equal(eventPayloadFor(admin, zonesChanged), zonesChanged.payload);
    t.ok(seesPayloadAsPublished(operator, volume));
    t.equal(eventPayloadFor(operator, volume), volume.payload);
  });

  t.test('a change of role or assignments asks a non-admin stream to refetch; the same access does not', async (t) => {
    t.notOk(accessChangeNeedsRefetch(operator, caller('Operator', [P1], [Z1])), 'same role and sets');
    t.ok(accessChangeNeedsRefetch(operator, caller('Viewer', [P1], [Z1])), 'demoted');
    t.ok(accessChangeNeedsRefetch(operator, caller('Operator', [P1, P2], [Z1])), 'a player more');
    t.ok(accessChangeNeedsRefetch(operator, caller('Operator', [P1], [Z2])), 'another zone');
    t.notOk(accessChangeNeedsRefetch(operator, caller('Admin')), 'an admin sees everything anyway');
  });
});

t.test('domain services refuse what the caller may not do, without any front door', async (t) => {
  const d = await startTestDaemon(t);
  const { players, zones: zoneService, inputs, playlists, zoneSleep, scenes } = d.daemon.services;
  const zones = zoneService.list(admin);
  const mine = players.create(admin, { name: 'Mine', input: { channel: 1 } });
  players.attachZones(admin, mine.id, [zones[0]!.id]);
  const assignedOperator = caller('Operator', [mine.id], [zones[0]!.id, zones[1]!.id]);
  const assignedViewer = caller('Viewer', [mine.id], [zones[0]!.id, zones[1]!.id]);
  const unassigned = caller('Operator');
  const scene = scenes.create(admin, { name: 'Kitchen', zoneIds: [zones[0]!.id] });
  const snapshot = () =>
    JSON.stringify([players.list(admin), zoneService.list(admin), inputs.list(), playlists.page(50, 0)]);

  t.test('creating, renaming and deleting players and zones is refused to an assigned operator', async (t) => {
    const before = snapshot();
    const calls: Record<string, () => unknown> = {
      createPlayer: () => players.create(assignedOperator, { name: 'x', input: { channel: 2 } }),
      renamePlayer: () => players.update(assignedOperator, mine.id, { name: 'renamed' }),
      deletePlayer: () => players.remove(assignedOperator, mine.id),
      createZone: () => zoneService.create(assignedOperator, { name: 'x', output: { channel: 1 } }),
      renameZone: () => zoneService.update(assignedOperator, zones[0]!.id, { name: 'renamed' }),
      deleteZone: () => zoneService.remove(assignedOperator, zones[0]!.id),
    };
    for (const [name, call] of Object.entries(calls)) t.equal(await refusal(call), 'forbidden', name);
    t.equal(snapshot(), before, 'nothing changed');
  });

  t.test('a viewer may not change even the player and zones assigned to it', async (t) => {
    const before = snapshot();
    const calls: Record<string, () => unknown> = {
      setPlayerVolume: () => players.setVolume(assignedViewer, mine.id, 0.9),
      attachZones: () => players.attachZones(assignedViewer, mine.id, [zones[1]!.id]),
      detachZones: () => players.detachZones(assignedViewer, mine.id, [zones[0]!.id]),
      setZoneVolume: () => zoneService.setVolume(assignedViewer, zones[0]!.id, 0.9),
      setZoneMuted: () => zoneService.setMuted(assignedViewer, zones[0]!.id, true),
      setZonePower: () => zoneService.setPower(assignedViewer, zones[0]!.id, false),
      allOff: () => zoneService.allOff(assignedViewer),
      setSleep: () => zoneSleep.set(assignedViewer, zones[0]!.id, Date.now() + 60_000),
      applyScene: () => scenes.apply(assignedViewer, scene.id),
      undo: () => scenes.undo(assignedViewer),
    };
    for (const [name, call] of Object.entries(calls)) t.equal(await refusal(call), 'forbidden', name);
    t.equal(snapshot(), before, 'nothing changed');
  });

  t.test(
    'a scene apply checks its caller when its turn comes: one demoted while an earlier apply ran changes nothing',
    async (t) => {
      let current = assignedOperator;
      const first = scenes.apply(admin, scene.id);
      const second = scenes.apply(assignedOperator, scene.id, () => current);
      current = assignedViewer;
      await first;
      const before = snapshot();
      t.equal(await refusal(() => second), 'forbidden');
      t.equal(snapshot(), before, 'nothing changed');
    },
  );

  t.test('for an operator without assignments the player and zones do not exist', async (t) => {
    const before = snapshot();
    t.equal(await refusal(() => players.get(unassigned, mine.id)), 'not-found');
    t.equal(await refusal(() => players.setVolume(unassigned, mine.id, 0.9)), 'not-found');
    t.equal(await refusal(() => players.detachZones(unassigned, mine.id, [zones[0]!.id])), 'not-found');
    t.equal(await refusal(() => zoneService.setMuted(unassigned, zones[0]!.id, true)), 'not-found');
    t.equal(
      await refusal(() => players.attachZones(assignedOperator, mine.id, [zones[2]!.id])),
      'invalid',
      'a zone outside the assignments in a body',
    );
    t.same(players.list(unassigned), []);
    t.same(zoneService.list(unassigned), []);
    t.equal(snapshot(), before, 'nothing changed');
  });

  t.test('an assigned operator changes its player and zones', async (t) => {
    t.equal(await refusal(() => players.setVolume(assignedOperator, mine.id, 0.6)), 'none');
    t.equal(await refusal(() => players.attachZones(assignedOperator, mine.id, [zones[1]!.id])), 'none');
    t.same(players.get(admin, mine.id).zoneIds.sort(), [zones[0]!.id, zones[1]!.id].sort());
  });

  t.test('creating and deleting input devices is for admins; a viewer may not mark a favorite', async (t) => {
    const input = inputs.list()[0]!;
    const before = snapshot();
    t.equal(
      await refusal(() => inputs.create(assignedOperator, { name: 'Turntable', input: { channel: 1 } })),
      'forbidden',
    );
    t.equal(await refusal(() => inputs.remove(assignedOperator, input.id)), 'forbidden');
    t.equal(await refusal(() => inputs.setFavorite(assignedViewer, input.id, !input.isFavorite)), 'forbidden');
    t.equal(snapshot(), before, 'nothing changed');
    t.equal(
      await refusal(() => inputs.setFavorite(unassigned, input.id, !input.isFavorite)),
      'none',
      'an operator may',
    );
  });

  t.test('every playlist change is refused to a viewer', async (t) => {
    const { warnings: _, ...list } = playlists.create(admin, {
      name: 'Mix',
      tracks: [
        { title: 'a', uri: 'file:a.flac' },
        { title: 'b', uri: 'file:b.flac' },
      ],
    });
    const before = snapshot();
    const calls: Record<string, () => unknown> = {
      create: () => playlists.create(viewer, { name: 'nope' }),
      remove: () => playlists.remove(viewer, list.id),
      appendTracks: () => playlists.appendTracks(viewer, list.id, [{ title: 'c', uri: 'file:///c.flac' }]),
      removeTracks: () => playlists.removeTracks(viewer, list.id, [list.tracks[0]!.id]),
      reorder: () => playlists.reorder(viewer, list.id, [1, 0]),
      setFavorite: () => playlists.setFavorite(viewer, list.id, true),
      export: () => playlists.export(viewer, list.id, 'viewer.m3u8', () => viewer),
      // Refused before the path is even looked at, as the route table refuses before validating a body.
      'export to a bad path': () => playlists.export(viewer, list.id, '../outside.m3u8', () => viewer),
    };
    for (const [name, call] of Object.entries(calls)) t.equal(await refusal(call), 'forbidden', name);
    t.same(playlists.get(list.id), list, 'the playlist is unchanged');
    t.equal(snapshot(), before, 'nothing changed');
    t.notOk(existsSync(path.join(d.daemon.config.exportDir, 'viewer.m3u8')), 'no file was written');
  });

  t.test('an export whose caller became a viewer meanwhile writes nothing', async (t) => {
    const list = playlists.create(admin, { name: 'Late' });
    t.equal(
      await refusal(() => playlists.export(unassigned, list.id, 'late.m3u8', () => caller('Viewer'))),
      'forbidden',
    );
    t.notOk(existsSync(path.join(d.daemon.config.exportDir, 'late.m3u8')));
    t.equal(
      await refusal(() => playlists.export(unassigned, list.id, 'kept.m3u8', () => unassigned)),
      'none',
      'an operator may',
    );
    t.ok(existsSync(path.join(d.daemon.config.exportDir, 'kept.m3u8')));
  });
});
