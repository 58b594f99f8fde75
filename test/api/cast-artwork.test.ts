// A cast's cover art over a real socket: GET /api/players/{id}/artwork serves the image of the cast holding a stream
// player's output, with its type, Cache-Control and an ETag (304 on If-None-Match), 404 without one, and only to a
// caller who may see the player; the playback's artwork field names it with a version. The daemon runs the real MPD
// and its own casting runtime, given a stand-in AirPlay receiver (test/helpers/cover-receiver.ts: a shell script that
// says it plays and sends a cover as shairport-sync's metadata pipe does) through compose's castingOptions: no
// receiver in Debian sends cover art without a sender this test cannot run.
import t from 'tap';
import { createUser } from '../helpers/client.js';
import { COVER, coverReceiver } from '../helpers/cover-receiver.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';

t.test("a cast's cover art through the API", async (t) => {
  const rig = await startStreamDaemon(t, { castingOptions: { kinds: { airplay: coverReceiver } } });
  const { api, d } = rig;
  const kitchen = await rig.fifoPlayer('Kitchen', 1);
  kitchen.reader();
  const other = await rig.fifoPlayer('Garden', 2);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  const assigned = await createUser(api, 'kitchen-viewer', 'Viewer', { playerIds: [kitchen.id], zoneIds: [] });
  const elsewhere = await createUser(api, 'garden-viewer', 'Viewer', {
    playerIds: [other.id],
    zoneIds: [zones[0]!.id],
  });
  const artwork = `/api/players/${kitchen.id}/artwork`;
  /** GET over the socket, as `key`. */
  const get = (path: string, key = d.adminKey, headers: Record<string, string> = {}) =>
    fetch(`${d.base}${path}`, { headers: { 'x-api-key': key, ...headers } });

  await t.test('without a cast there is no cover: 404 problem-details, and the playback names none', async (t) => {
    const res = await get(artwork);
    t.equal(res.status, 404);
    t.equal(res.headers.get('content-type'), 'application/problem+json');
    t.match(await res.json(), { detail: /shows no cover art/ });
    t.equal((await api.get(`/api/players/${kitchen.id}/playback`)).body.artwork, null);
  });

  const from = rig.events.length;
  t.equal((await api.put(`/api/players/${kitchen.id}/receivers/airplay`, { enabled: true })).status, 200);
  const shown = (
    await rig.next(
      'player.playbackChanged',
      (e) => e.payload.playerId === kitchen.id && e.payload.playback.artwork !== null,
      from,
    )
  ).payload.playback;

  await t.test("the cast's playback names the cover's path with a version", async (t) => {
    t.match(shown, { source: 'airplay', state: 'playing' });
    t.match(shown.artwork, new RegExp(`^${artwork}\\?v=[\\w-]+$`));
  });

  await t.test('the cover is served as the receiver gave it, with its type, Cache-Control and ETag', async (t) => {
    const res = await get(shown.artwork!);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'image/jpeg');
    t.equal(res.headers.get('cache-control'), 'private, no-cache');
    t.ok(Buffer.from(await res.arrayBuffer()).equals(COVER), 'the same bytes');
    t.equal(res.headers.get('etag'), `"${new URL(shown.artwork!, d.base).searchParams.get('v')}"`, 'its version');
  });

  await t.test('an If-None-Match naming its ETag is answered 304 without a body', async (t) => {
    const etag = (await get(artwork)).headers.get('etag')!;
    const res = await get(artwork, d.adminKey, { 'if-none-match': `"other", ${etag}` });
    t.equal(res.status, 304);
    t.equal(res.headers.get('etag'), etag);
    t.equal(await res.text(), '');
    t.equal((await get(artwork, d.adminKey, { 'if-none-match': '"other"' })).status, 200, 'another tag gets it');
  });

  await t.test("a Viewer assigned to the player gets the cover; one who is not gets the player's 404", async (t) => {
    t.equal((await get(artwork, assigned.apiKey)).status, 200);
    const refused = await get(artwork, elsewhere.apiKey);
    t.equal(refused.status, 404);
    t.notOk(Buffer.from(await refused.arrayBuffer()).includes(COVER.subarray(4, 64)), 'none of the image');
  });

  await t.test('once the receiver is switched off the cover is gone', async (t) => {
    const off = rig.events.length;
    t.equal((await api.put(`/api/players/${kitchen.id}/receivers/airplay`, { enabled: false })).status, 200);
    await rig.next(
      'player.playbackChanged',
      (e) => e.payload.playerId === kitchen.id && e.payload.playback.artwork === null,
      off,
    );
    t.equal((await get(artwork)).status, 404);
  });
});
