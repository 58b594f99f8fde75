// The `playback` section of `npm run bench`: a built daemon with a stream player on a FIFO, against the engine alone
// (drivers/mpd in this process, same run): POST …/play → first PCM byte, daemon and mpd memory idle and playing FLAC,
// and CPU per second of audio. Needs mpd and sox (scripts/install-test-deps.sh).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { tempDir } from '../helpers/daemon.js';
import { MPD, SOX, tone } from '../helpers/mpd-rig.js';
import { type BenchDaemon, startBenchDaemon } from './lib/daemon-process.js';
import { delay, engineWithFifo, fifoWithProbe, firstByte, PCM_BYTES_PER_SECOND } from './lib/pcm-probe.js';
import { readCpuNs, readMemory, readSmapsRollup } from './lib/proc.js';
import { makeRow, type Row, type SectionOptions, skippedRow } from './lib/report.js';
import { summarize } from './lib/stats.js';

const WARMUP = 3;
const SETTLE_MS = 1_000;
/** Bounds every wait on the daemon (its mpd coming up): a broken run ends with an error, not a hang. */
const WAIT_LIMIT_MS = 30_000;
const kbToMB = (kb: number) => kb / 1024;
/** CPU time of every thread so far, in ms (the scheduler's count: finer than the 10 ms ticks of /proc/<pid>/stat). */
const cpuMs = (pid: number) => readCpuNs(pid) / 1e6;

/** One request on a kept-alive loopback connection, the admin's key in X-API-Key; rejects on a non-2xx answer. */
function request(
  daemon: BenchDaemon,
  agent: http.Agent,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<any> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: daemon.port,
        path: urlPath,
        method,
        agent,
        timeout: WAIT_LIMIT_MS,
        headers: {
          'x-api-key': daemon.adminKey,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300)
            reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
      },
    );
    req.once('timeout', () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${WAIT_LIMIT_MS} ms`)));
    req.once('error', reject);
    req.end(payload);
  });
}

/** The pid of the player's mpd, from the pid file its engine keeps, once its playback says the engine is up. */
async function mpdUp(daemon: BenchDaemon, agent: http.Agent, playerId: string): Promise<number> {
  const deadline = performance.now() + WAIT_LIMIT_MS;
  const pidFile = path.join(daemon.stateDir, 'players', playerId, 'mpd.pid');
  while (performance.now() < deadline) {
    const playback = await request(daemon, agent, 'GET', `/api/players/${playerId}/playback`);
    if (playback.engine?.state === 'up' && existsSync(pidFile)) return Number(readFileSync(pidFile, 'utf8').trim());
    await delay(100);
  }
  throw new Error(`the stream player's mpd was not up within ${WAIT_LIMIT_MS} ms`);
}

const privateKb = (pid: number) => {
  const smaps = readSmapsRollup(pid);
  return smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN;
};

export async function benchPlaybackDaemon(options: SectionOptions): Promise<Row[]> {
  if (!existsSync(MPD) || !existsSync(SOX))
    return [skippedRow('playback', 'stream player benchmark', `needs ${MPD} and ${SOX}: apt-get install mpd sox`)];
  const runs = options.quick ? 10 : 40;
  const playingWindowMs = options.quick ? 4_000 : 10_000;
  const cleanups: Array<() => unknown> = [];
  const dir = tempDir('azc-bench-pbdaemon-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  cleanups.push(() => agent.destroy());
  try {
    const music = path.join(dir, 'music');
    mkdirSync(music);
    tone(path.join(music, 'short.flac'), 5, 440, { title: 'Short' });
    tone(path.join(music, 'long.flac'), 60, 330, { title: 'Long' });

    const daemon = await startBenchDaemon({ args: ['--playback-music-dir', music, '--playback-mpd-path', MPD] });
    cleanups.push(() => daemon.stop());
    await delay(SETTLE_MS);
    const daemonBefore = readMemory(daemon.pid).rss;
    const { fifo, probe } = fifoWithProbe(dir, 'daemon');
    cleanups.push(() => probe.close());
    const player = await request(daemon, agent, 'POST', '/api/players', {
      name: 'Bench stream',
      input: { channel: 1 },
      output: { kind: 'fifo', path: fifo },
    });
    const mpdPid = await mpdUp(daemon, agent, player.id);
    const engineSide = await engineWithFifo(dir, music, 'engine', cleanups);
    options.log(
      `playback: daemon pid ${daemon.pid}, its mpd pid ${mpdPid}; ${runs} rounds after ${WARMUP} warm-up rounds`,
    );

    const daemonTimes: number[] = [];
    const engineTimes: number[] = [];
    const play = { uri: 'file:short.flac' };
    for (let i = 0; i < runs + WARMUP; i++) {
      const viaDaemon = await firstByte(
        probe,
        () => request(daemon, agent, 'POST', `/api/players/${player.id}/play`, play),
        () => request(daemon, agent, 'POST', `/api/players/${player.id}/stop`),
      );
      const viaEngine = await firstByte(
        engineSide.probe,
        () => engineSide.engine.playUri(play.uri),
        () => engineSide.engine.stopPlayback(),
      );
      if (i >= WARMUP) {
        daemonTimes.push(viaDaemon);
        engineTimes.push(viaEngine);
      }
    }
    await request(daemon, agent, 'POST', `/api/players/${player.id}/stop`);
    await engineSide.engine.stopPlayback();

    await delay(SETTLE_MS);
    const idle = { daemon: readMemory(daemon.pid).rss, mpd: readMemory(mpdPid).rss, mpdPrivate: privateKb(mpdPid) };
    await request(daemon, agent, 'POST', `/api/players/${player.id}/play`, { uri: 'file:long.flac' });
    await delay(SETTLE_MS);
    const start = { daemon: cpuMs(daemon.pid), mpd: cpuMs(mpdPid), bytes: probe.bytes, at: performance.now() };
    await delay(playingWindowMs);
    const end = { daemon: cpuMs(daemon.pid), mpd: cpuMs(mpdPid), bytes: probe.bytes, at: performance.now() };
    const playing = { daemon: readMemory(daemon.pid).rss, mpd: readMemory(mpdPid).rss, mpdPrivate: privateKb(mpdPid) };
    await request(daemon, agent, 'POST', `/api/players/${player.id}/stop`);
    const audioSeconds = (end.bytes - start.bytes) / PCM_BYTES_PER_SECOND;
    const wallSeconds = (end.at - start.at) / 1000;
    const perAudioSecond = (usedMs: number) => (audioSeconds > 0 ? usedMs / audioSeconds : Number.NaN);

    const daemonSummary = summarize(daemonTimes);
    const engineSummary = summarize(engineTimes);
    const times = (list: number[]) => list.map((v) => Math.round(v)).join('/');
    return [
      makeRow({
        section: 'playback',
        name: `POST …/play → first PCM byte on the FIFO, p50 (${runs} rounds)`,
        value: daemonSummary.p50,
        unit: 'ms',
        baseline: engineSummary.p50,
        note: `baseline: the engine alone (drivers/mpd in the bench process, its own mpd), rounds interleaved; the ratio is what the daemon adds (HTTP, auth, the player's checks and events)`,
        details: { daemon: daemonSummary, engine: engineSummary },
      }),
      makeRow({
        section: 'playback',
        name: `POST …/play → first PCM byte on the FIFO, p99 (${runs} rounds)`,
        value: daemonSummary.p99,
        unit: 'ms',
        baseline: engineSummary.p99,
        note: `daemon rounds ${times(daemonTimes)} ms; engine ${times(engineTimes)} ms`,
      }),
      makeRow({
        section: 'playback',
        name: 'daemon RSS, one stream player idle (mpd up, nothing playing)',
        value: kbToMB(idle.daemon),
        unit: 'MB',
        baseline: kbToMB(daemonBefore),
        note: 'baseline: the same daemon before the stream player was made',
      }),
      makeRow({
        section: 'playback',
        name: 'daemon RSS while playing FLAC',
        value: kbToMB(playing.daemon),
        unit: 'MB',
        baseline: kbToMB(idle.daemon),
        note: 'baseline: idle',
      }),
      makeRow({
        section: 'playback',
        name: 'mpd RSS idle',
        value: kbToMB(idle.mpd),
        unit: 'MB',
        note: `private (Private_Dirty + Private_Clean) ${kbToMB(idle.mpdPrivate).toFixed(1)} MB; the rest is shared libraries`,
      }),
      makeRow({
        section: 'playback',
        name: 'mpd RSS while playing FLAC',
        value: kbToMB(playing.mpd),
        unit: 'MB',
        baseline: kbToMB(idle.mpd),
        note: `baseline: idle; private ${kbToMB(playing.mpdPrivate).toFixed(1)} MB`,
      }),
      makeRow({
        section: 'playback',
        name: 'daemon CPU per second of FLAC played',
        value: perAudioSecond(end.daemon - start.daemon),
        unit: 'ms',
        note: `${(end.daemon - start.daemon).toFixed(1)} ms over ${audioSeconds.toFixed(1)} s of audio (${wallSeconds.toFixed(1)} s wall; every thread's schedstat in /proc): the position tick and events`,
      }),
      makeRow({
        section: 'playback',
        name: 'mpd CPU per second of FLAC played',
        value: perAudioSecond(end.mpd - start.mpd),
        unit: 'ms',
        note: `${(end.mpd - start.mpd).toFixed(1)} ms over ${audioSeconds.toFixed(1)} s of audio: decoding 44.1 kHz stereo FLAC into the FIFO`,
      }),
    ];
  } finally {
    // Every mpd, daemon, connection and folder this section made, newest first.
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}
