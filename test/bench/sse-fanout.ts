// SSE fan-out: N raw-socket subscribers in two client processes, volume changes at a steady rate, delivery latency and RSS.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startBaseline } from './lib/baseline.js';
import { startBenchDaemon } from './lib/daemon-process.js';
import { setupPlayers } from './lib/fixture.js';
import { readCpuMs, readMemory } from './lib/proc.js';
import { BENCH_DIR, forkTs, nextMessage, sleep, stopChild } from './lib/processes.js';
import { makeRow, type Row, type SectionOptions } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import { assertWrk, runWrk, type WrkResult } from './lib/wrk.js';

const CLIENT = path.join(BENCH_DIR, 'lib/sse-child.ts');
const CLIENT_PROCESSES = 2;
const RATE = 20;
const API_LOAD_CONNECTIONS = 10;

interface FanoutResult {
  subscribers: number;
  connected: number;
  connectMs: number;
  rssBeforeKb: number;
  rssConnectedKb: number;
  rssAfterEventsKb: number;
  perSubscriberKb: number;
  perSubscriberAfterEventsKb: number;
  puts: number;
  putFailures: number;
  putLatencyMs: ReturnType<typeof summarize>;
  deliveries: number;
  expectedDeliveries: number;
  unmatched: number;
  latencyMs: ReturnType<typeof summarize>;
  clientCpuShare: number[];
  /** Daemon CPU (cores) while the events were published. */
  daemonCpuShare: number;
  /** Server CPU per delivered event (one write to one stream), in µs. */
  cpuUsPerDelivery: number;
  /** The API load wrk put on the daemon meanwhile (GET /api/players), when asked for. */
  apiLoad?: WrkResult;
}

interface Server {
  port: number;
  pid: number;
  adminKey: string;
  stop(): Promise<void>;
}

async function startServer(kind: 'azcd' | 'bare', n: number): Promise<{ server: Server; playerId: string }> {
  if (kind === 'azcd') {
    const daemon = await startBenchDaemon({
      logLevel: 'info',
      stdout: 'discard',
      needFds: n + 512,
      limits: { streamsPerUser: n + 16, streamsTotal: n + 64 },
    });
    try {
      const fixture = await setupPlayers(daemon.base, daemon.adminKey);
      return { server: daemon, playerId: fixture.playerId };
    } catch (err) {
      await daemon.stop();
      throw err;
    }
  }
  const bare = await startBaseline(
    {
      canned: [],
      jsonPut: ['/api/players/:id/volume'],
      requestIdLength: 10,
      sse: { zoneIds: [randomUUID(), randomUUID()] },
    },
    n + 512,
  );
  return { server: { ...bare, adminKey: `svc_${'0'.repeat(48)}` }, playerId: randomUUID() };
}

async function fanout(
  kind: 'azcd' | 'bare',
  n: number,
  seconds: number,
  log: (line: string) => void,
  apiLoad = false,
): Promise<FanoutResult> {
  let daemon: Server | undefined;
  const clients: ChildProcess[] = [];
  try {
    const started = await startServer(kind, n);
    daemon = started.server;
    const fixture = { playerId: started.playerId };
    const perClient = Math.ceil(n / CLIENT_PROCESSES);
    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(forkTs(CLIENT, [], { needFds: perClient + 256 }));
    await Promise.all(clients.map((c) => nextMessage(c, (m) => m?.type === 'ready', 30_000, 'SSE client start')));
    const publisher = clients[0]!;
    const publish = (count: number, first: number) => {
      publisher.send({
        type: 'publish',
        port: daemon!.port,
        key: daemon!.adminKey,
        playerId: fixture.playerId,
        rate: RATE,
        count,
        first,
      });
      return nextMessage<{
        sends: Array<[string, number]>;
        putLatencyMs: ReturnType<typeof summarize>;
        failures: number;
      }>(publisher, (m) => m?.type === 'published', (count / RATE + 120) * 1000, 'publisher');
    };
    // Warm the PUT path (JIT, statements) with no subscribers, so RSS before/after compares streams only.
    await publish(20, 0.5);
    await sleep(500);
    const rssBeforeKb = readMemory(daemon.pid).rss;

    const connectStarted = performance.now();
    const connected = await Promise.all(
      clients.map((c, i) => {
        c.send({
          type: 'connect',
          port: daemon!.port,
          key: daemon!.adminKey,
          count: Math.min(perClient, n - i * perClient),
          concurrency: 32,
        });
        return nextMessage<{ open: number; failed: number; ms: number }>(
          c,
          (m) => m?.type === 'connected',
          120_000,
          'SSE connect',
        );
      }),
    );
    const connectMs = performance.now() - connectStarted;
    const open = connected.reduce((a, c) => a + c.open, 0);
    if (open < n)
      throw new Error(`only ${open} of ${n} event streams opened (${connected.map((c) => c.failed).join('+')} failed)`);
    await sleep(1000);
    const rssConnectedKb = readMemory(daemon.pid).rss;
    log(
      `sse: ${kind}: ${n} streams open in ${Math.round(connectMs)} ms; daemon RSS ${Math.round(rssBeforeKb / 1024)} → ${Math.round(rssConnectedKb / 1024)} MiB`,
    );

    await Promise.all(
      clients.map((c) => {
        c.send({ type: 'forget' });
        return nextMessage(c, (m) => m?.type === 'forgotten', 10_000, 'SSE forget');
      }),
    );
    const count = Math.round(RATE * seconds);
    const cpuBefore = readCpuMs(daemon.pid);
    const publishStarted = performance.now();
    // Under API load: wrk drives authenticated GET /api/players as fast as the daemon answers, for longer than the
    // publishing lasts, so every event is delivered while the request path is saturated.
    const load = apiLoad
      ? runWrk({
          title: `GET /api/players during the ${n}-subscriber fan-out`,
          base: `http://127.0.0.1:${daemon.port}`,
          serverPid: daemon.pid,
          method: 'GET',
          path: '/api/players',
          headers: { 'X-API-Key': daemon.adminKey },
          connections: API_LOAD_CONNECTIONS,
          durationS: Math.ceil(count / RATE) + 2,
          core: 1,
        })
      : undefined;
    const published = await publish(count, 0.1);
    const publishMs = performance.now() - publishStarted;
    const apiResult = await load;
    const cpuMs = readCpuMs(daemon.pid) - cpuBefore;
    await sleep(1500); // stragglers
    const rssAfterEventsKb = readMemory(daemon.pid).rss;
    const sendList = published.sends;
    const reports = await Promise.all(
      clients.map((c) => {
        c.send({ type: 'report', sends: sendList });
        return nextMessage<{
          latencies: number[];
          unmatched: number;
          open: number;
          minPerStream: number;
          cpuShare: number;
        }>(c, (m) => m?.type === 'report', 60_000, 'SSE report');
      }),
    );
    const latencies = reports.flatMap((r) => r.latencies);
    // Each PUT on a player with two zones yields player.volumeChanged + 2 × zone.volumeChanged.
    const expectedDeliveries = count * 3 * n;
    return {
      subscribers: n,
      connected: open,
      connectMs,
      rssBeforeKb,
      rssConnectedKb,
      rssAfterEventsKb,
      perSubscriberKb: (rssConnectedKb - rssBeforeKb) / n,
      perSubscriberAfterEventsKb: (rssAfterEventsKb - rssBeforeKb) / n,
      puts: count,
      putFailures: published.failures,
      putLatencyMs: published.putLatencyMs,
      deliveries: latencies.length,
      expectedDeliveries,
      unmatched: reports.reduce((a, r) => a + r.unmatched, 0),
      latencyMs: summarize(latencies),
      clientCpuShare: reports.map((r) => round(r.cpuShare)),
      daemonCpuShare: cpuMs / publishMs,
      apiLoad: apiResult,
      cpuUsPerDelivery: (cpuMs * 1000) / Math.max(1, latencies.length),
    };
  } finally {
    for (const c of clients) {
      if (c.connected) c.send({ type: 'close' });
    }
    await Promise.all(clients.map((c) => stopChild(c, 3000)));
    await daemon?.stop();
  }
}

const describeRun = (r: FanoutResult) =>
  `${r.deliveries}/${r.expectedDeliveries} deliveries, p50 ${round(r.latencyMs.p50)} ms, p99 ${round(r.latencyMs.p99)} ms, ` +
  `max ${round(r.latencyMs.max)} ms; PUT p50 ${round(r.putLatencyMs.p50)} ms; server CPU ${Math.round(r.daemonCpuShare * 100)}%; ` +
  `${round(r.perSubscriberKb)} KiB/subscriber`;

export async function benchSse(options: SectionOptions): Promise<Row[]> {
  const sizes = options.sseSizes ?? (options.quick ? [100, 1000] : [100, 1000, 2000]);
  const seconds = options.quick ? 2 : 5;
  const rows: Row[] = [];
  for (const n of sizes) {
    const bare = await fanout('bare', n, seconds, options.log);
    options.log(`sse: bare uWS, ${n} subscribers: ${describeRun(bare)}`);
    const r = await fanout('azcd', n, seconds, options.log);
    options.log(`sse: azcd, ${n} subscribers: ${describeRun(r)}`);
    if (r.putFailures > 0 || bare.putFailures > 0)
      throw new Error(`sse: ${r.putFailures + bare.putFailures} volume PUTs failed with ${n} subscribers`);
    const delivery = `${r.deliveries}/${r.expectedDeliveries} deliveries (${r.puts} PUTs at ${RATE}/s × 3 events × ${n} streams)`;
    const missing = r.expectedDeliveries - r.deliveries;
    rows.push(
      makeRow({
        section: 'sse',
        name: `${n} subscribers: delivery latency p99`,
        value: r.latencyMs.p99,
        unit: 'ms',
        baseline: bare.latencyMs.p99,
        target: n === 2000 ? { on: 'value', op: '<', threshold: 50 } : undefined,
        note:
          `azcd p50 ${round(r.latencyMs.p50)} ms (bare ${round(bare.latencyMs.p50)}), max ${round(r.latencyMs.max)} ms; ` +
          `PUT response p50/p99 ${round(r.putLatencyMs.p50)}/${round(r.putLatencyMs.p99)} ms (bare ${round(bare.putLatencyMs.p50)}/${round(bare.putLatencyMs.p99)}); ${delivery}` +
          (missing > 0 ? `; MISSING ${missing}` : '') +
          `; server CPU while publishing azcd ${Math.round(r.daemonCpuShare * 100)}% / bare ${Math.round(bare.daemonCpuShare * 100)}% of a core, ` +
          `${round(r.cpuUsPerDelivery)} / ${round(bare.cpuUsPerDelivery)} µs per delivered event; ` +
          `client processes ${r.clientCpuShare.map((c) => `${Math.round(c * 100)}%`).join(', ')} (since their start); azcd log info→/dev/null`,
        details: { azcd: r, bare },
      }),
      makeRow({
        section: 'sse',
        name: `${n} subscribers: daemon RSS per subscriber`,
        value: r.perSubscriberKb,
        unit: 'KiB',
        baseline: bare.perSubscriberKb,
        target: { on: 'value', op: '<', threshold: 10 },
        note:
          `(VmRSS with ${n} open streams − before) / ${n}: ${Math.round(r.rssBeforeKb / 1024)} → ${Math.round(r.rssConnectedKb / 1024)} MiB; ` +
          `after the events ${round(r.perSubscriberAfterEventsKb)} KiB/subscriber (bare ${round(bare.perSubscriberAfterEventsKb)})` +
          (n < 1000 ? '; at this N, heap noise of ±1 MiB is ±10 KiB per subscriber' : ''),
      }),
    );
  }
  // The largest size again, while wrk saturates the request path: events must not wait behind requests.
  const largest = Math.max(...sizes);
  if (largest >= 1000) {
    assertWrk();
    const r = await fanout('azcd', largest, seconds, options.log, true);
    const api = r.apiLoad!;
    options.log(
      `sse: azcd, ${largest} subscribers under API load: ${describeRun(r)}; API ${round(api.reqPerSec)} req/s`,
    );
    if (r.putFailures > 0)
      throw new Error(`sse: ${r.putFailures} volume PUTs failed with ${largest} subscribers under API load`);
    if (api.non2xx > 0 || api.errors > 0)
      throw new Error(`sse: the API load got ${api.non2xx} non-2xx answers and ${api.errors} socket errors`);
    const missing = r.expectedDeliveries - r.deliveries;
    rows.push(
      makeRow({
        section: 'sse',
        name: `${largest} subscribers while wrk drives GET /api/players: delivery latency p99`,
        value: r.latencyMs.p99,
        unit: 'ms',
        target: largest === 2000 ? { on: 'value', op: '<', threshold: 50 } : undefined,
        note:
          `p50 ${round(r.latencyMs.p50)} ms, max ${round(r.latencyMs.max)} ms; ${r.deliveries}/${r.expectedDeliveries} deliveries` +
          (missing > 0 ? `; MISSING ${missing}` : '') +
          `; meanwhile ${round(api.reqPerSec)} GET /api/players per s (wrk, ${API_LOAD_CONNECTIONS} connections, p99 ${round(api.latencyMs.p99)} ms); ` +
          `PUT response p50/p99 ${round(r.putLatencyMs.p50)}/${round(r.putLatencyMs.p99)} ms; daemon ${Math.round(r.daemonCpuShare * 100)}% of a core`,
        details: { azcd: r },
      }),
    );
  }
  return rows;
}
