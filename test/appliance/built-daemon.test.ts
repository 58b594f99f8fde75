// The daemon as the service runs it: bundled by scripts/bundle.mjs (one minified module plus chunks loaded on demand,
// native addons and some packages outside). Everything that crosses the bundle's edges is exercised: the sd_notify
// addon found from the bundle's folder, uWS and SQLite required from node_modules, the MQTT bridge's chunk and its
// external `mqtt` package loaded when configured, a write acknowledged through the group commit, and the discovery
// chunk (node-ssdp and ciao bundled in) announcing and saying goodbye on a network of the test's own.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { bundleDaemon } from '../../scripts/bundle.mjs';
import { client } from '../helpers/client.js';
import { startBroker } from '../helpers/mosquitto.js';
import { createNetwork } from '../helpers/netns.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { ROOT, runAzcd, spawnWithoutTestPreload, startedDaemon } from '../helpers/process.js';
import { freePort } from '../helpers/sockets.js';
import { waitFor } from '../helpers/wait-for.js';

/** The bundle both cases run, made once: inside the project, as dist/ is (the bundle finds package.json,
 * node_modules and native/build by walking up). */
let bundling: Promise<string> | undefined;
function bundled(): Promise<string> {
  bundling ??= (async () => {
    mkdirSync(path.join(ROOT, '.tap'), { recursive: true });
    const outdir = mkdtempSync(path.join(ROOT, '.tap', 'bundle-'));
    t.teardown(() => rmSync(outdir, { recursive: true, force: true }));
    const logs: string[] = [];
    if (!(await bundleDaemon({ root: ROOT, outdir, log: (line) => logs.push(line) })))
      throw new Error(`bundling failed: ${logs.join('; ')}`);
    return outdir;
  })();
  return bundling;
}

t.test(
  'the bundled daemon starts under a stand-in systemd, answers, writes, and loads the MQTT bridge on demand',
  async (t) => {
    const outdir = await bundled();
    const dir = mkdtempSync(path.join(tmpdir(), 'azc-bundle-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    t.ok(
      readdirSync(path.join(outdir, 'chunks')).some((f) => /^bridge-.*\.js$/.test(f)),
      'the MQTT bridge is a chunk of its own',
    );

    const broker = await startBroker(t);
    const socket = path.join(dir, 'notify.sock');
    const receiver = await Receiver.start(socket);
    t.teardown(() => receiver.stop());
    const daemon = await startedDaemon(t, {
      entryPath: path.join(outdir, 'main.js'),
      args: [
        '--state-dir',
        path.join(dir, 'state'),
        '--log-level',
        'warn',
        '--mqtt-url',
        broker.url,
        '--mqtt-account',
        'admin',
      ],
      env: { NOTIFY_SOCKET: socket },
    });
    const readyAt = await receiver.waitForMatch((d) => d.startsWith('READY=1'));
    t.match(
      receiver.datagrams[readyAt],
      new RegExp(`^READY=1\nSTATUS=listening on 127\\.0\\.0\\.1:${daemon.port};`),
      'READY=1 with the port it listens on reached systemd: the addon was found from the bundle',
    );

    const key = /apiKey=(svc_[0-9a-f]+)/.exec(readFileSync(path.join(dir, 'state', 'initial-admin.txt'), 'utf8'))?.[1];
    t.ok(key, 'the first start wrote the administrator key');
    const api = client(daemon.base, key!);
    const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
    t.equal((await api.put(`/api/zones/${zones[0]!.id}/volume`, { volume: 0.37 })).status, 204);
    t.equal((await api.get(`/api/zones/${zones[0]!.id}`)).body.volume, 0.37, 'the write is read back');
    const health = await waitFor(
      async () => {
        const body = (await api.get('/api/health')).body as { mqtt?: { state: string } };
        return body.mqtt?.state === 'connected' ? body : undefined;
      },
      undefined,
      { what: 'the MQTT bridge to connect' },
    );
    t.equal(health.mqtt?.state, 'connected', 'the bridge chunk and the external mqtt package loaded and connected');
    t.equal((await daemon.stop('SIGTERM')).code, 0);
  },
);

t.test('the bundled daemon announces over SSDP and mDNS from its discovery chunk, and says goodbye', async (t) => {
  const ns = `azc-bundle-${process.pid}`;
  const tag = String(process.pid % 100000);
  // One namespace with a veth pair in it: a LAN link with an address and a multicast route, reachable from nowhere.
  const network = createNetwork(
    t,
    [ns],
    [
      ['-n', ns, 'link', 'add', `ab${tag}a`, 'type', 'veth', 'peer', 'name', `ab${tag}b`],
      ['-n', ns, 'addr', 'add', '10.78.0.1/24', 'dev', `ab${tag}a`],
      ['-n', ns, 'addr', 'add', '10.78.0.2/24', 'dev', `ab${tag}b`],
      ['-n', ns, 'link', 'set', `ab${tag}a`, 'up'],
      ['-n', ns, 'link', 'set', `ab${tag}b`, 'up'],
      ['-n', ns, 'link', 'set', 'lo', 'up'],
      ['-n', ns, 'route', 'add', '224.0.0.0/4', 'dev', `ab${tag}a`],
    ],
  );
  if (!network.ok) {
    t.comment(`no network namespace here (${network.why}): the bundled discovery chunk is not verified in this run`);
    return;
  }
  const outdir = await bundled();
  t.ok(
    readdirSync(path.join(outdir, 'chunks')).some((f) => /^announcers-.*\.js$/.test(f)),
    'SSDP and mDNS are one chunk',
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hooks = path.join(dir, 'hooks.txt');
  const daemon = runAzcd({
    entryPath: path.join(outdir, 'main.js'),
    // Writes at exit whether Error.prepareStackTrace and process.emit are still the process's own.
    nodeArgs: ['--import', path.join(ROOT, 'test/helpers/stack-hooks-watch.mjs')],
    env: { STACK_HOOKS_FILE: hooks },
    args: [
      '--host',
      '0.0.0.0',
      '--port',
      '8080',
      '--state-dir',
      path.join(dir, 'state'),
      '--ssdp',
      '--ssdp-interfaces',
      `ab${tag}a`,
    ],
    spawner: (command, args, options) => spawn('ip', ['netns', 'exec', ns, command, ...args], options),
  });
  t.teardown(() => daemon.stop('SIGKILL'));
  await daemon.waitFor(/"component":"ssdp".*"msg":"SSDP announcing"/);
  t.pass('node-ssdp, bundled, bound and announced');
  await daemon.waitFor(/"component":"mdns".*"msg":"mDNS announcing"/);
  t.pass('ciao, bundled, probed and announced');
  t.same(await daemon.stop('SIGTERM'), { code: 0, signal: null }, 'a clean stop');
  t.match(daemon.stdout(), /"msg":"SSDP stopped after byebye"/);
  t.match(daemon.stdout(), /"msg":"mDNS stopped after goodbye"/);
  t.notMatch(daemon.stdout() + daemon.stderr(), /"level":(40|50)/, 'no warning or error on the way');
  t.equal(
    readFileSync(hooks, 'utf8'),
    'prepareStackTrace=kept emit=kept\n',
    "the source-map-support bundled with ciao left the process's stack hooks as they were",
  );
});

t.test("the bundled daemon loads none of node's modules it has no use for yet", async (t) => {
  const outdir = await bundled();
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const builtinsFile = path.join(dir, 'builtins.txt');
  const daemon = await startedDaemon(t, {
    entryPath: path.join(outdir, 'main.js'),
    port: await freePort(),
    nodeArgs: ['--import', path.join(ROOT, 'test/helpers/builtins-watch.mjs')],
    env: { BUILTINS_WATCH_FILE: builtinsFile },
    spawner: spawnWithoutTestPreload,
    args: ['--state-dir', path.join(dir, 'state'), '--log-level', 'warn'],
  });
  const key = /apiKey=(svc_[0-9a-f]+)/.exec(readFileSync(path.join(dir, 'state', 'initial-admin.txt'), 'utf8'))?.[1];
  t.equal((await client(daemon.base, key!).get('/api/players')).status, 200);
  t.equal((await daemon.stop('SIGTERM')).code, 0);
  const loaded = readFileSync(builtinsFile, 'utf8').split('\n').filter(Boolean);
  t.ok(loaded.includes('crypto'), 'the watch sees what start-up loads (crypto)');
  // pino's worker thread machinery and sonic-boom's assert have stand-ins in the bundle (scripts/bundle.mjs); stdout is
  // a pipe here, written without making process.stdout (which would load net).
  for (const name of ['worker_threads', 'assert', 'net', 'cluster', 'child_process', 'perf_hooks', 'http', 'zlib'])
    t.notOk(loaded.includes(name), `${name} was not loaded`);
});
