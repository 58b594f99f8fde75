// What is not configured is not loaded (ARCHITECTURE.md, "Memory"): a daemon without a stream player never loads the
// MPD engine's code; the first stream player made loads it, and its engine comes up. A loader hook in the child
// (test/helpers/module-watch.mjs) writes down each watched class as its module loads, before the module runs. Node's
// HTTP module and zlib wait for their first use too (test/helpers/builtins-watch.mjs lists the built-ins a child
// loaded). And what discovery loads leaves the process's stack-trace hooks as they were (ciao would install
// source-map-support).

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD } from '../helpers/mpd-rig.js';
import { createNetwork } from '../helpers/netns.js';
import { ROOT, runAzcd, spawnWithoutTestPreload, startedDaemon } from '../helpers/process.js';
import { freePort } from '../helpers/sockets.js';
import { waitFor } from '../helpers/wait-for.js';

const MODULE_WATCH = path.join(ROOT, 'test/helpers/module-watch.mjs');
const STACK_HOOKS_WATCH = path.join(ROOT, 'test/helpers/stack-hooks-watch.mjs');
const BUILTINS_WATCH = path.join(ROOT, 'test/helpers/builtins-watch.mjs');

/** A daemon whose loaded modules are watched for the MPD engine, and for the HTTP server as a check of the watch. */
async function watchedDaemon(t: Test, port?: number) {
  const dir = tempDir('azc-lazy-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const loaded = path.join(dir, 'loaded.txt');
  writeFileSync(loaded, '');
  const builtinsFile = path.join(dir, 'builtins.txt');
  const music = path.join(dir, 'music');
  mkdirSync(music);
  const stateDir = path.join(dir, 'state');
  const daemon = await startedDaemon(t, {
    port,
    nodeArgs: ['--import', MODULE_WATCH, '--import', BUILTINS_WATCH],
    env: {
      MODULE_WATCH_FILE: loaded,
      MODULE_WATCH_CLASSES: 'MpdEngine,HttpServer',
      BUILTINS_WATCH_FILE: builtinsFile,
    },
    spawner: spawnWithoutTestPreload,
    args: ['--state-dir', stateDir, '--log-level', 'warn', '--playback-music-dir', music, '--playback-mpd-path', MPD],
  });
  const key = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  const classes = () =>
    readFileSync(loaded, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[0]);
  /** The built-ins the daemon loaded, written as it exits: stops it. */
  const builtins = async () => {
    t.equal((await daemon.stop('SIGTERM')).code, 0, 'the daemon stopped');
    return readFileSync(builtinsFile, 'utf8').split('\n').filter(Boolean);
  };
  return { api: client(daemon.base, key), classes, builtins };
}

t.test("a daemon without a stream player never loads the MPD engine's code", async (t) => {
  const { api, classes } = await watchedDaemon(t);
  const players = await api.get('/api/players');
  t.equal(players.status, 200);
  t.same(players.body, [], 'no player is configured');
  t.ok(classes().includes('HttpServer'), 'the watch sees what start-up loads (the HTTP server)');
  t.notOk(classes().includes('MpdEngine'), 'the MPD engine was not loaded');
});

t.test("a daemon that served the API but no page loads none of node's modules it has no use for yet", async (t) => {
  // A port of its own, not 0: the daemon then checks that it can listen there before it creates anything.
  const { api, builtins } = await watchedDaemon(t, await freePort());
  t.equal((await api.get('/api/players')).status, 200);
  t.equal((await api.get('/api/no-such-resource')).status, 404, 'a problem answer, with its status text');
  const loaded = await builtins();
  t.ok(loaded.includes('crypto'), 'the watch sees what start-up loads (crypto)');
  t.notOk(loaded.includes('http'), "node's HTTP module was not loaded (the status texts are the daemon's own)");
  t.notOk(loaded.includes('zlib'), 'zlib was not loaded (the dashboard is compressed with its first request)');
  // The listen check is uWS's, not a net server's, whose listen loads cluster, child_process and dgram with it. (That
  // net itself is not loaded is checked on the bundle, built-daemon.test.ts: here packages come from node_modules.)
  for (const name of ['cluster', 'child_process', 'dgram'])
    t.notOk(loaded.includes(name), `${name} was not loaded (processes are started, and datagrams sent, on first use)`);
  t.notOk(loaded.includes('perf_hooks'), 'perf_hooks was not loaded (the monotonic clock is read from process.hrtime)');
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

t.test(
  'announcing over SSDP and mDNS requires their packages and leaves the stack-trace hooks as they were',
  async (t) => {
    // One namespace whose only link is a veth pair: the announcements stay inside it.
    const ns = `azc-lazy-${process.pid}`;
    const link = `azl${process.pid % 100000}`;
    const network = createNetwork(
      t,
      [ns],
      [
        ['link', 'add', `${link}a`, 'netns', ns, 'type', 'veth', 'peer', 'name', `${link}b`, 'netns', ns],
        ['-n', ns, 'addr', 'add', '10.79.0.1/24', 'dev', `${link}a`],
        ['-n', ns, 'link', 'set', `${link}a`, 'up'],
        ['-n', ns, 'link', 'set', `${link}b`, 'up'],
        ['-n', ns, 'link', 'set', 'lo', 'up'],
        ['-n', ns, 'route', 'add', '224.0.0.0/4', 'dev', `${link}a`],
      ],
    );
    if (!network.ok) {
      t.comment(`no network namespace here (${network.why}): the hooks after mDNS are not verified in this run`);
      return;
    }
    const dir = tempDir('azc-lazy-hooks-');
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const hooks = path.join(dir, 'hooks.txt');
    const loaded = path.join(dir, 'loaded.txt');
    writeFileSync(loaded, '');
    const azcd = runAzcd({
      nodeArgs: ['--import', STACK_HOOKS_WATCH, '--import', MODULE_WATCH],
      env: {
        STACK_HOOKS_FILE: hooks,
        MODULE_WATCH_FILE: loaded,
        MODULE_WATCH_PACKAGES: '@homebridge/ciao,node-ssdp',
      },
      args: ['--host', '10.79.0.1', '--port', '0', '--state-dir', path.join(dir, 'state'), '--ssdp'],
      // ip netns exec execs the command: the child is the daemon itself.
      spawner: (command, argv, options) => spawn('ip', ['netns', 'exec', ns, command, ...argv], options),
    });
    t.teardown(() => azcd.stop('SIGKILL'));
    await azcd.waitFor(/mDNS announcing/);
    t.same(await azcd.stop('SIGTERM'), { code: 0, signal: null }, 'the daemon stopped');
    t.equal(readFileSync(hooks, 'utf8'), 'prepareStackTrace=kept emit=kept\n', 'ciao installed no source-map-support');
    // Imported, node would run its export lexer over each of their modules (ARCHITECTURE.md, "Memory").
    t.equal(readFileSync(loaded, 'utf8'), '', 'ciao and node-ssdp were required, not imported');
  },
);
