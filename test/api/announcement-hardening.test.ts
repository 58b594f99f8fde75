// Announcements on the real MPD, against what an outside probe and a new owner found: an Operator's announcement
// plays only through stream players it may use (named or chosen, checked again when its turn comes); a stream
// player deleted or given another output while it announces ends the announcement at once, its zones are put back
// and the next one plays; a sound that is not in the music folder is refused when it is asked for.

import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  CHIME,
  chimeFolder,
  announcementEnded as ended,
  announcementStarted as started,
  zoneState as state,
  zonesOf as zones,
} from '../helpers/announcement-rig.js';
import { concurrently } from '../helpers/concurrency.js';
import { tempDir } from '../helpers/daemon.js';
import { createUser, injectClient } from '../helpers/inject.js';
import { radioStation, TRACKS } from '../helpers/mpd-rig.js';
import { type StreamRig, startStreamDaemon } from '../helpers/stream-rig.js';

concurrently(t, 3);
const music = chimeFolder(t);
const file = (track: string) => `file:${track}`;

async function operator(rig: StreamRig, username: string, assignments: { playerIds: string[]; zoneIds: string[] }) {
  const user = await createUser(rig.api, username, 'Operator', assignments);
  return { id: user.id, api: injectClient(rig.d.daemon, user.apiKey) };
}

t.test(
  'an Operator cannot name a stream player it is not assigned, nor be given one by default, and nothing changes',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const theirs = await rig.fifoPlayer('Den stream', 1);
    const [kitchen, patio] = await zones(rig);
    const other = await operator(rig, 'den1', { playerIds: [theirs.id], zoneIds: [patio!.id] });
    const me = await operator(rig, 'kitchen1', { playerIds: [], zoneIds: [kitchen!.id] });
    const before = (await zones(rig)).map(state);
    const from = rig.events.length;

    const named = await me.api.post('/api/announcements', {
      uri: CHIME,
      zoneIds: [kitchen!.id],
      volume: 0.5,
      playerId: theirs.id,
    });
    t.equal(named.status, 400, 'a player it may not see is an unknown id, as zones it may not see are');
    t.match(named.body, { detail: /unknown player id/, errors: { playerId: [/assigned to you/] } });
    const chosen = await me.api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 });
    t.equal(chosen.status, 409, 'no player it may use feeds its zone');
    t.match(chosen.body.detail, /no stream player assigned to you feeds these zones' amplifier/);
    t.notMatch(chosen.body.detail, theirs.id, 'the player it may not see is not named');

    t.same((await zones(rig)).map(state), before, 'no zone changed');
    t.same((await api.get('/api/announcements')).body, [], 'nothing was queued');
    t.notOk(
      rig.events.slice(from).some((e) => e.type === 'announcement.queued'),
      'no announcement event',
    );
    t.equal(
      (await other.api.post(`/api/players/${theirs.id}/play`, { uri: file(TRACKS.a) })).status,
      200,
      "the other Operator's transport answers",
    );
  },
);

t.test(
  "an Operator's announcement plays through the stream player assigned to it, never through another user's",
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const theirs = await rig.fifoPlayer('Idle stream', 1);
    const mine = await rig.fifoPlayer('Kitchen stream', 2);
    const [kitchen] = await zones(rig);
    const me = await operator(rig, 'kitchen1', { playerIds: [mine.id], zoneIds: [kitchen!.id] });
    await api.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [kitchen!.id] });
    // An idle player feeding no room is the one the daemon prefers: it must still not take another user's.
    await me.api.post(`/api/players/${mine.id}/play`, { uri: file(TRACKS.long) });

    const from = rig.events.length;
    const queued = await me.api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5 });
    t.equal(queued.status, 202);
    t.same((await started(rig, queued.body.id, from)).playerIds, [mine.id], 'its own player announces');
    t.equal(
      (await api.get(`/api/players/${theirs.id}/playback`)).body.announcementId,
      null,
      'the idle player is not taken',
    );
    t.match(await ended(rig, queued.body.id, from), { status: 'done' });
    await rig.until(mine.id, (p) => p.state === 'playing' && p.uri === file(TRACKS.long), 'its music again');
  },
);

t.test(
  'an Operator that loses its stream player before its announcement plays does not announce through it',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const busy = await rig.fifoPlayer('Patio stream', 1);
    const mine = await rig.fifoPlayer('Kitchen stream', 2);
    const [kitchen, patio] = await zones(rig);
    const me = await operator(rig, 'kitchen1', { playerIds: [mine.id], zoneIds: [kitchen!.id] });
    const from = rig.events.length;
    const first = (
      await api.post('/api/announcements', {
        uri: file(TRACKS.long),
        zoneIds: [patio!.id],
        volume: 0.3,
        playerId: busy.id,
      })
    ).body.id;
    await started(rig, first, from);
    const waiting = await me.api.post('/api/announcements', {
      uri: CHIME,
      zoneIds: [kitchen!.id],
      volume: 0.5,
      playerId: mine.id,
    });
    t.equal(waiting.status, 202, 'queued while it may use the player');
    t.equal(
      (await api.put(`/api/users/${me.id}/assignments`, { playerIds: [], zoneIds: [kitchen!.id] })).status,
      200,
      'the player is taken from it',
    );
    await api.del(`/api/announcements/${first}`);

    const end = await ended(rig, waiting.body.id, from);
    t.match(end, {
      status: 'failed',
      playerIds: [],
      skipped: [{ zoneId: kitchen!.id, reason: /no stream player assigned to you that runs/ }],
    });
    t.notOk(
      rig.events
        .slice(from)
        .some((e) => e.type === 'announcement.started' && e.payload.announcement.id === waiting.body.id),
      'it never played',
    );
  },
);

t.test(
  'a stream player deleted while it announces ends the announcement at once, its zones come back and the next one plays',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const doomed = await rig.fifoPlayer('Patio stream', 1);
    const other = await rig.fifoPlayer('Kitchen stream', 2);
    const [kitchen, patio, den] = await zones(rig);
    await api.post(`/api/players/${doomed.id}/attach-zones`, { zoneIds: [den!.id] });
    await api.put(`/api/zones/${den!.id}/volume`, { volume: 0.2 });
    await api.put(`/api/zones/${patio!.id}/volume`, { volume: 0.25 });
    await api.put(`/api/zones/${patio!.id}/power`, { power: false });
    const patioBefore = state((await zones(rig))[1]!);

    const from = rig.events.length;
    const first = (
      await api.post('/api/announcements', {
        uri: file(TRACKS.long),
        zoneIds: [patio!.id],
        volume: 0.6,
        playerId: doomed.id,
      })
    ).body.id;
    const next = (
      await api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5, playerId: other.id })
    ).body.id;
    await started(rig, first, from);
    t.match((await zones(rig))[1], { power: true, playerId: doomed.id }, 'the patio plays it');
    t.equal((await api.del(`/api/players/${doomed.id}`)).status, 204, 'the player is deleted');

    const end = await ended(rig, first, from);
    t.match(end, {
      status: 'failed',
      detail: /the stream player on amplifier "[^"]+" was deleted while the announcement played/,
    });
    t.same(end.kept, [], 'no zone counts as changed by someone else');
    const after = await zones(rig);
    t.same(state(after[1]!), patioBefore, 'the patio is as it was');
    t.same(
      state(after[2]!),
      { power: true, volume: 0.2, muted: true, playerId: null },
      "the player's own room is left as the deletion leaves it",
    );
    t.match(await started(rig, next, from), { playerIds: [other.id] }, 'the next announcement plays');
    t.match(await ended(rig, next, from), { status: 'done' });
  },
);

t.test(
  'a stream player given another output while it announces ends the announcement at once; its transport is free again',
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { api } = rig;
    const moved = await rig.fifoPlayer('Patio stream', 1);
    const other = await rig.fifoPlayer('Kitchen stream', 2);
    const [kitchen, patio] = await zones(rig);
    await api.put(`/api/zones/${patio!.id}/power`, { power: false });
    const patioBefore = state((await zones(rig))[1]!);
    const fifos = tempDir('azc-fifo-');
    t.teardown(() => rmSync(fifos, { recursive: true, force: true }));
    const fifo = path.join(fifos, 'elsewhere.pcm');
    execFileSync('mkfifo', ['-m', '600', fifo]);

    const from = rig.events.length;
    const first = (
      await api.post('/api/announcements', {
        uri: file(TRACKS.long),
        zoneIds: [patio!.id],
        volume: 0.6,
        playerId: moved.id,
      })
    ).body.id;
    const next = (
      await api.post('/api/announcements', { uri: CHIME, zoneIds: [kitchen!.id], volume: 0.5, playerId: other.id })
    ).body.id;
    await started(rig, first, from);
    t.equal(
      (await api.put(`/api/players/${moved.id}`, { output: { kind: 'fifo', path: fifo } })).status,
      200,
      'the player gets another output',
    );

    t.match(await ended(rig, first, from), {
      status: 'failed',
      detail: /was given another output while the announcement played/,
    });
    t.same(state((await zones(rig))[1]!), patioBefore, 'the patio is as it was');
    t.match(await ended(rig, next, from), { status: 'done' }, 'the next announcement played');
    await rig.until(
      moved.id,
      (p) => p.engine.state === 'up' && p.announcementId === null,
      'the player on its new output',
    );
    t.equal(
      (await api.post(`/api/players/${moved.id}/play`, { uri: file(TRACKS.a) })).status,
      200,
      'its transport answers',
    );
  },
);

t.test('a sound that is not in the music folder is refused, naming the field, and nothing is queued', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  await rig.fifoPlayer('Stream', 1);
  const [kitchen] = await zones(rig);
  const before = (await zones(rig)).map(state);
  const from = rig.events.length;
  for (const [what, uri] of [
    ['a mistyped file', 'file:chimes/dor.flac'],
    ['a folder', 'file:chimes'],
  ]) {
    const res = await api.post('/api/announcements', { uri, zoneIds: [kitchen!.id], volume: 0.5 });
    t.equal(res.status, 400, what);
    t.match(
      res.body,
      { detail: /is not a file in the music folder/, errors: { uri: [/pick one from the library/] } },
      what,
    );
  }
  t.same((await zones(rig)).map(state), before, 'no zone changed');
  t.same((await api.get('/api/announcements')).body, [], 'nothing was queued');
  t.notOk(
    rig.events.slice(from).some((e) => e.type === 'announcement.queued'),
    'no announcement event',
  );
});

t.test('a radio stream is still a sound an announcement may play', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Bell FM');
  await rig.fifoPlayer('Stream', 1);
  const [kitchen] = await zones(rig);
  const queued = await rig.api.post('/api/announcements', { uri: radio.url, zoneIds: [kitchen!.id], volume: 0.5 });
  t.equal(queued.status, 202);
  t.match(await ended(rig, queued.body.id), { status: 'done' });
});
