// Playback on the event stream, over a real socket: now-playing, positions, skips and engine changes reach the users
// assigned the player, library scans reach everyone, announcements reach those who see all of their zones, and each
// matches the document's event schema.
import t from 'tap';
import { createUser } from '../helpers/inject.js';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { OpenApiCheck } from '../helpers/openapi-check.js';
import { eventOf, openStream, type SseClient } from '../helpers/sse.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';

const music = musicFolder(t);
const file = (track: string) => `file:${track}`;

t.test('playback events follow assignments like every player event; every one matches the event schema', async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const mine = await rig.fifoPlayer('Mine', 1);
  mine.reader();
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const operator = await createUser(api, 'listener1', 'Operator', { playerIds: [mine.id], zoneIds: [zones[0]!.id] });
  const streams: SseClient[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));
  const open = async (key: string) => {
    const s = openStream(rig.d.base, '/api/stream/events', { 'X-API-Key': key });
    streams.push(s);
    await s.next((m) => m.retry !== undefined, 5000, 'the retry line');
    return s;
  };
  const admin = await open(rig.d.adminKey);
  const op = await open(operator.apiKey);
  // Made while the streams are open: its MPD coming up is an event too.
  const theirs = await rig.fifoPlayer('Theirs', 2);
  theirs.reader();
  const events = (s: SseClient) =>
    s.messages.map(eventOf).filter((e) => e !== undefined) as Array<{ type: string; payload: any }>;

  const list = await playlistOf(api, 'Both', [file('tones/gone.flac'), file(TRACKS.long)]);
  await api.post(`/api/players/${mine.id}/play`, { playlistId: list.id });
  await api.post(`/api/players/${theirs.id}/play`, { playlistId: list.id });
  await api.post('/api/library/rescan');
  const announced = (
    await api.post('/api/announcements', { uri: file(TRACKS.a), zoneIds: [zones[0]!.id, zones[1]!.id], volume: 0.4 })
  ).body;
  const endedFor = (s: SseClient) =>
    s.next(
      (m) => eventOf(m)?.type === 'announcement.ended' && eventOf(m)?.payload.announcement.id === announced.id,
      20_000,
      'the announcement to end',
    );
  await endedFor(admin);
  await admin.next(
    (m) => eventOf(m)?.type === 'player.position' && eventOf(m)?.payload.playerId === theirs.id,
    20_000,
    'a position of the other player',
  );
  await op.next(
    (m) => eventOf(m)?.type === 'player.position' && eventOf(m)?.payload.playerId === mine.id,
    20_000,
    'a position of its player',
  );
  await op.next(
    (m) => eventOf(m)?.type === 'library.scanChanged' && eventOf(m)?.payload.scanning === false,
    20_000,
    'the end of the rescan',
  );

  const seen = (s: SseClient, type: string, playerId: string) =>
    events(s).some((e) => e.type === type && e.payload.playerId === playerId);
  for (const type of ['player.playbackChanged', 'player.trackSkipped', 'player.position', 'player.engineChanged']) {
    t.ok(seen(admin, type, theirs.id), `the admin sees ${type} of any player`);
    if (type !== 'player.engineChanged') t.ok(seen(op, type, mine.id), `the operator sees ${type} of its player`);
    t.notOk(seen(op, type, theirs.id), `the operator never sees ${type} of another player`);
  }
  t.ok(
    events(op).some((e) => e.type === 'library.scanChanged'),
    'everyone sees library scans',
  );
  t.ok(
    events(admin).some((e) => e.type === 'announcement.started'),
    'the admin sees the announcement on two zones',
  );
  t.notOk(
    events(op).some((e) => e.type.startsWith('announcement.')),
    'the operator, who sees one of its two zones, does not',
  );
  const skip = events(op).find((e) => e.type === 'player.trackSkipped')!;
  t.match(skip.payload, { playerId: mine.id, trackId: list.trackIds[0], reason: 'missing' });

  const document = (await api.get('/api/openapi.json')).body;
  const check = new OpenApiCheck(document);
  const problems = events(admin).flatMap((event) => check.checkComponent('Event', event));
  t.same(problems, [], 'each event is what the document says an event is');
});
