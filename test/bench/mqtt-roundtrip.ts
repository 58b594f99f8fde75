// MQTT bridge: command → amplifier → state topic round trip, and the state fan-out of one API call that moves six
// zones, against a broker-only echo measured in the same run (npm run bench:mqtt; needs mosquitto).
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mqtt from 'mqtt';
import { client } from '../helpers/client.js';
import { tempDir } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { spawnDaemon } from '../helpers/process.js';
import { type Summary, summarize } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const ROUND_TRIPS = quick ? 200 : 1000;
const FANOUTS = quick ? 50 : 300;
const WARMUP = 30;
const BASE = 'azc/bench';

const cleanups: Array<() => unknown> = [];
const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) };
const ms = (s: Summary) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms (n=${s.count})`;

/** Resolves when `topic` next carries `payload` on the watcher. */
function next(w: Watcher, topic: string, payload: string): Promise<void> {
  return w.until((x) => x.latest.get(topic) === payload);
}

async function main(): Promise<void> {
  const broker = await startBroker(t);

  // Baseline: the broker alone. A second client echoes each command to a state topic, as a zero-work bridge would.
  const echo = await mqtt.connectAsync(broker.url);
  cleanups.push(() => echo.endAsync(true));
  await echo.subscribeAsync('bench/echo/set');
  echo.on('message', (_topic, payload) => void echo.publish('bench/echo', payload, { retain: true }));
  // Only state topics, as Home Assistant subscribes: a client that also gets its own commands echoed back meets
  // Nagle's algorithm on the broker's socket (the state waits for the ACK of the echo, ~40 ms).
  const probe = await Watcher.connect(t, broker.url, [
    'bench/echo',
    `${BASE}/status`,
    `${BASE}/zone/+/volume`,
    `${BASE}/player/+/volume`,
  ]);
  const baseline: number[] = [];
  for (let i = 0; i < ROUND_TRIPS + WARMUP; i++) {
    const value = String(i);
    const started = performance.now();
    const arrived = next(probe, 'bench/echo', value);
    void probe.client.publish('bench/echo/set', value);
    await arrived;
    if (i >= WARMUP) baseline.push(performance.now() - started);
  }

  const stateDir = tempDir('azc-bench-mqtt-');
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const daemon = await spawnDaemon({
    args: [
      '--state-dir',
      stateDir,
      '--log-level',
      'warn',
      '--mqtt-url',
      broker.url,
      '--mqtt-account',
      'admin',
      '--mqtt-base-topic',
      BASE,
    ],
    env: { AZC_ADMIN_PASSWORD: 'bench-password-1' },
  });
  cleanups.push(() => daemon.stop('SIGTERM'));
  const adminKey = /apiKey=(\S+)/.exec(readFileSync(path.join(stateDir, 'initial-admin.txt'), 'utf8'))![1]!;
  const api = client(daemon.base, adminKey);
  const player = (await api.post('/api/players', { name: 'Bench', input: { channel: 1 } })).body;
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  await api.post(`/api/players/${player.id}/attach-zones`, { zoneIds: zones.map((z) => z.id) });
  await next(probe, `${BASE}/status`, 'online');

  // Round trip: a Home Assistant-style volume command until the state topic shows it (values alternate so each changes).
  const zoneVolume = `${BASE}/zone/${zones[0]!.id}/volume`;
  const roundTrip: number[] = [];
  for (let i = 0; i < ROUND_TRIPS + WARMUP; i++) {
    const value = String(10 + (i % 80));
    const started = performance.now();
    const arrived = next(probe, zoneVolume, value);
    void probe.client.publish(`${zoneVolume}/set`, value);
    await arrived;
    if (i >= WARMUP) roundTrip.push(performance.now() - started);
  }

  // Fan-out: one PUT of the group volume moves six zones; time until all six zone topics and the player's show it.
  const topics = [...zones.map((z) => `${BASE}/zone/${z.id}/volume`), `${BASE}/player/${player.id}/volume`];
  const http: number[] = [];
  const fanout: number[] = [];
  for (let i = 0; i < FANOUTS + WARMUP; i++) {
    const percent = 10 + (i % 80);
    const started = performance.now();
    const arrived = probe.until((w) => topics.every((topic) => w.latest.get(topic) === String(percent)));
    const res = await api.put(`/api/players/${player.id}/volume`, { volume: percent / 100 });
    const answered = performance.now();
    if (res.status !== 204) throw new Error(`PUT volume answered ${res.status}`);
    await arrived;
    if (i >= WARMUP) {
      http.push(answered - started);
      fanout.push(performance.now() - started);
    }
  }

  const result = {
    baselineEcho: summarize(baseline),
    commandRoundTrip: summarize(roundTrip),
    apiPut: summarize(http),
    sixZoneFanout: summarize(fanout),
  };
  process.stdout.write(
    `${[
      `broker-only echo round trip (baseline):        ${ms(result.baselineEcho)}`,
      `MQTT command → amplifier → state topic:        ${ms(result.commandRoundTrip)}  (${(result.commandRoundTrip.p50 / result.baselineEcho.p50).toFixed(1)}× baseline p50)`,
      `PUT /api/players/{id}/volume response:         ${ms(result.apiPut)}`,
      `one PUT → all 6 zone + player state topics:   ${ms(result.sixZoneFanout)}`,
      JSON.stringify(result),
    ].join('\n')}\n`,
  );
}

main()
  .catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const cleanup of cleanups.reverse())
      await Promise.resolve(cleanup()).catch(() => {
        // The rest still runs; the run's own error, if any, was reported above.
      });
  });
