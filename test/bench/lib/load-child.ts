// Load-generator child: runs autocannon for one bounded run and reports exact per-response latencies over IPC.
import { createRequire } from 'node:module';
import type { LoadResult, LoadSpec, SoakMixedArgs } from './load.js';
import { summarize } from './stats.js';

const require = createRequire(import.meta.url);

/** The slice of autocannon's programmatic API used here (it ships no type declarations). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}
interface AutocannonInstance {
  on(
    event: 'response',
    listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
  ): void;
  on(event: 'reqError', listener: (err: Error) => void): void;
  stop(): void;
}
interface AutocannonSummary {
  errors: number;
  timeouts: number;
  duration: number;
  start: Date;
  finish: Date;
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (err: Error | null, result: AutocannonSummary) => void,
) => AutocannonInstance;

const autocannon = require('autocannon') as Autocannon;

function soakMixed(args: SoakMixedArgs): AutocannonRequest[] {
  const json = { 'content-type': 'application/json', 'x-api-key': args.apiKey };
  const auth = { 'x-api-key': args.apiKey };
  let flip = 0;
  const nextVolume = () => ((flip++ & 1) === 0 ? 0.25 : 0.75);
  const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)]!;
  const reversed = Array.from({ length: args.reorderLength }, (_, i) => args.reorderLength - 1 - i);
  return [
    { method: 'GET', path: '/api/players', headers: auth },
    { method: 'GET', path: '/api/zones', headers: auth },
    {
      method: 'PUT',
      headers: json,
      setupRequest: (req) => ({
        ...req,
        path: `/api/players/${pick(args.playerIds)}/volume`,
        body: JSON.stringify({ volume: nextVolume() }),
      }),
    },
    {
      method: 'POST',
      path: `/api/playlists/${args.editPlaylistId}/tracks`,
      headers: json,
      body: JSON.stringify({ tracks: [{ title: 'Soak track', uri: 'file:///music/soak.flac', durationMs: 180000 }] }),
      onResponse: (status, body, context) => {
        if (status !== 200) return;
        const tracks = (JSON.parse(body) as { tracks: Array<{ id: string }> }).tracks;
        context.trackId = tracks[tracks.length - 1]?.id;
      },
    },
    { method: 'GET', path: `/api/playlists/${args.editPlaylistId}`, headers: auth },
    {
      method: 'PUT',
      headers: json,
      setupRequest: (req) => ({
        ...req,
        path: `/api/zones/${pick(args.zoneIds)}/volume`,
        body: JSON.stringify({ volume: nextVolume() }),
      }),
    },
    {
      method: 'DELETE',
      path: `/api/playlists/${args.editPlaylistId}/tracks`,
      headers: json,
      // Removes the track this connection added a moment ago, so the playlist does not grow during the soak.
      setupRequest: (req, context) => ({
        ...req,
        body: JSON.stringify({ trackIds: [context.trackId ?? '00000000-0000-4000-8000-000000000000'] }),
      }),
    },
    {
      method: 'POST',
      path: `/api/playlists/${args.reorderPlaylistId}/reorder`,
      headers: json,
      body: JSON.stringify({ newOrder: reversed }),
    },
    {
      method: 'PUT',
      path: `/api/playlists/${args.reorderPlaylistId}/favorite`,
      headers: json,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ isFavorite: (flip++ & 1) === 0 }) }),
    },
    { method: 'GET', path: '/api/input-devices', headers: auth },
  ];
}

function run(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const statusCodes: Record<string, number> = {};
    let ok = 0;
    let completed = 0;
    let reqErrors = 0;
    const requests = spec.scenario === 'soak-mixed' && spec.scenarioArgs ? soakMixed(spec.scenarioArgs) : spec.requests;
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    let progress: NodeJS.Timeout | undefined;
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: spec.pipelining,
        duration: spec.durationS,
        timeout: 10,
        overallRate: spec.overallRate,
        requests,
      },
      (err, result) => {
        clearInterval(progress);
        if (err) {
          reject(err);
          return;
        }
        const wallMs = performance.now() - wallBefore;
        const cpu = process.cpuUsage(cpuBefore);
        const durationS = result.duration;
        resolve({
          title: spec.title,
          durationS,
          connections: spec.connections,
          pipelining: spec.pipelining,
          overallRate: spec.overallRate,
          completed,
          ok,
          non2xx: completed - ok,
          statusCodes,
          errors: result.errors,
          timeouts: result.timeouts,
          reqPerSec: ok / durationS,
          latencyMs: summarize(latencies),
          generatorCpuShare: (cpu.user + cpu.system) / 1000 / wallMs,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      completed++;
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTime);
      }
    });
    instance.on('reqError', () => {
      reqErrors++;
    });
    if (spec.progressEveryS) {
      progress = setInterval(
        () => process.send?.({ type: 'progress', completed, ok, reqErrors }),
        spec.progressEveryS * 1000,
      );
    }
  });
}

process.once('message', (message: { type: string; spec: LoadSpec }) => {
  if (message.type !== 'run') return;
  const spec = message.spec;
  // Bounded no matter what: a run that does not finish on its own is ended.
  setTimeout(
    () => {
      process.send?.({ type: 'error', message: `load run "${spec.title}" did not finish within its deadline` });
      process.exit(3);
    },
    (spec.durationS + 30) * 1000,
  ).unref();
  run(spec).then(
    (result) => process.send?.({ type: 'result', result }, () => process.exit(0)),
    (err: Error) => process.send?.({ type: 'error', message: err.message }, () => process.exit(1)),
  );
});
process.send?.({ type: 'ready' });
