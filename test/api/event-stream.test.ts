// The event stream over real loopback sockets: framing, credentials, visibility, revocation, replay, backpressure.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { eventOf, isEvent, openStream, type SseClient } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait-for.js';

const sse = { ...defaultConfig().sse, pingIntervalMs: 200, replayEvents: 64, maxBufferedBytes: 256 * 1024 };
// One admin opens 200 streams at once below (a leak check), past the default per-user cap.
const limits = { ...defaultConfig().limits, streamsPerUser: 256 };
/** The event's number within the daemon's run (`<run>-<seq>`). */
const seqOf = (id: string) => Number(id.split('-')[1]);

t.test('event stream', async (t) => {
  const d = await startTestDaemon(t, { config: { sse, limits } });
  const admin = client(d.base, d.adminKey);
  const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
  const mine = (await admin.post('/api/players', { name: 'Mine', input: { channel: 1 } })).body;
  const theirs = (await admin.post('/api/players', { name: 'Theirs', input: { channel: 2 } })).body;
  const op = await createUser(admin, 'stream-op', 'Operator', { playerIds: [mine.id], zoneIds: [zones[0]!.id] });
  const streams: SseClient[] = [];
  const open = (path: string, headers: Record<string, string> = {}) => {
    const s = openStream(d.base, path, headers);
    streams.push(s);
    return s;
  };
  /** Opens a stream and waits until the server has registered it (its first line arrived). */
  const ready = async (path: string, headers: Record<string, string> = {}) => {
    const s = open(path, headers);
    await s.next((m) => m.retry !== undefined, 5000, 'the retry line');
    return s;
  };
  t.teardown(() => streams.forEach((s) => s.close()));
  const marker = async (s: SseClient) => {
    // A playlist event everyone may see: once it arrives, every earlier event has arrived too.
    const pl = (await admin.post('/api/playlists', { name: 'marker' })).body;
    await s.next(
      isEvent('playlist.changed', (p) => p.playlistId === pl.id),
      5000,
      'the marker event',
    );
  };

  t.test('the stream starts with retry, then id and data lines without event lines', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': d.adminKey });
    t.equal(await s.status, 200);
    t.match((await s.headers)['content-type'], /text\/event-stream/);
    t.equal(s.messages[0]!.retry, '2000', 'retry comes first');
    await admin.put(`/api/players/${mine.id}/volume`, { volume: 0.55 });
    const m = await s.next(isEvent('player.volumeChanged'), 5000, 'player.volumeChanged');
    t.match(m.id, /^\d+-\d+$/, "the id is the run and the event's number in it");
    t.equal(m.event, undefined, 'no event: line');
    t.same(eventOf(m), { type: 'player.volumeChanged', payload: { playerId: mine.id, volume: 0.55 } });
    s.close();
  });

  t.test('all three credential forms open a stream; none or a bad one is 401', async (t) => {
    const session = (await admin.post('/api/auth/login', { username: 'admin', password: d.adminPassword })).body.token;
    for (const [label, path, headers] of [
      ['X-API-Key', '/api/stream/events', { 'X-API-Key': d.adminKey }],
      ['Bearer key', '/api/stream/events', { Authorization: `Bearer ${d.adminKey}` }],
      ['Bearer session', '/api/stream/events', { Authorization: `Bearer ${session}` }],
      ['?apiKey=', `/api/stream/events?apiKey=${encodeURIComponent(d.adminKey)}`, {}],
    ] as const) {
      const s = open(path, headers);
      t.equal(await s.status, 200, label);
      s.close();
    }
    const none = open('/api/stream/events');
    t.equal(await none.status, 401);
    const bad = open('/api/stream/events?apiKey=svc_0000');
    t.equal(await bad.status, 401);
  });

  t.test('an operator sees events only for its assigned players and zones, plus library events', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    await admin.put(`/api/players/${theirs.id}/volume`, { volume: 0.11 });
    await admin.put(`/api/zones/${zones[3]!.id}/mute`, { muted: true });
    await admin.put(`/api/players/${mine.id}/volume`, { volume: 0.12 });
    await admin.put(`/api/zones/${zones[0]!.id}/power`, { power: true });
    const other = await createUser(admin, 'someone-else', 'Viewer');
    await admin.put(`/api/users/${other.id}`, { role: 'Operator' });
    await marker(s);
    const types = s.messages
      .map(eventOf)
      .filter(Boolean)
      .map((e) => `${e!.type}:${JSON.stringify(e!.payload)}`);
    t.ok(
      types.some((x) => x.startsWith('player.volumeChanged') && x.includes(mine.id)),
      'sees its player',
    );
    t.ok(
      types.some((x) => x.startsWith('zone.powerChanged') && x.includes(zones[0]!.id)),
      'sees its zone',
    );
    t.notOk(
      types.some((x) => x.includes(theirs.id)),
      'does not see the other player',
    );
    t.notOk(
      types.some((x) => x.includes(zones[3]!.id)),
      'does not see the other zone',
    );
    t.notOk(
      types.some((x) => x.startsWith('user.changed')),
      'does not see changes to other users',
    );
    s.close();
  });

  t.test('player.zonesChanged shows a non-admin only the zones it may see', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    await admin.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[0]!.id, zones[4]!.id] });
    const m = await s.next(isEvent('player.zonesChanged', (p) => p.playerId === mine.id));
    t.same(eventOf(m)!.payload.zoneIds, [zones[0]!.id]);
    s.close();
  });

  t.test('user.changed goes to admins only, even when it is about the non-admin itself', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    const a = await ready('/api/stream/events', { 'X-API-Key': d.adminKey });
    await admin.put(`/api/users/${op.id}`, { role: 'Operator' });
    await a.next(
      isEvent('user.changed', (p) => p.userId === op.id),
      5000,
      'user.changed on the admin stream',
    );
    await marker(s);
    t.notOk(s.messages.some(isEvent('user.changed')), 'the operator got none');
    t.notOk(s.messages.some(isEvent('stream.reset')), 'an update that changes nothing it may see sends no reset');
    s.close();
    a.close();
  });

  t.test('created and renamed players and zones show a non-admin only ids it may see', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    // mine has zones[0] (visible) and zones[4] (not) attached; zones[0] is visible, theirs is not.
    await admin.put(`/api/players/${mine.id}`, { name: 'Mine renamed' });
    const p = await s.next(
      isEvent('player.updated', (x) => x.player.id === mine.id),
      5000,
      'player.updated',
    );
    t.same(eventOf(p)!.payload.player.zoneIds, [zones[0]!.id]);
    await admin.post(`/api/players/${theirs.id}/attach-zones`, { zoneIds: [zones[0]!.id] });
    await admin.put(`/api/zones/${zones[0]!.id}`, { name: 'Kitchen' });
    const z = await s.next(
      isEvent('zone.updated', (x) => x.zone.id === zones[0]!.id),
      5000,
      'zone.updated',
    );
    t.equal(eventOf(z)!.payload.zone.playerId, null, 'the owner it may not see is hidden');
    await admin.post(`/api/players/${mine.id}/attach-zones`, { zoneIds: [zones[0]!.id] });
    s.close();
  });

  t.test('an assignment change applies to an open stream at once', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    await admin.put(`/api/users/${op.id}/assignments`, { playerIds: [mine.id, theirs.id], zoneIds: [zones[0]!.id] });
    const reset = await s.next((m) => eventOf(m)?.type === 'stream.reset', 5000, 'stream.reset after the change');
    t.match(eventOf(reset)!.payload.reason, /assignments changed/, 'the client is told to refetch');
    await admin.put(`/api/players/${theirs.id}/volume`, { volume: 0.33 });
    const m = await s.next(
      isEvent('player.volumeChanged', (p) => p.playerId === theirs.id),
      5000,
      'the newly assigned player',
    );
    t.equal(eventOf(m)!.payload.volume, 0.33);
    await admin.put(`/api/users/${op.id}/assignments`, { playerIds: [mine.id], zoneIds: [zones[0]!.id] });
    await admin.put(`/api/players/${theirs.id}/volume`, { volume: 0.34 });
    await marker(s);
    t.notOk(s.messages.some(isEvent('player.volumeChanged', (p) => p.volume === 0.34)), 'unassigned again: not sent');
    s.close();
  });

  t.test('events from the amplifier side flow through the same stream', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': d.adminKey });
    (d.driver as SimulatedDriver).simulateKeypad(1, { volume: 30 / 38 });
    const m = await s.next(
      isEvent('zone.volumeChanged', (p) => p.zoneId === zones[0]!.id),
      5000,
      'keypad volume',
    );
    t.equal(Math.round(eventOf(m)!.payload.volume * 38), 30);
    s.close();
  });

  for (const [label, revoke] of [
    ['disabled', (id: string) => admin.put(`/api/users/${id}`, { isEnabled: false })],
    ['deleted', (id: string) => admin.del(`/api/users/${id}`)],
    ['whose key is regenerated', (id: string) => admin.post(`/api/users/${id}/api-key`)],
    ['whose key is revoked', (id: string) => admin.del(`/api/users/${id}/api-key`)],
  ] as const) {
    t.test(`the stream of a user ${label} is closed`, async (t) => {
      const u = await createUser(
        admin,
        `victim-${label.split(' ')[0]}-${Math.random().toString(36).slice(2, 6)}`,
        'Viewer',
      );
      const s = await ready('/api/stream/events', { 'X-API-Key': u.apiKey });
      await revoke(u.id);
      await s.closed;
      t.ok(s.isClosed());
    });
  }

  t.test('logout closes the streams of that session only', async (t) => {
    const a = (await admin.post('/api/auth/login', { username: 'admin', password: d.adminPassword })).body.token;
    const b = (await admin.post('/api/auth/login', { username: 'admin', password: d.adminPassword })).body.token;
    const sa = await ready('/api/stream/events', { Authorization: `Bearer ${a}` });
    const sb = await ready('/api/stream/events', { Authorization: `Bearer ${b}` });
    t.equal((await admin.post('/api/auth/logout', undefined, { token: a })).status, 204);
    await sa.closed;
    await marker(sb);
    t.notOk(sb.isClosed(), 'the other session keeps streaming');
    sb.close();
  });

  t.test('Last-Event-ID replays missed events, filtered like live ones', async (t) => {
    const s = await ready('/api/stream/events', { 'X-API-Key': op.apiKey });
    await marker(s);
    const lastId = s.messages.filter((m) => m.id).at(-1)!.id!;
    s.close();
    await admin.put(`/api/players/${mine.id}/volume`, { volume: 0.61 });
    await admin.put(`/api/players/${theirs.id}/volume`, { volume: 0.62 });
    for (const [label, path, headers] of [
      ['header', '/api/stream/events', { 'X-API-Key': op.apiKey, 'Last-Event-ID': lastId }],
      ['query', `/api/stream/events?lastEventId=${lastId}`, { 'X-API-Key': op.apiKey }],
    ] as const) {
      const r = open(path, headers);
      const m = await r.next(
        isEvent('player.volumeChanged', (p) => p.playerId === mine.id),
        5000,
        `replay via ${label}`,
      );
      t.ok(seqOf(m.id!) > seqOf(lastId), `${label}: replayed with a later id`);
      await marker(r);
      t.notOk(r.messages.some(isEvent('player.volumeChanged', (p) => p.playerId === theirs.id)), `${label}: filtered`);
      r.close();
    }
  });

  t.test('a resume point older than the ring gets stream.reset first', async (t) => {
    for (let i = 0; i < sse.replayEvents + 10; i++)
      await admin.put(`/api/players/${mine.id}/volume`, { volume: (i % 10) / 10 });
    const r = open('/api/stream/events', {
      'X-API-Key': d.adminKey,
      'Last-Event-ID': `${d.daemon.services.bus.run}-1`,
    });
    const first = await r.next((m) => m.data !== undefined, 5000, 'the first event');
    t.equal(eventOf(first)!.type, 'stream.reset');
    r.close();
  });

  t.test('a heartbeat comment arrives while nothing happens', async (t) => {
    const s = open('/api/stream/events', { 'X-API-Key': d.adminKey });
    const ping = await s.next((m) => m.comment === 'ping', 5000, ': ping');
    t.equal(ping.data, undefined);
    s.close();
  });

  t.test('a reader that stops reading is cut off while a healthy one keeps receiving', async (t) => {
    const stalled = await ready('/api/stream/events', { 'X-API-Key': d.adminKey });
    const healthy = await ready('/api/stream/events', { 'X-API-Key': d.adminKey });
    stalled.pause();
    const cutBefore = d.daemon.services.streams.stats.cutOff;
    const filePath = 'x'.repeat(4000);
    let last = '';
    // Bounded: at most 20,000 events of ~4 KB (80 MB) before the test gives up.
    for (let i = 0; i < 20_000 && d.daemon.services.streams.stats.cutOff === cutBefore; i++) {
      last = d.daemon.services.bus.publish({ type: 'playlist.exported', payload: { playlistId: 'p', filePath } }).id;
      if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    t.equal(d.daemon.services.streams.stats.cutOff, cutBefore + 1, 'the stalled reader was cut off');
    stalled.resume();
    await stalled.closed;
    const got = await healthy.next((m) => m.id === last, 10_000, 'the last event on the healthy stream');
    t.ok(got, 'the healthy reader received everything');
    healthy.close();
  });

  t.test('many streams opening and closing leave nothing behind', async (t) => {
    streams.forEach((s) => s.close());
    const openedBefore = d.daemon.services.streams.stats.opened;
    // Other services subscribe too (the sleep timers): count what the streams add.
    const subscribersBefore = d.daemon.services.bus.subscriberCount;
    const many = Array.from({ length: 200 }, () => open('/api/stream/events', { 'X-API-Key': d.adminKey }));
    await Promise.all(many.map((s) => s.next((m) => m.retry !== undefined)));
    t.equal(d.daemon.services.streams.stats.opened - openedBefore, 200, 'all 200 were registered');
    t.equal(d.daemon.services.bus.subscriberCount, subscribersBefore, '200 open streams share one bus subscription');
    many.forEach((s) => s.close());
    // The server learns about each close asynchronously: wait for the count, bounded.
    await waitFor(() => d.daemon.services.streams.size === 0, undefined, {
      what: 'every closed stream to be forgotten',
    });
    t.equal(
      d.daemon.services.bus.subscriberCount,
      subscribersBefore,
      'closing them left the bus subscriptions as they were',
    );
  });
});
