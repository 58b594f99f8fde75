// The daemon as the service runs it: bundled by scripts/bundle.mjs (one minified module plus chunks loaded on demand,
// native addons and some packages outside). Everything that crosses the bundle's edges is exercised: the sd_notify
// addon found from the bundle's folder, uWS and SQLite required from node_modules, the MQTT bridge's chunk and its
// external `mqtt` package loaded when configured, and a write acknowledged through the group commit.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { bundleDaemon } from '../../scripts/bundle.mjs';
import { client } from '../helpers/client.js';
import { startBroker } from '../helpers/mosquitto.js';
import { Receiver } from '../helpers/notify-receiver.js';
import { ROOT, startedDaemon } from '../helpers/process.js';
import { waitFor } from '../helpers/wait-for.js';

t.test(
  'the bundled daemon starts under a stand-in systemd, answers, writes, and loads the MQTT bridge on demand',
  async (t) => {
    // Inside the project, as dist/ is: the bundle finds package.json, node_modules and native/build by walking up.
    mkdirSync(path.join(ROOT, '.tap'), { recursive: true });
    const outdir = mkdtempSync(path.join(ROOT, '.tap', 'bundle-'));
    const dir = mkdtempSync(path.join(tmpdir(), 'azc-bundle-'));
    t.teardown(() => {
      rmSync(outdir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    });
    const logs: string[] = [];
    t.ok(await bundleDaemon({ root: ROOT, outdir, log: (line) => logs.push(line) }), `bundled ${logs.join('; ')}`);
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
