// What is not configured is not loaded (ARCHITECTURE.md, "Memory"): a daemon without a stream player never loads the
// MPD engine's code; the first stream player made loads it, and its engine comes up. A loader hook in the child
// (test/helpers/module-watch.mjs) writes down each watched class as its module loads, before the module runs.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD } from '../helpers/mpd-rig.js';
import { ROOT, startedDaemon } from '../helpers/process.js';
import { waitFor } from '../helpers/wait-for.js';

const MODULE_WATCH = path.join(ROOT, 'test/helpers/module-watch.mjs');

/** A daemon whose loaded modules are watched for the MPD engine, and for the HTTP server as a check of the watch. */
async function watchedDaemon(t: Test) {
  const dir = tempDir('azc-lazy-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const loaded = path.join(dir, 'loaded.txt');
  writeFileSync(loaded, '');
  const music = path.join(dir, 'music');
  mkdirSync(music);
  const stateDir = path.join(dir, 'state');
  const daemon = await startedDaemon(t, {
    nodeArgs: ['--import', MODULE_WATCH],
    env: { MODULE_WATCH_FILE: loaded, MODULE_WATCH_CLASSES: 'MpdEngine,HttpServer' },
    args: ['--state-dir', stateDir, '--log-level', 'warn', '--playback-music-dir', music, '--playback-mpd-path', MPD],
  });
  const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  const classes = () =>
    readFileSync(loaded, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[0]);
  return { api: client(daemon.base, key), classes };
}

t.test("a daemon without a stream player never loads the MPD engine's code", async (t) => {
  const { api, classes } = await watchedDaemon(t);
  const players = await api.get('/api/players');
  t.equal(players.status, 200);
  t.same(players.body, [], 'no player is configured');
  t.ok(classes().includes('HttpServer'), 'the watch sees what start-up loads (the HTTP server)');
  t.notOk(classes().includes('MpdEngine'), 'the MPD engine was not loaded');
});

t.test("the first stream player made loads the MPD engine's code, and its engine comes up", async (t) => {
  const { api, classes } = await watchedDaemon(t);
  t.notOk(classes().includes('MpdEngine'), 'not loaded before');
  const created = await api.post('/api/players', { name: 'Stream', input: { channel: 1 }, output: { kind: 'null' } });
  t.equal(created.status, 201);
  const id = created.body.id as string;
  await waitFor(async () => (await api.get(`/api/players/${id}/playback`)).body.engine?.state === 'up', undefined, {
    what: "the stream player's MPD to be up",
  });
  t.ok(classes().includes('MpdEngine'), 'the MPD engine was loaded for it');
});
