// The HTTP layer against an outside probe, over real loopback sockets: revocation of requests in flight, hostile
// JSON, ambiguous framing, pipelining, event-stream caps, key redaction in logs, and protective headers.

import net from 'node:net';
import type { Test } from 'tap';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { type Client, client, createUser } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openStream, type SseClient } from '../helpers/sse.js';
import { Changes, waitFor, within } from '../helpers/wait-for.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One keep-alive HTTP/1.1 connection driven byte by byte, reading the answers in the order they come. */
class RawConnection {
  private buffer = '';
  private readonly answers: RawResponse[] = [];
  private readonly changed = new Changes();
  closed = false;
  readonly whenClosed: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.parse();
      this.changed.notify();
    });
    socket.on('error', () => {
      // A reset is one way the server may end it: the test reads the close.
    });
    this.whenClosed = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.changed.notify();
        resolve();
      }),
    );
  }

  static open(t: Test, base: string): Promise<RawConnection> {
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
      t.teardown(() => socket.destroy());
    });
  }

  /** Resolves once the bytes are handed to the kernel: on loopback they are then waiting at the server. */
  write(text: string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(text, (err) => (err ? reject(err) : resolve())));
  }

  /** The next answer, or null if the server closed the connection first; bounded by the suite's time limit. */
  async next(): Promise<RawResponse | null> {
    await waitFor(() => this.answers.length > 0 || this.closed, undefined, {
      what: 'the next answer',
      changes: this.changed,
    });
    return this.answers.shift() ?? null;
  }

  /** Every answer until the server closes the connection (which it must, within the suite's time limit). */
  async all(): Promise<RawResponse[]> {
    await within(this.whenClosed, undefined, 'the server to close the connection');
    return this.answers.splice(0);
  }

  /** Splits complete answers off the buffer: a Content-Length body, a chunked body, or none (204, HEAD). */
  private parse(): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = this.buffer.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = this.buffer.slice(end + 4);
      let body = '';
      if (headers['content-length'] !== undefined) {
        const length = Number(headers['content-length']);
        if (rest.length < length) return;
        body = rest.slice(0, length);
        rest = rest.slice(length);
      } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        // uWS writes each chunk's closing CRLF in front of the next one.
        let offset = 0;
        for (;;) {
          if (rest.startsWith('\r\n', offset)) offset += 2;
          const crlf = rest.indexOf('\r\n', offset);
          if (crlf < 0) return;
          const size = parseInt(rest.slice(offset, crlf), 16);
          if (rest.length < crlf + 2 + size) return;
          body += rest.slice(crlf + 2, crlf + 2 + size);
          offset = crlf + 2 + size;
          if (size === 0) break;
        }
        rest = rest.slice(offset).replace(/^\r\n/, '');
      }
      this.buffer = rest;
      this.answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
    }
  }
}

/** The bytes of one request with a JSON body. */
function request(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Waits until the server has read everything sent before this call on any connection: bytes written on
 * loopback are at the server before this request leaves, and it answers from the same read loop.
 */
const serverHasRead = async (api: Client) => {
  const res = await api.get('/api/health', { key: '' });
  if (res.status !== 200) throw new Error(`health answered ${res.status}`);
};

/** The admin's client, a zone to change, and how to read its volume back. */
async function fixture(d: TestDaemon) {
  const admin = client(d.base, d.adminKey);
  const zones = (await admin.get('/api/zones')).body as Array<{ id: string }>;
  const volumeOf = async (id: string) => (await admin.get(`/api/zones/${id}`)).body.volume as number;
  return { admin, zone: zones[0]!, volumeOf };
}

t.test('revocation is final for requests already in flight', async (t) => {
  const d = await startTestDaemon(t);
  const { admin, zone, volumeOf } = await fixture(d);

  /** Sends the headers and all but the last byte of the body, and makes sure the server has read them. */
  const begin = async (key: string, method: string, path: string, body: string) => {
    const connection = await RawConnection.open(t, d.base);
    const bytes = request(method, path, { 'X-API-Key': key }, body);
    await connection.write(bytes.slice(0, -1));
    await serverHasRead(admin);
    return {
      finish: async () => {
        await connection.write(bytes.slice(-1));
        return connection.next();
      },
    };
  };
  const volumeBody = (volume: number) => JSON.stringify({ volume });

  t.test('an admin deleted while its POST /api/users was on its way creates nobody', async (t) => {
    const second = await createUser(admin, 'second-admin', 'Admin');
    const body = JSON.stringify({ username: 'made-by-ghost', password: 'ghost-password-1', role: 'Admin' });
    const inFlight = await begin(second.apiKey, 'POST', '/api/users', body);
    t.equal((await admin.del(`/api/users/${second.id}`)).status, 204);
    const answer = await inFlight.finish();
    t.equal(answer?.status, 401);
    t.match(answer?.headers['content-type'], /application\/problem\+json/);
    const users = (await admin.get('/api/users')).body as Array<{ username: string }>;
    t.notOk(
      users.some((u) => u.username === 'made-by-ghost'),
      'no user was created',
    );
  });

  t.test('an operator disabled mid-request cannot change a zone', async (t) => {
    const op = await createUser(admin, 'op-disabled', 'Operator', { playerIds: [], zoneIds: [zone.id] });
    const before = await volumeOf(zone.id);
    const inFlight = await begin(
      op.apiKey,
      'PUT',
      `/api/zones/${zone.id}/volume`,
      volumeBody(before === 0.61 ? 0.62 : 0.61),
    );
    t.equal((await admin.put(`/api/users/${op.id}`, { isEnabled: false })).status, 200);
    t.equal((await inFlight.finish())?.status, 401);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });

  t.test('an operator demoted to viewer mid-request gets 403 and changes nothing', async (t) => {
    const op = await createUser(admin, 'op-demoted', 'Operator', { playerIds: [], zoneIds: [zone.id] });
    const before = await volumeOf(zone.id);
    const inFlight = await begin(
      op.apiKey,
      'PUT',
      `/api/zones/${zone.id}/volume`,
      volumeBody(before === 0.63 ? 0.64 : 0.63),
    );
    t.equal((await admin.put(`/api/users/${op.id}`, { role: 'Viewer' })).status, 200);
    t.equal((await inFlight.finish())?.status, 403);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });

  t.test('a key revoked mid-request no longer changes anything', async (t) => {
    const op = await createUser(admin, 'op-revoked', 'Operator', { playerIds: [], zoneIds: [zone.id] });
    const before = await volumeOf(zone.id);
    const inFlight = await begin(
      op.apiKey,
      'PUT',
      `/api/zones/${zone.id}/volume`,
      volumeBody(before === 0.65 ? 0.66 : 0.65),
    );
    t.equal((await admin.del(`/api/users/${op.id}/api-key`)).status, 204);
    t.equal((await inFlight.finish())?.status, 401);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });

  t.test('an operator unassigned from a zone mid-request no longer sees it (404)', async (t) => {
    const op = await createUser(admin, 'op-unassigned', 'Operator', { playerIds: [], zoneIds: [zone.id] });
    const before = await volumeOf(zone.id);
    const inFlight = await begin(
      op.apiKey,
      'PUT',
      `/api/zones/${zone.id}/volume`,
      volumeBody(before === 0.67 ? 0.68 : 0.67),
    );
    t.equal((await admin.put(`/api/users/${op.id}/assignments`, { playerIds: [], zoneIds: [] })).status, 200);
    t.equal((await inFlight.finish())?.status, 404);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });
});

t.test('deeply nested JSON is a 400, never a 500', async (t) => {
  const d = await startTestDaemon(t);
  const { admin, zone, volumeOf } = await fixture(d);
  const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;

  t.test('an unauthenticated login with a username nested 10,000 arrays deep', async (t) => {
    const res = await admin.call('POST', '/api/auth/login', { key: '', raw: `{"username":${deep},"password":"x"}` });
    t.equal(res.status, 400);
    t.match(res.headers.get('content-type'), /application\/problem\+json/);
    t.match(res.body.detail, /nests arrays or objects more than 32 levels deep/);
    t.equal((await admin.get('/api/health', { key: '' })).status, 200, 'the daemon is still healthy');
  });

  t.test('an authenticated volume PUT with a deeply nested volume changes nothing', async (t) => {
    const before = await volumeOf(zone.id);
    const res = await admin.call('PUT', `/api/zones/${zone.id}/volume`, { raw: `{"volume":${deep}}` });
    t.equal(res.status, 400);
    t.match(res.headers.get('content-type'), /application\/problem\+json/);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
    t.equal((await admin.get('/api/health', { key: '' })).status, 200, 'the daemon is still healthy');
  });

  t.test('brackets inside strings do not count as nesting', async (t) => {
    const res = await admin.post('/api/playlists', { name: '['.repeat(100) });
    t.equal(res.status, 201);
    await admin.del(`/api/playlists/${res.body.id}`);
  });
});

t.test('ambiguous message framing is refused', async (t) => {
  const d = await startTestDaemon(t);
  const { zone, volumeOf } = await fixture(d);
  const put = (extraHeaders: string, body: string) =>
    `PUT /api/zones/${zone.id}/volume HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${d.adminKey}\r\nContent-Type: application/json\r\n${extraHeaders}\r\n${body}`;

  t.test('two Content-Length headers that disagree are a 400 and the connection closes', async (t) => {
    const before = await volumeOf(zone.id);
    const body = JSON.stringify({ volume: before === 0.31 ? 0.32 : 0.31 });
    const connection = await RawConnection.open(t, d.base);
    await connection.write(put(`Content-Length: ${body.length}\r\nContent-Length: 5\r\n`, body));
    const answers = await connection.all();
    t.equal(answers.length, 1);
    t.equal(answers[0]?.status, 400);
    t.match(answers[0]?.headers['content-type'], /application\/problem\+json/);
    t.match(JSON.parse(answers[0]?.body ?? '{}').detail, /several Content-Length headers/);
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });

  t.test('a request smuggled behind disagreeing lengths is never run', async (t) => {
    const before = await volumeOf(zone.id);
    const smuggled = JSON.stringify({ volume: before === 0.33 ? 0.34 : 0.33 });
    const body = '{"volume":0}';
    const connection = await RawConnection.open(t, d.base);
    await connection.write(
      put(`Content-Length: ${body.length}\r\nContent-Length: 400\r\n`, body) +
        put(`Content-Length: ${smuggled.length}\r\n`, smuggled),
    );
    const answers = await connection.all();
    t.notOk(
      answers.some((a) => a.status < 400),
      `no success: ${answers.map((a) => a.status).join(', ')}`,
    );
    t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
  });

  t.test(
    'a list in Content-Length, or Content-Length with Transfer-Encoding, closes the connection unanswered',
    async (t) => {
      const before = await volumeOf(zone.id);
      const body = JSON.stringify({ volume: before === 0.35 ? 0.36 : 0.35 });
      for (const headers of [
        `Content-Length: ${body.length}, 5\r\n`,
        `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`,
      ]) {
        const connection = await RawConnection.open(t, d.base);
        const framed = headers.includes('chunked') ? `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : body;
        await connection.write(put(headers, framed));
        const answers = await connection.all();
        t.notOk(
          answers.some((a) => a.status < 400),
          `no success for ${JSON.stringify(headers)}`,
        );
      }
      t.equal(await volumeOf(zone.id), before, 'the volume is unchanged');
    },
  );
});

t.test('pipelined requests', async (t) => {
  const d = await startTestDaemon(t);
  const { admin, zone, volumeOf } = await fixture(d);
  const headers = { 'X-API-Key': d.adminKey };

  t.test('a write pipelined with a read in one packet is applied only if its 204 arrives', async (t) => {
    const before = await volumeOf(zone.id);
    const volume = before === 0.41 ? 0.42 : 0.41;
    const connection = await RawConnection.open(t, d.base);
    await connection.write(
      request('PUT', `/api/zones/${zone.id}/volume`, headers, JSON.stringify({ volume })) +
        request('GET', `/api/zones/${zone.id}`, headers),
    );
    const first = await connection.next();
    if (first?.status === 204) {
      const second = await connection.next();
      t.equal(second?.status, 200, 'the read is answered after the write');
      t.equal(JSON.parse(second?.body ?? '{}').volume, volume, 'the read sees the write');
      t.equal(await volumeOf(zone.id), volume);
    } else {
      // This uWS build closes a connection on which a request arrives while an earlier answer is pending.
      t.equal(first, null, 'refused by closing the connection before any answer');
      await within(connection.whenClosed, undefined, 'the server to close the connection');
      t.equal(await volumeOf(zone.id), before, 'the unanswered write was not applied');
    }
  });

  t.test('a request sent while an earlier write is pending waits for its answer, in order', async (t) => {
    const store = d.daemon.services.store;
    const commitSoon = store.commitSoon;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Holds the write's commit until the read has reached the server.
    store.commitSoon = (fn) => commitSoon.call(store, fn).then(() => held);
    t.teardown(() => {
      store.commitSoon = commitSoon;
      release();
    });
    const volume = (await volumeOf(zone.id)) === 0.43 ? 0.44 : 0.43;
    const applied = new Promise<void>((resolve) => {
      const unsubscribe = d.daemon.services.bus.subscribe('test', (event) => {
        if (event.type === 'zone.volumeChanged' && event.payload.zoneId === zone.id) {
          unsubscribe();
          resolve();
        }
      });
    });
    const connection = await RawConnection.open(t, d.base);
    await connection.write(request('PUT', `/api/zones/${zone.id}/volume`, headers, JSON.stringify({ volume })));
    await applied;
    await connection.write(request('GET', `/api/zones/${zone.id}`, headers));
    await serverHasRead(admin);
    release();
    t.equal((await connection.next())?.status, 204, 'the write is answered first');
    const read = await connection.next();
    t.equal(read?.status, 200, 'then the read');
    t.equal(JSON.parse(read?.body ?? '{}').volume, volume);
    t.notOk(connection.closed, 'the connection stays open');
  });

  t.test('two pipelined reads are both answered, in order', async (t) => {
    const connection = await RawConnection.open(t, d.base);
    await connection.write(request('GET', `/api/zones/${zone.id}`, headers) + request('GET', '/api/health', {}));
    const first = await connection.next();
    const second = await connection.next();
    t.equal(first?.status, 200);
    t.equal(JSON.parse(first?.body ?? '{}').id, zone.id);
    t.equal(second?.status, 200);
    t.equal(JSON.parse(second?.body ?? '{}').status, 'ok');
  });
});

t.test('event streams are capped per user and in total', async (t) => {
  const limits = { ...defaultConfig().limits, streamsPerUser: 2, streamsTotal: 3 };
  const d = await startTestDaemon(t, { config: { limits } });
  const admin = client(d.base, d.adminKey);
  const viewer = await createUser(admin, 'stream-viewer', 'Viewer');
  const operator = await createUser(admin, 'stream-operator', 'Operator');
  const streams: SseClient[] = [];
  t.teardown(() => streams.forEach((s) => s.close()));
  const open = async (key: string) => {
    const s = openStream(d.base, '/api/stream/events', { 'X-API-Key': key });
    streams.push(s);
    const status = await s.status;
    if (status === 200) await s.next((m) => m.retry !== undefined, 5000, 'the retry line');
    return { s, status, headers: await s.headers };
  };
  const viewerStreams = [await open(viewer.apiKey), await open(viewer.apiKey)];
  t.same(
    viewerStreams.map((v) => v.status),
    [200, 200],
    'a viewer opens streamsPerUser streams',
  );

  t.test('one more stream of the same user is a 429 with Retry-After', async (t) => {
    const refused = await open(viewer.apiKey);
    t.equal(refused.status, 429);
    t.match(refused.headers['content-type'], /application\/problem\+json/);
    t.match(refused.headers['retry-after'], /^\d+$/);
    t.equal(d.daemon.services.streams.size, 2, 'nothing was registered');
  });

  t.test("an admin's stream and requests still work", async (t) => {
    t.equal((await open(d.adminKey)).status, 200);
    t.equal((await admin.get('/api/users')).status, 200);
  });

  t.test('beyond the total, any user gets a 503 with Retry-After', async (t) => {
    const refused = await open(operator.apiKey);
    t.equal(refused.status, 503);
    t.match(refused.headers['retry-after'], /^\d+$/);
  });

  t.test('closing a stream frees its slot', async (t) => {
    viewerStreams[0]!.s.close();
    // The server learns about the close asynchronously: wait for the count, bounded.
    await waitFor(() => d.daemon.services.streams.size === 2, undefined, { what: 'two open streams' });
    t.equal((await open(viewer.apiKey)).status, 200);
  });
});

t.test('an API key is never logged, whatever form its parameter name takes', async (t) => {
  const d = await startTestDaemon(t);
  const admin = client(d.base, d.adminKey);
  const viewer = await createUser(admin, 'logged-viewer', 'Viewer');
  const anon = client(d.base);
  const key = viewer.apiKey;
  const forms: Array<[string, string, number]> = [
    ['percent-encoded letter', `api%4Bey=${key}`, 200],
    ['lower-case escape', `api%4bey=${key}`, 200],
    ['every letter escaped', `${[...'apiKey'].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}=${key}`, 200],
    ['repeated parameter', `apiKey=${key}&apiKey=${key}`, 200],
    ['another letter case', `APIKEY=${key}&other=1`, 401],
    ['a plus in the name', `api+Key=${key}`, 401],
    ['an escaped equals sign', `apiKey%3D${key}`, 401],
  ];
  for (const [label, query, status] of forms) {
    t.test(label, async (t) => {
      const from = d.logs.length;
      const res = await anon.get(`/api/users/me?${query}`);
      t.equal(res.status, status, 'authenticates as URLSearchParams reads the name');
      t.notOk(res.text.includes(key), 'the answer does not carry the key');
      const lines = d.logs.slice(from);
      t.ok(
        lines.some((l) => l.includes('/api/users/me?')),
        'the request was logged',
      );
      t.notOk(
        lines.some((l) => l.includes(key)),
        'no log line carries the key',
      );
    });
  }

  t.test('a problem instance never carries the key', async (t) => {
    const res = await anon.get(`/api/nothing-here?api%4Bey=${key}`);
    t.equal(res.status, 404);
    t.equal(res.body.instance, '/api/nothing-here');
    t.notOk(res.text.includes(key));
  });
});

t.test('protective response headers', async (t) => {
  const d = await startTestDaemon(t);
  const admin = client(d.base, d.adminKey);
  const anon = client(d.base);

  t.test('every API answer says nosniff: JSON, problem+json, the event stream and the dashboard', async (t) => {
    t.equal((await admin.get('/api/users/me')).headers.get('x-content-type-options'), 'nosniff');
    t.equal((await admin.get('/api/nothing-here')).headers.get('x-content-type-options'), 'nosniff');
    const s = openStream(d.base, '/api/stream/events', { 'X-API-Key': d.adminKey });
    t.teardown(() => s.close());
    t.equal((await s.headers)['x-content-type-options'], 'nosniff');
    s.close();
    const page = await anon.get('/');
    t.equal(page.status, 200);
    t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  });

  t.test('answers that carry a secret are not stored by caches', async (t) => {
    const login = await anon.post('/api/auth/login', { username: 'admin', password: d.adminPassword });
    t.equal(login.status, 200);
    t.equal(login.headers.get('cache-control'), 'no-store', 'login (session token)');
    const created = await admin.post('/api/users', {
      username: 'cached-user',
      password: 'cached-password-1',
      role: 'Viewer',
    });
    t.equal(created.status, 201);
    t.equal(created.headers.get('cache-control'), 'no-store', 'POST /api/users (full API key)');
    const read = await admin.get(`/api/users/${created.body.id}/api-key`);
    t.equal(read.status, 200);
    t.equal(read.headers.get('cache-control'), 'no-store', 'GET api-key');
    const regenerated = await admin.post(`/api/users/${created.body.id}/api-key`);
    t.equal(regenerated.status, 200);
    t.equal(regenerated.headers.get('cache-control'), 'no-store', 'POST api-key');
    t.equal((await admin.get('/api/zones')).headers.get('cache-control'), null, 'ordinary reads are left alone');
  });

  t.test('HEAD on the event stream answers with its headers only and opens no stream', async (t) => {
    const opened = d.daemon.services.streams.stats.opened;
    const connection = await RawConnection.open(t, d.base);
    // A pipelined read right behind it: it is only answered if the HEAD answer ended without a body.
    await connection.write(
      request('HEAD', '/api/stream/events', { 'X-API-Key': d.adminKey }) + request('GET', '/api/health', {}),
    );
    const head = await connection.next();
    t.equal(head?.status, 200);
    t.match(head?.headers['content-type'], /text\/event-stream/);
    t.equal(head?.headers['x-content-type-options'], 'nosniff');
    t.equal(head?.body, '');
    const next = await connection.next();
    t.equal(next?.status, 200, 'the next answer follows the headers directly');
    t.equal(JSON.parse(next?.body ?? '{}').status, 'ok');
    t.equal(d.daemon.services.streams.stats.opened, opened, 'no stream was registered');
  });
});
