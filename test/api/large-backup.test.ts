// A backup of a large configuration is written while it is sent: the event loop keeps answering others, and a client
// that does not read holds back the daemon instead of making it build the whole document in memory.

import http from 'node:http';
import t from 'tap';
import { fillPlaylists } from '../helpers/big-state.js';
import { client } from '../helpers/client.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { within } from '../helpers/wait-for.js';

const PLAYLISTS = 100;
const TRACKS = 5000;

/** GET `path` with the key; resolves once the status and headers arrived, the body left unread (paused). */
function openDownload(base: string, path: string, key: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { 'x-api-key': key } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
  });
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.resume();
  });
}

const backupLogged = (logs: string[]) => logs.some((line) => line.includes('"path":"/api/backup"'));

t.test(
  `a backup of ${PLAYLISTS} playlists × ${TRACKS} tracks is made while it is sent, as fast as the client reads it`,
  async (t) => {
    const d = await startTestDaemon(t);
    fillPlaylists(d.daemon.services.store.db, PLAYLISTS, TRACKS, (fn) => d.daemon.services.store.transaction(fn));
    const download = await openDownload(d.base, '/api/backup', d.adminKey);
    t.equal(download.statusCode, 200);
    t.equal(download.headers['transfer-encoding'], 'chunked', 'sent as it is written');

    const health = await within(client(d.base).get('/api/health'), undefined, 'health during the backup');
    t.equal(health.status, 200, 'a health request sent while the backup is under way is answered');
    t.notOk(backupLogged(d.logs), 'the backup is not finished while its client reads nothing: the daemon waits for it');

    // Half a million tracks: bounded generously, since the bound is there to catch a backup that never ends, and a
    // machine kept busy by other work took over 20 s to send it.
    const doc = JSON.parse(await within(readBody(download), 180_000, 'the whole backup')) as {
      playlists: Array<{ tracks: Array<{ id: string }> }>;
    };
    t.equal(doc.playlists.length, PLAYLISTS);
    t.equal(
      doc.playlists.reduce((n, p) => n + p.tracks.length, 0),
      PLAYLISTS * TRACKS,
      'every track is in it',
    );
    t.ok(backupLogged(d.logs), 'logged once it was sent whole');
  },
);

t.test('a client that leaves in the middle of a backup ends it; the daemon goes on serving', async (t) => {
  const d = await startTestDaemon(t);
  fillPlaylists(d.daemon.services.store.db, 20, TRACKS, (fn) => d.daemon.services.store.transaction(fn));
  const download = await openDownload(d.base, '/api/backup', d.adminKey);
  download.destroy();
  await d.untilLog(/"path":"\/api\/backup"/);
  t.equal((await client(d.base, d.adminKey).get('/api/users/me')).status, 200);
});
