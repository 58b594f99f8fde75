// Announcements through the API on the real MPD: a chime interrupts a playing stream player on two zones, and every
// zone's power, route, volume and mute and the player's track and position are back afterwards; what someone changes
// meanwhile is kept; limits, assignments, the queue, cancelling and failures.

import { copyFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import {
  CHIME,
  chimeFolder,
  announcementEnded as ended,
  announcementStarted as started,
  zoneState as state,
  zonesOf as zones,
} from '../helpers/announcement-rig.js';
import { concurrently } from '../helpers/concurrency.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { TRACKS } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

concurrently(t, 3);
const music = chimeFolder(t);
const file = (track: string) => `file:${track}`;

t.test(
  'a chime interrupts a playing player on two zones, and routes, volumes, mute, power, track and position come back',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const player = await rig.fifoPlayer('Living stream', 1);
    const reader = player.reader();
    const [kitchen, patio] = await zones(rig);
    await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen!.id] });
    await api.put(`/api/zones/${kitchen!.id}/volume`, { volume: 0.3 });
    await api.put(`/api/zones/${patio!.id}/volume`, { volume: 0.25 });
    await api.put(`/api/zones/${patio!.id}/power`, { power: false });
    await api.post(`/api/players/${player.id}/play`, { uri: file(TRACKS.long) });
    await api.post(`/api/players/${player.id}/seek`, { positionMs: 10_000 });
    const before = (await zones(rig)).slice(0, 2).map(state);
    t.same(before, [
      { power: true, volume: 0.3, muted: false, playerId: player.id },
      { power: false, volume: 0.25, muted: false, playerId: null },
    ]);

    const from = rig.events.length;
    const queued = await api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id, patio!.id], volume: 0.6 });
    t.equal(queued.status, 202);
    t.match(queued.body, { uri: CHIME, zoneIds: [kitchen!.id, patio!.id], volume: 0.6, status: 'queued' });
    const started = (await rig.next('announcement.started', (e) => e.payload.announcement.id === queued.body.id, from))
      .payload.announcement;
    t.match(started, { status: 'playing', playerIds: [player.id], skipped: [] });
    t.same(
      (await zones(rig)).slice(0, 2).map(state),
      [
        { power: true, volume: 0.6, muted: false, playerId: player.id },
        { power: true, volume: 0.6, muted: false, playerId: player.id },
      ],
      'both zones play the announcement at its volume',
    );
    const during = (await api.get(`/api/players/${player.id}/playback`)).body;
    t.match(during, { announcementId: queued.body.id, uri: CHIME, title: 'Door' });
    t.equal((await api.post(`/api/players/${player.id}/pause`)).status, 409, 'transport waits for the announcement');
    await reader.receive(44_100, 'the chime on the FIFO');

    const end = await ended(rig, queued.body.id, from);
    t.match(end, { status: 'done', kept: [], skipped: [] });
    t.same((await zones(rig)).slice(0, 2).map(state), before, 'every zone is as it was');
    const after = await rig.until(
      player.id,
      (p) => p.state === 'playing' && p.announcementId === null,
      'the music again',
    );
    t.match(after, { uri: file(TRACKS.long), title: 'Long Tone' });
    t.ok(after.positionMs >= 10_000 && after.positionMs < 14_000, `from where it was (${after.positionMs} ms)`);
    await reader.receive(44_100, 'the music on the FIFO');
  },
);

t.test('a zone changed while the announcement plays keeps the change; the others come back', async (t) => {
  const rig = await startStreamDaemon(t, { music, playback: { announcementMaxMs: 20_000 } });
  const { api } = rig;
  await rig.fifoPlayer('Hall stream', 1);
  const [kitchen, patio] = await zones(rig);
  await api.put(`/api/zones/${kitchen!.id}/volume`, { volume: 0.2 });
  await api.put(`/api/zones/${patio!.id}/volume`, { volume: 0.2 });
  const from = rig.events.length;
  const id = (
    await api.post('/api/announcements', { uri: file(TRACKS.long), zoneIds: [kitchen!.id, patio!.id], volume: 0.5 })
  ).body.id;
  await rig.next('announcement.started', (e) => e.payload.announcement.id === id, from);
  t.equal(
    (await api.put(`/api/zones/${patio!.id}/volume`, { volume: 0.1 })).status,
    204,
    'someone turns the patio down',
  );
  t.equal((await api.del(`/api/announcements/${id}`)).status, 200, 'and the announcement is cut short');
  const end = await ended(rig, id, from);
  t.match(end, { status: 'cancelled', kept: [{ zoneId: patio!.id, reason: /changed while the announcement played/ }] });
  const [k, p] = await zones(rig);
  t.equal(k!.volume, 0.2, 'the kitchen is back');
  t.equal(p!.volume, 0.1, 'the patio keeps the newer change');
});

t.test(
  "zones play within their limit, the player's other rooms are muted meanwhile, and an idle player is chosen first",
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const busy = await rig.fifoPlayer('Busy', 1);
    const idle = await rig.fifoPlayer('Idle', 2);
    const [kitchen, patio, den] = await zones(rig);
    await api.post(`/api/players/${busy.id}/attach-zones`, { zoneIds: [kitchen!.id] });
    await api.post(`/api/players/${idle.id}/attach-zones`, { zoneIds: [den!.id] });
    await api.put(`/api/zones/${patio!.id}`, { maxVolume: 0.4 });
    await api.post(`/api/players/${busy.id}/play`, { uri: file(TRACKS.long) });
    const from = rig.events.length;
    const id = (await api.post('/api/announcements', { uri: CHIME, zoneIds: [patio!.id], volume: 0.9 })).body.id;
    const started = (await rig.next('announcement.started', (e) => e.payload.announcement.id === id, from)).payload
      .announcement;
    t.same(started.playerIds, [idle.id], 'the idle player announces; the busy one plays on');
    const during = await zones(rig);
    t.match(during[1], { volume: 0.4, playerId: idle.id, muted: false }, 'the patio plays at its limit');
    t.match(during[2], { muted: true, playerId: idle.id }, "the idle player's own room does not hear it");
    t.equal(
      (await api.get(`/api/players/${busy.id}/playback`)).body.state,
      'playing',
      'the busy player was never interrupted',
    );
    await ended(rig, id, from);
    const after = await zones(rig);
    t.match(after[1], { volume: 0, playerId: null, maxVolume: 0.4 }, 'the patio is back as it was');
    t.match(after[2], { muted: false, playerId: idle.id }, "the idle player's room is unmuted");
  },
);

t.test('operators announce only on their zones; viewers cannot; bad requests are refused', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const stream = await rig.fifoPlayer('Stream', 1);
  const [kitchen, patio] = await zones(rig);
  const operator = injectClient(
    rig.d.daemon,
    (await createUser(api, 'kitchen1', 'Operator', { playerIds: [stream.id], zoneIds: [kitchen!.id] })).apiKey,
  );
  const viewer = injectClient(
    rig.d.daemon,
    (await createUser(api, 'viewer1', 'Viewer', { playerIds: [], zoneIds: [kitchen!.id] })).apiKey,
  );
  const theirs = await operator.post('/api/announcements', { uri: CHIME, zoneIds: [patio!.id], volume: 0.5 });
  t.equal(theirs.status, 400, 'a zone outside its assignments does not exist for it');
  t.match(theirs.body.detail, new RegExp(`unknown zone ids: ${patio!.id}`));
  t.equal((await viewer.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 })).status, 403);
  const mine = await operator.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 });
  t.equal(mine.status, 202, 'its own zone, through the stream player assigned to it');
  t.same((await started(rig, mine.body.id)).playerIds, [stream.id]);
  t.match(await ended(rig, mine.body.id), { status: 'done' });
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['a volume above 1', { uri: CHIME, zoneIds: [kitchen!.id], volume: 1.5 }, 400, /volume/],
    ['no zones', { uri: CHIME, zoneIds: [], volume: 0.5 }, 400, /zoneIds/],
    [
      'a scheme the appliance does not play',
      { uri: 'ftp://example.invalid/x.mp3', zoneIds: [kitchen!.id], volume: 0.5 },
      400,
      /unsupported scheme/,
    ],
    [
      'a player that does not exist',
      { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5, playerId: '00000000-0000-4000-8000-000000000000' },
      400,
      /unknown player id/,
    ],
    [
      'a sound that is not in the music folder',
      { uri: 'file:chimes/not-there.flac', zoneIds: [kitchen!.id], volume: 0.5 },
      400,
      /not a file in the music folder/,
    ],
  ];
  for (const [what, body, status, detail] of cases) {
    const res = await api.post('/api/announcements', body);
    t.equal(res.status, status, what);
    t.match(res.body.detail, detail, what);
  }
});

t.test('without a stream player on their amplifier, zones cannot be announced on', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const [kitchen] = await zones(rig);
  const res = await rig.api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 });
  t.equal(res.status, 409);
  t.match(res.body.detail, /no stream player feeds these zones' amplifier/);
});

t.test(
  'announcements play one after another; the queue is capped per user; a waiting one can be cancelled',
  async (t) => {
    const limits = { ...defaultConfig().limits, announcementsPerUser: 2 };
    const rig = await startStreamDaemon(t, { music, config: { limits } });
    const { api } = rig;
    await rig.fifoPlayer('Stream', 1);
    const [kitchen] = await zones(rig);
    const from = rig.events.length;
    const body = { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 };
    const first = (await api.post('/api/announcements', body)).body.id;
    const second = (await api.post('/api/announcements', body)).body.id;
    const third = (await api.post('/api/announcements', body)).body.id;
    const full = await api.post('/api/announcements', body);
    t.equal(full.status, 429, 'a third waiting one is too many for one user');
    t.match(full.headers.get('retry-after'), /^\d+$/);
    t.same(
      (await api.get('/api/announcements')).body.map((a: { id: string }) => a.id),
      [first, second, third],
      'the one playing, then those waiting',
    );
    const cancelled = await api.del(`/api/announcements/${third}`);
    t.match(cancelled.body, { status: 'cancelled', detail: /before it played/ });
    t.match(await ended(rig, second, from), { status: 'done' });
    const order = rig.events
      .slice(from)
      .filter((e) => e.type === 'announcement.started' || e.type === 'announcement.ended')
      .map(
        (e) =>
          `${e.type.slice('announcement.'.length)} ${(e.payload as { announcement: { id: string } }).announcement.id}`,
      );
    t.same(
      order.filter((e) => e !== `ended ${third}`),
      [`started ${first}`, `ended ${first}`, `started ${second}`, `ended ${second}`],
      'each plays after the one before ended',
    );
    t.notOk(order.includes(`started ${third}`), 'the cancelled one never played');
    t.equal(
      (await api.del(`/api/announcements/${first}`)).status,
      409,
      'an announcement that ended cannot be cancelled',
    );
    t.match((await api.get(`/api/announcements/${first}`)).body, { status: 'done' }, 'it is still readable');
  },
);

t.test(
  'a sound removed after it was queued fails when its turn comes, with why, and everything is put back',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const player = await rig.fifoPlayer('Stream', 1);
    const [kitchen, patio] = await zones(rig);
    await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: [kitchen!.id] });
    await api.put(`/api/zones/${kitchen!.id}/volume`, { volume: 0.35 });
    const before = state((await zones(rig))[0]!);
    copyFileSync(path.join(music, 'chimes', 'door.flac'), path.join(music, 'chimes', 'gone.flac'));
    const from = rig.events.length;
    const first = (await api.post('/api/announcements', { uri: file(TRACKS.long), zoneIds: [patio!.id], volume: 0.3 }))
      .body.id;
    await started(rig, first, from);
    const queued = await api.post('/api/announcements', {
      uri: 'file:chimes/gone.flac',
      zoneIds: [kitchen!.id],
      volume: 0.8,
    });
    t.equal(queued.status, 202, 'it was there when asked for');
    unlinkSync(path.join(music, 'chimes', 'gone.flac'));
    await api.del(`/api/announcements/${first}`);
    t.match(await ended(rig, queued.body.id, from), {
      status: 'failed',
      detail: /gone\.flac could not play \(missing\)/,
    });
    t.same(state((await zones(rig))[0]!), before);
  },
);
