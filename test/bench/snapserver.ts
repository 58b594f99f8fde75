// Peer comparison: snapserver's Client.SetVolume JSON-RPC against our PUT /api/zones/{id}/volume, on loopback only.
import { execFileSync } from 'node:child_process';
import { accessSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from '../helpers/sockets.js';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { type LoadResult, type RequestSpec, runJsonRpcLoad, runLoad } from './lib/load.js';
import { processRunning, readMemory } from './lib/proc.js';
import { sleep, spawnTracked, stopChild } from './lib/processes.js';
import { formatTable, makeRow, type Row, type SectionOptions, skippedRow } from './lib/report.js';
import { round } from './lib/stats.js';

export const SNAPCAST_INSTALL_HINT =
  'apt-get install -y --no-install-recommends snapserver snapclient, then on a machine with systemd: ' +
  'systemctl disable --now snapserver snapclient (the packaged services listen on 0.0.0.0 and announce themselves with Avahi)';

const CONNECTIONS = 10;

function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const file = path.join(dir || '.', command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Posts one JSON-RPC request to snapserver's HTTP control endpoint. */
async function rpc(port: number, method: string, params?: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 1, jsonrpc: '2.0', method, params }),
    signal: AbortSignal.timeout(2000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline)
      throw new Error(`${what} within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
    await sleep(100);
  }
}

/** A configuration switch that turns Zeroconf publishing off, if this snapserver has one (`--section.key` in -hh). */
function mdnsSwitch(help: string): { section: string; key: string } | undefined {
  const match = /--(\w+)\.(\w*(?:mdns|zeroconf|avahi)\w*)\b/i.exec(help);
  return match ? { section: match[1]!, key: match[2]! } : undefined;
}

/**
 * Why snapserver must not run here, or undefined when it may. 0.26 (Debian 12) has no switch: it always publishes
 * _snapcast._tcp through a running avahi-daemon (without one nothing is announced); 0.33+ has an option for it.
 */
function mdnsHazard(help: string): string | undefined {
  if (mdnsSwitch(help)) return undefined;
  if (processRunning('avahi-daemon')) {
    return 'avahi-daemon is running and this snapserver cannot switch mDNS publishing off: it would announce itself on the network';
  }
  return undefined;
}

function config(
  dir: string,
  ports: { stream: number; tcp: number; http: number },
  mdns: { section: string; key: string } | undefined,
): string {
  const off = (section: string) => (mdns && mdns.section === section ? [`${mdns.key} = false`] : []);
  return [
    '# Written by test/bench/snapserver.ts: loopback only, nothing published.',
    '[server]',
    `datadir = ${dir}`,
    ...off('server'),
    '[http]',
    ...off('http'),
    'enabled = true',
    'bind_to_address = 127.0.0.1',
    `port = ${ports.http}`,
    '[tcp]',
    'enabled = true',
    'bind_to_address = 127.0.0.1',
    `port = ${ports.tcp}`,
    '[stream]',
    'bind_to_address = 127.0.0.1',
    `port = ${ports.stream}`,
    `source = pipe://${dir}/snapfifo?name=default&mode=create`,
    '[logging]',
    'filter = *:warning',
    '',
  ].join('\n');
}

const lat = (r: LoadResult) => `${round(r.latencyMs.p50, 3)}/${round(r.latencyMs.p99, 3)} ms`;

export async function benchSnapserver(options: SectionOptions): Promise<Row[]> {
  const snapserver = which('snapserver');
  const snapclient = which('snapclient');
  if (!snapserver || !snapclient) {
    return [
      skippedRow(
        'snapcast',
        'Client.SetVolume vs PUT /api/zones/{id}/volume',
        `snapserver/snapclient not installed (${SNAPCAST_INSTALL_HINT})`,
      ),
    ];
  }
  let help = '';
  try {
    help = execFileSync(snapserver, ['-hh'], { encoding: 'utf8', timeout: 5000 });
  } catch (err) {
    help = String((err as { stdout?: string }).stdout ?? '');
  }
  const hazard = mdnsHazard(help);
  if (hazard) return [skippedRow('snapcast', 'Client.SetVolume vs PUT /api/zones/{id}/volume', hazard)];
  const version =
    /v?(\d+\.\d+\.\d+)/.exec(execFileSync(snapserver, ['-v'], { encoding: 'utf8', timeout: 5000 }))?.[1] ?? 'unknown';

  const dir = mkdtempSync(path.join(tmpdir(), 'azc-bench-snap-'));
  const ports = { stream: await freePort(), tcp: await freePort(), http: await freePort() };
  const conf = path.join(dir, 'snapserver.conf');
  writeFileSync(conf, config(dir, ports, mdnsSwitch(help)));
  const logFd = openSync(path.join(dir, 'snap.log'), 'a');
  const server = spawnTracked(snapserver, ['-c', conf], {
    stdio: ['ignore', logFd, logFd],
    env: { ...process.env, HOME: dir },
  });
  let client: ReturnType<typeof spawnTracked> | undefined;
  let daemon: BenchDaemon | undefined;
  try {
    await until('snapserver did not answer JSON-RPC on 127.0.0.1', 10_000, () =>
      rpc(ports.http, 'Server.GetRPCVersion'),
    );
    client = spawnTracked(
      snapclient,
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(ports.stream),
        '--hostID',
        'azcd-bench',
        '--player',
        'file:filename=null',
        '--logsink',
        'null',
      ],
      { stdio: ['ignore', logFd, logFd], env: { ...process.env, HOME: dir } },
    );
    const clientId = await until('snapclient did not connect', 15_000, async () => {
      const status = await rpc(ports.http, 'Server.GetStatus');
      for (const group of status?.server?.groups ?? []) {
        for (const c of group.clients ?? []) if (c.connected) return c.id as string;
      }
      return undefined;
    });
    const check = await rpc(ports.http, 'Client.SetVolume', { id: clientId, volume: { muted: false, percent: 30 } });
    if (check?.volume?.percent !== 30) throw new Error(`Client.SetVolume answered ${JSON.stringify(check)}`);

    daemon = await startBenchDaemon({ logLevel: 'info', stdout: 'discard' });
    const fixture = await setupPlayers(daemon.base, daemon.adminKey);
    options.log(
      `snapcast: snapserver ${version} on 127.0.0.1:${ports.http} (client ${clientId}); azcd on :${daemon.port}`,
    );

    const durationS = options.quick ? 2 : 5;
    const rounds = options.quick ? 1 : 3;
    // The TCP control port (newline-delimited JSON-RPC) is what Snapcast apps use; snapserver 0.26's HTTP /jsonrpc
    // endpoint mis-parses requests on a busy keep-alive connection ("bad method") and crashed under this load.
    const snapBodies = [30, 70].map((percent) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'Client.SetVolume',
        params: { id: clientId, volume: { muted: false, percent } },
      }),
    );
    const ourRequests: RequestSpec[] = [0.3, 0.7].map((volume) => ({
      method: 'PUT',
      path: `/api/zones/${fixture.zoneId}/volume`,
      headers: { 'content-type': 'application/json', 'x-api-key': daemon!.adminKey },
      body: JSON.stringify({ volume }),
    }));
    const runSnap = (title: string, seconds: number) =>
      runJsonRpcLoad(
        { title, host: '127.0.0.1', port: ports.tcp, connections: CONNECTIONS, durationS: seconds, bodies: snapBodies },
        { serverPid: server.pid! },
      );
    const runOurs = (title: string, seconds: number) =>
      runLoad(
        {
          title,
          url: daemon!.base,
          connections: CONNECTIONS,
          pipelining: 1,
          durationS: seconds,
          requests: ourRequests,
        },
        { serverPid: daemon!.pid },
      );
    await runSnap('snapserver warm-up', 1);
    await runOurs('azcd warm-up', 1);
    const snaps: LoadResult[] = [];
    const ours: LoadResult[] = [];
    for (let pass = 1; pass <= rounds; pass++) {
      snaps.push(await runSnap(`snapserver round ${pass}`, durationS));
      ours.push(await runOurs(`azcd round ${pass}`, durationS));
      options.log(
        `snapcast: round ${pass}: snapserver ${Math.round(snaps[pass - 1]!.reqPerSec)} req/s (${lat(snaps[pass - 1]!)}), ` +
          `azcd ${Math.round(ours[pass - 1]!.reqPerSec)} req/s (${lat(ours[pass - 1]!)})`,
      );
    }
    const pick = (list: LoadResult[]) =>
      [...list].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor((list.length - 1) / 2)]!;
    const snap = pick(snaps);
    const our = pick(ours);
    if (our.non2xx > 0) throw new Error(`azcd answered ${our.non2xx} non-2xx responses to zone volume PUTs`);
    const snapRss = readMemory(server.pid!).rss;
    const ourRss = readMemory(daemon.pid).rss;
    const cpu = (r: LoadResult) =>
      `${Math.round((r.serverCpuShare ?? NaN) * 100)}% CPU, ${round(r.serverCpuUsPerRequest ?? NaN)} µs/req`;
    return [
      makeRow({
        section: 'snapcast',
        name: `set volume: PUT /api/zones/{id}/volume vs snapserver ${version} Client.SetVolume (TCP JSON-RPC)`,
        value: our.reqPerSec,
        unit: 'req/s',
        baseline: snap.reqPerSec,
        note:
          `p50/p99 azcd ${lat(our)} vs snapserver ${lat(snap)}; azcd ${cpu(our)}, snapserver ${cpu(snap)}; ` +
          `RSS after load azcd ${Math.round(ourRss / 1024)} MiB, snapserver ${Math.round(snapRss / 1024)} MiB; ` +
          `${CONNECTIONS} connections each (azcd: HTTP keep-alive via autocannon; snapserver: its TCP control port, closed loop, ` +
          `each SetVolume also notifies all ${CONNECTIONS} control sessions), ${durationS} s × ${rounds} rounds (median); 1 snapclient; azcd log info→/dev/null`,
        details: { azcd: ours, snapserver: snaps, version, clientId },
      }),
      makeRow({
        section: 'snapcast',
        name: 'set volume: latency p99, azcd vs snapserver',
        value: our.latencyMs.p99,
        unit: 'ms',
        baseline: snap.latencyMs.p99,
      }),
    ];
  } catch (err) {
    let log = '';
    try {
      log = readFileSync(path.join(dir, 'snap.log'), 'utf8').slice(-2000);
    } catch {
      // no log
    }
    throw new Error(`${(err as Error).message}${log ? `\nsnapcast log:\n${log}` : ''}`);
  } finally {
    if (client) await stopChild(client, 3000);
    await stopChild(server, 5000);
    await daemon?.stop();
    closeSync(logFd);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--install')) {
    console.log(`To install the peer for this comparison: ${SNAPCAST_INSTALL_HINT}`);
  } else {
    const { ensureBuild } = await import('./lib/processes.js');
    await ensureBuild((line) => console.log(line));
    const rows = await benchSnapserver({ quick: process.argv.includes('--quick'), log: (line) => console.log(line) });
    console.log(formatTable(rows));
  }
}
