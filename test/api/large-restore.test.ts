// Restores of large and of the largest documents: the body is read and the configuration written in slices, so
// the daemon answers others meanwhile; and a backup of the largest configuration the limits allow restores.

import { appendFileSync, createReadStream, createWriteStream, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { restoreBodyBytes } from '../../daemon/domain/backup/backup-format.js';
import { fillPlaylists } from '../helpers/big-state.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { injectClient } from '../helpers/inject.js';
import { within } from '../helpers/wait-for.js';

/** POSTs the file `body`; `sent` resolves once its last byte is written, `answer` with the status and text. */
function post(
  base: string,
  urlPath: string,
  key: string,
  body: string,
): { sent: Promise<void>; answer: Promise<{ status: number; text: string }> } {
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      `${base}${urlPath}`,
      {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': statSync(body).size },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    const input = createReadStream(body);
    input.on('end', markSent);
    input.pipe(req);
  });
  return { sent, answer };
}

/** POST /api/backup with `body`, appended to `file` as it arrives; resolves with the status. */
function download(base: string, key: string, body: object, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      `${base}/api/backup`,
      {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        const out = createWriteStream(file, { flags: 'a' });
        res.pipe(out);
        out.on('finish', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

t.test(
  'a restore of 100 playlists × 5000 tracks leaves the daemon answering while it checks and writes them',
  async (t) => {
    const a = await startTestDaemon(t);
    fillPlaylists(a.daemon.services.store.db, 100, 5000, (fn) => a.daemon.services.store.transaction(fn));
    // Sealed: the backup's admin signs in on the other appliance with its own key. Written to a file as it comes, so
    // the test's own client (in this process, beside both daemons) holds no copy of it.
    const dir = tempDir('azc-large-restore-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'body.json');
    writeFileSync(file, '{"passphrase":"a large restore","backup":');
    t.equal(await download(a.base, a.adminKey, { passphrase: 'a large restore' }, file), 200);
    appendFileSync(file, '}');
    await a.stop();
    const b = await startTestDaemon(t);

    const restore = post(b.base, '/api/restore', b.adminKey, file);
    let done = false;
    void restore.answer.then(() => (done = true));
    await restore.sent;
    // Asked once the whole body is in: a restore that held the loop would answer it only after itself.
    const health = await within(client(b.base).get('/api/health'), undefined, 'health during the restore');
    t.equal(health.status, 200);
    t.notOk(done, 'a health request sent after the whole body is answered before the restore is');
    const others: number[] = [];
    while (!done) {
      const res = await client(b.base, a.adminKey).get('/api/users/me');
      others.push(res.status);
      if (res.status === 503)
        t.equal(res.headers.get('retry-after'), '5', 'while the configuration is written: 503 with Retry-After');
    }
    const answer = await restore.answer;
    t.equal(answer.status, 200, answer.text.slice(0, 300));
    t.match(JSON.parse(answer.text), { restored: { playlists: 100, tracks: 500_000 } });
    t.same(
      others.filter((s) => s !== 200 && s !== 401 && s !== 503),
      [],
      'every other request meanwhile is answered: as before, or 503 while it is written',
    );
    const list = await client(b.base, a.adminKey).get('/api/playlists?limit=200');
    t.equal(list.headers.get('x-total-count'), '100');
    t.ok(
      (list.body as Array<{ trackCount: number }>).every((p) => p.trackCount === 5000),
      'every playlist has its 5000 tracks',
    );
  },
);

t.test(
  'a backup of the largest configuration the limits allow restores, and is within the restore limit',
  async (t) => {
    // Scaled limits: the same rules as the defaults, at a size a test can fill.
    const limits = { ...defaultConfig().limits, playlists: 3, tracksPerPlaylist: 4, scenes: 2 };
    const a = await startTestDaemon(t, { config: { limits } });
    const api = injectClient(a.daemon, a.adminKey);
    const long = (n: number, char = '€') => char.repeat(n);
    const zones = ((await api.get('/api/zones')).body as Array<{ id: string }>).map((z) => z.id);
    for (const [i, id] of zones.entries())
      t.equal(
        (await api.put(`/api/zones/${id}`, { name: long(99, '∑') + i, maxVolume: 0.7, turnOnVolume: 0.2 })).status,
        200,
      );
    const players = [];
    for (let channel = 1; channel <= 6; channel++) {
      const res = await api.post('/api/players', { name: long(99, '\\') + channel, input: { channel } });
      t.equal(res.status, 201);
      players.push(res.body.id as string);
    }
    for (let p = 0; p < limits.playlists; p++) {
      const tracks = Array.from({ length: limits.tracksPerPlaylist }, (_, i) => ({
        title: long(500, '"'),
        uri: `file:///${long(2038, 'é')}${p}${i}`,
        durationMs: 86_400_000,
      }));
      t.equal((await api.post('/api/playlists', { name: long(100), tracks })).status, 201);
    }
    for (let s = 0; s < limits.scenes; s++)
      t.equal((await api.post('/api/scenes', { name: `${long(60, 'ß')}${s}`, zoneIds: zones })).status, 201);
    await createUser(api, 'operator-with-everything', 'Operator', { playerIds: players, zoneIds: zones });
    t.equal(
      (await api.post('/api/playlists', { name: 'one more' })).status,
      409,
      'control: the configuration is at its limits',
    );

    const sealed = await api.post('/api/backup', { passphrase: 'the largest configuration' });
    t.equal(sealed.status, 200);
    const body = JSON.stringify({ backup: JSON.parse(sealed.text), passphrase: 'the largest configuration' });
    t.ok(
      Buffer.byteLength(sealed.text) <= restoreBodyBytes(limits),
      'the backup is within the restore limit the limits give',
    );

    const b = await startTestDaemon(t, { config: { limits } });
    const restored = await injectClient(b.daemon, b.adminKey).call('POST', '/api/restore', { raw: body });
    t.equal(restored.status, 200, restored.text.slice(0, 400));
    const asA = injectClient(b.daemon, a.adminKey);
    for (const path of ['/api/zones', '/api/players', '/api/playlists', '/api/scenes', '/api/users']) {
      t.same(
        (await asA.get(path)).body,
        (await api.get(path)).body.map ? await normalised(api, path) : undefined,
        `${path} came back as it was`,
      );
    }
    const first = ((await api.get('/api/playlists')).body as Array<{ id: string }>)[0]!.id;
    t.same(
      (await asA.get(`/api/playlists/${first}`)).body,
      (await api.get(`/api/playlists/${first}`)).body,
      'tracks came back in order',
    );
  },
);

/** What a restore brings back of `path` (zones come back powered off, players idle). */
async function normalised(api: ReturnType<typeof injectClient>, path: string): Promise<unknown> {
  const body = (await api.get(path)).body as Array<Record<string, unknown>>;
  if (path === '/api/zones') return body.map((z) => ({ ...z, power: false }));
  if (path === '/api/players') return body.map((p) => ({ ...p, state: 'idle' }));
  return body;
}
