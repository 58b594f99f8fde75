// A stream URL is fetched by the appliance, so it may not make stream players a LAN scanner: a stream on this
// appliance or on an unusual port is refused before MPD fetches it (unless playback.streamHosts names it), and a
// non-admin's skip of a stream says only that it cannot be reached, whether the port was closed, the server answered
// an HTTP error or something that is not audio. Real MPD, loopback servers.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { createUser } from '../helpers/inject.js';
import { musicFolder, radioStation, TRACKS } from '../helpers/mpd-rig.js';
import { eventOf, openStream, type SseClient } from '../helpers/sse.js';
import { playlistOf, startStreamDaemon } from '../helpers/stream-rig.js';
import { waitFor, within } from '../helpers/wait-for.js';

const music = musicFolder(t);

/** A player that plays into nothing, and an Operator assigned it. */
async function playerAndOperator(rig: Awaited<ReturnType<typeof startStreamDaemon>>) {
  const created = await rig.api.post('/api/players', {
    name: 'Kitchen stream',
    input: { channel: 1 },
    output: { kind: 'null' },
  });
  if (created.status !== 201) throw new Error(`creating the player failed: ${created.status} ${created.text}`);
  const id = created.body.id as string;
  await rig.until(id, (playback) => playback.engine.state === 'up', "the player's MPD to be up");
  const zones = (await rig.api.get('/api/zones')).body as Array<{ id: string }>;
  const operator = await createUser(rig.api, 'kitchen', 'Operator', { playerIds: [id], zoneIds: [zones[0]!.id] });
  return { id, operator };
}

/** An HTTP server on loopback answering every request with `status` and `body`. */
async function webServer(
  t: { teardown(fn: () => unknown): void },
  status: number,
  type: string,
  body: string,
): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  });
  await within(
    new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    undefined,
    'a web server to listen',
  );
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
}

t.test(
  'a stream on this appliance or an unusual port is refused before MPD fetches it, naming the allow-list',
  async (t) => {
    const radio = await radioStation(t, path.join(music, TRACKS.b), 'Loop FM');
    const rig = await startStreamDaemon(t, { music, playback: { streamHosts: [] } });
    const { id, operator } = await playerAndOperator(rig);
    const play = (uri: string) => rig.api.post(`/api/players/${id}/play`, { uri }, { key: operator.apiKey });

    const local = await play(radio.url);
    t.equal(local.status, 400);
    t.match(local.body.errors?.uri?.[0], /is on this appliance \(127\.0\.0\.1\): .*playback\.streamHosts/);
    const port = await play('http://192.0.2.7:22/');
    t.equal(port.status, 400);
    t.match(port.body.errors?.uri?.[0], /is on port 22: streams play from ports 80, 443 and 8000–8999/);
    t.equal(radio.listeners(), 0, 'the station was never fetched');
    t.match((await rig.api.get(`/api/players/${id}/playback`)).body, { state: 'stopped', uri: null }, 'nothing plays');
  },
);

t.test('a host playback.streamHosts names plays on any port', async (t) => {
  const radio = await radioStation(t, path.join(music, TRACKS.b), 'Loop FM');
  const rig = await startStreamDaemon(t, { music, playback: { streamHosts: [new URL(radio.url).host] } });
  const { id, operator } = await playerAndOperator(rig);
  t.equal((await rig.api.post(`/api/players/${id}/play`, { uri: radio.url }, { key: operator.apiKey })).status, 200);
  await waitFor(() => radio.listeners() > 0, undefined, { what: 'MPD to fetch the listed station' });
  t.pass('the listed station is fetched');
});

t.test("an operator's skipped streams all read 'cannot be reached'; the admin keeps MPD's words", async (t) => {
  const rig = await startStreamDaemon(t, { music });
  const { id, operator } = await playerAndOperator(rig);
  const closed = 'http://127.0.0.1:1/closed.ogg';
  const missing = await webServer(t, 404, 'text/plain', 'not here');
  const page = await webServer(t, 200, 'text/html', '<html><body>router admin</body></html>');
  const uris = [closed, missing, page];
  const list = await playlistOf(rig.api, 'Probe', [...uris, `file:${TRACKS.long}`]);

  const streams: SseClient[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));
  const open = async (key: string) => {
    const s = openStream(rig.d.base, '/api/stream/events', { 'X-API-Key': key });
    streams.push(s);
    await s.next((m) => m.retry !== undefined, undefined, 'the retry line');
    return s;
  };
  const admin = await open(rig.d.adminKey);
  const op = await open(operator.apiKey);
  t.equal(
    (await rig.api.post(`/api/players/${id}/play`, { playlistId: list.id }, { key: operator.apiKey })).status,
    200,
  );

  const skipOf = (s: SseClient, uri: string) =>
    s
      .next(
        (m) => eventOf(m)?.type === 'player.trackSkipped' && eventOf(m)?.payload.uri === uri,
        undefined,
        `the skip of ${uri}`,
      )
      .then((m) => eventOf(m)!.payload);
  for (const uri of uris) {
    const seen = await skipOf(op, uri);
    t.same(
      { reason: seen.reason, detail: seen.detail },
      { reason: 'unreachable', detail: `${uri} cannot be reached` },
      `the operator: ${uri}`,
    );
  }
  const details = await Promise.all(uris.map((uri) => skipOf(admin, uri)));
  t.ok(
    details.every((skip) => !/cannot be reached$/.test(skip.detail)),
    "the admin's details are MPD's words",
  );
  t.equal(
    new Set(details.map((skip) => skip.detail.replace(/127\.0\.0\.1:\d+\/\w+(\.ogg)?/g, ''))).size,
    3,
    'which tell the three apart',
  );
});

t.test(
  "an operator's announcement of a stream that fails says only that it cannot be reached; the admin keeps MPD's words",
  async (t) => {
    const rig = await startStreamDaemon(t, { music });
    const { operator } = await playerAndOperator(rig);
    const page = await webServer(t, 200, 'text/html', '<html><body>router admin</body></html>');
    const zones = (await rig.api.get('/api/zones')).body as Array<{ id: string }>;
    const asked = await rig.api.post(
      '/api/announcements',
      { uri: page, zoneIds: [zones[0]!.id], volume: 0.3 },
      { key: operator.apiKey },
    );
    t.equal(asked.status, 202, asked.text);
    const id = asked.body.id as string;
    const ended = (key: string) =>
      waitFor(
        async () => {
          const view = (await rig.api.get(`/api/announcements/${id}`, { key })).body;
          return view.status === 'failed' ? view : undefined;
        },
        undefined,
        { what: 'the announcement to fail' },
      );
    t.equal((await ended(operator.apiKey)).detail, `${page} cannot be reached`, 'the operator');
    t.match(
      (await ended(rig.d.adminKey)).detail,
      new RegExp(`^${page.replace(/[./:]/g, '\\$&')} could not play \\(`),
      'the admin',
    );
  },
);
