// Stream player engine: play request → first PCM byte on the FIFO against the same MPD driven by bare protocol
// commands (measured in the same run), memory of the engine's process and of MPD idle and playing FLAC, CPU while
// playing; then casting: a squeezelite cast through the casting runtime against squeezelite straight into a FIFO
// (npm run bench:playback; needs mpd, sox and squeezelite; -- --quick for fewer runs, -- --cast-only for casting alone).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { musicRootOf, playerFiles, renderConfig, writePlayerConfig } from '../../drivers/mpd/config.js';
import { MpdConnection } from '../../drivers/mpd/connection.js';
import { systemClock } from '../../drivers/mpd/engine.js';
import { MpdProcess } from '../../drivers/mpd/process.js';
import { squeezelite } from '../../drivers/receivers/squeezelite.js';
import { findProgram } from '../../drivers/receivers/supervisor.js';
import { tempDir } from '../helpers/daemon.js';
import { MPD, tone } from '../helpers/mpd-rig.js';
import { benchCast, type CastFigures } from './lib/cast-bench.js';
import { delay, engineWithFifo, type FifoProbe, fifoWithProbe, firstByte } from './lib/pcm-probe.js';
import { readCpuMs, readLoadAverage, readMemory, readSmapsRollup } from './lib/proc.js';
import { type Summary, summarize } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const castOnly = process.argv.includes('--cast-only');
const RUNS = quick ? 10 : 40;
const WARMUP = 3;
const PLAYING_WINDOW_MS = quick ? 4_000 : 10_000;

const cleanups: Array<() => unknown> = [];
const ms = (s: Summary) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms (n=${s.count})`;
const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;

/**
 * The baseline: the same mpd with the same generated config, started without an engine and told to play by one
 * command list on a plain connection.
 */
async function bareMpd(
  stateDir: string,
  music: string,
): Promise<{ connection: MpdConnection; probe: FifoProbe; stop: () => Promise<void> }> {
  // The FIFO beside the player's state folder: a FIFO output may not be inside it.
  const { fifo, probe } = fifoWithProbe(stateDir, 'bare');
  const files = playerFiles(path.join(stateDir, 'bare-state'), 'bare');
  const musicRoot = musicRootOf(music);
  writePlayerConfig(
    files,
    renderConfig({ files, musicRoot, output: { kind: 'fifo', path: fifo }, logLevel: 'warning' }),
  );
  // Confined as the engine's mpd is: the music folder to read, the FIFO's folder to write.
  const confinement = { musicRoot, outputFolder: path.dirname(fifo) };
  const proc = await MpdProcess.spawn({
    mpdPath: MPD,
    files,
    clock: systemClock,
    log: () => undefined,
    startTimeoutMs: 20_000,
    stopTimeoutMs: 5_000,
    ...confinement,
  });
  const connection = await proc.ready(() =>
    MpdConnection.connect(files.socket, { clock: systemClock, timeoutMs: 10_000 }),
  );
  // The database is written on the first start: wait for that scan, as the engine's first play would.
  while ((await connection.request(['status']))[0]!.some(([key]) => key === 'updating_db')) await delay(50);
  const stop = async () => {
    connection.close();
    probe.close();
    await proc.stop();
  };
  cleanups.push(stop);
  return { connection, probe, stop };
}

async function main(): Promise<void> {
  const loadBefore = readLoadAverage();
  const dir = tempDir('azc-bench-playback-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const mpdReport = castOnly ? undefined : await benchMpd(dir);
  // The casting part needs Debian's squeezelite: without it, it says so and the MPD figures stand alone.
  const missing = squeezeliteMissing();
  const cast = missing
    ? undefined
    : await benchCast(dir, { runs: RUNS, warmup: WARMUP, windowMs: PLAYING_WINDOW_MS }, cleanups);
  const loadAfter = readLoadAverage();
  const report = [
    `load average (1 min): ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (2 cores; above ~1 the figures are noisy)`,
    ...(mpdReport?.lines ?? []),
    ...(cast
      ? castLines(cast, mpdReport?.result.cpuWhilePlayingFlac.engineProcessCoreShare)
      : [`casting: not measured, ${missing}`]),
  ];
  process.stdout.write(`${report.join('\n')}\n`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(
    path.join('bench-results', `playback-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    `${JSON.stringify({ loadAverage: { before: loadBefore, after: loadAfter }, mpd: mpdReport?.result, cast }, null, 2)}\n`,
  );
}

/** Why the casting part cannot run here (squeezelite not in PATH), or undefined. */
function squeezeliteMissing(): string | undefined {
  try {
    findProgram(squeezelite);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The casting figures as report lines; `mpdCoreShare`: the engine process's share of a core while MPD plays. */
function castLines(cast: CastFigures, mpdCoreShare: number | undefined): string[] {
  const { casting, bare, idleReceiver, addedMedian } = cast.cpuPerAudioSecond;
  return [
    `cast start (strm s) → the tone on the FIFO, squeezelite straight into it (baseline): ${ms(cast.toneOnFifo.bare)}`,
    `cast start (strm s) → the tone on the FIFO, through the casting runtime:             ${ms(cast.toneOnFifo.casting)}  (+${(cast.toneOnFifo.casting.p50 - cast.toneOnFifo.bare.p50).toFixed(1)} ms at p50)`,
    `cast start (strm s) → the tone read by a sink at the PCM's rate (20 ms periods), squeezelite straight into the FIFO: ${ms(cast.toneReadAtPcmRate.bare)}`,
    `cast start (strm s) → the tone read by a sink at the PCM's rate (20 ms periods), through the runtime:         ${ms(cast.toneReadAtPcmRate.casting)}  (${(cast.toneReadAtPcmRate.casting.p50 - cast.toneReadAtPcmRate.bare.p50).toFixed(1)} ms at p50)`,
    `cast start (strm s) → the player's STMs at the server: ${ms(cast.trackStarted.bare)} straight, ${ms(cast.trackStarted.casting)} under the runtime`,
    `CPU per second of a cast (FIFO read at the PCM's rate): bench process ${casting.bench.toFixed(2)} ms through the runtime, ${bare.bench.toFixed(2)} ms with squeezelite straight into the FIFO (the runtime adds ${addedMedian.toFixed(2)} ms, median of the rounds' differences); squeezelite ${casting.squeezelite.toFixed(1)} / ${bare.squeezelite.toFixed(1)} ms (over ${casting.audioSeconds.toFixed(1)} / ${bare.audioSeconds.toFixed(1)} s of audio, ${casting.rounds.length} alternating windows each; per window ${casting.rounds.map((r) => r.toFixed(1)).join('/')} and ${bare.rounds.map((r) => r.toFixed(1)).join('/')} ms)`,
    `CPU per second, a receiver switched on and idle (its silence read and dropped at the PCM's rate): ${idleReceiver.bench.toFixed(2)} ms`,
    ...(mpdCoreShare === undefined
      ? []
      : [`CPU per second of MPD playing FLAC, engine process (above): ${(mpdCoreShare * 1000).toFixed(2)} ms`]),
  ];
}

/** The engine and bare MPD figures, measured in `dir`. */
async function benchMpd(dir: string) {
  const music = path.join(dir, 'music');
  mkdirSync(music);
  tone(path.join(music, 'short.flac'), 5, 440, { title: 'Short' });
  tone(path.join(music, 'long.flac'), 60, 330, { title: 'Long' });

  const rssBefore = readMemory(process.pid);
  const engineSide = await engineWithFifo(dir, music, 'engine', cleanups);
  const bare = await bareMpd(dir, music);
  const raw = bare.connection;

  const engineTimes: number[] = [];
  const bareTimes: number[] = [];
  for (let i = 0; i < RUNS + WARMUP; i++) {
    const viaEngine = await firstByte(
      engineSide.probe,
      () => engineSide.engine.playUri('file:short.flac'),
      () => engineSide.engine.stopPlayback(),
    );
    const viaBare = await firstByte(
      bare.probe,
      () => raw.request(['clear', 'add "short.flac"', 'play']),
      () => raw.request(['stop']),
    );
    if (i >= WARMUP) {
      engineTimes.push(viaEngine);
      bareTimes.push(viaBare);
    }
  }
  await engineSide.engine.stopPlayback();
  await bare.stop();

  await delay(1_000);
  const mpdPid = engineSide.engine.pid!;
  const privateKb = (pid: number) => {
    const smaps = readSmapsRollup(pid);
    return smaps ? smaps.privateDirty + smaps.privateClean : Number.NaN;
  };
  const idle = { engine: readMemory(process.pid), mpd: readMemory(mpdPid), mpdPrivate: privateKb(mpdPid) };
  await engineSide.engine.playUri('file:long.flac');
  await delay(1_000);
  const cpu0 = { mpd: readCpuMs(mpdPid), engine: readCpuMs(process.pid), at: performance.now() };
  await delay(PLAYING_WINDOW_MS);
  const cpu1 = { mpd: readCpuMs(mpdPid), engine: readCpuMs(process.pid), at: performance.now() };
  const playing = { engine: readMemory(process.pid), mpd: readMemory(mpdPid), mpdPrivate: privateKb(mpdPid) };
  // Quiet before the casting figures.
  await engineSide.engine.stopPlayback();
  const wall = cpu1.at - cpu0.at;

  const result = {
    runs: RUNS,
    firstPcmByte: { engine: summarize(engineTimes), bareProtocol: summarize(bareTimes) },
    ratioP50: summarize(engineTimes).p50 / summarize(bareTimes).p50,
    memoryKb: {
      benchProcessBeforeEngines: rssBefore.rss,
      idle: { engineProcess: idle.engine.rss, mpd: idle.mpd.rss, mpdPrivate: idle.mpdPrivate },
      playingFlac: { engineProcess: playing.engine.rss, mpd: playing.mpd.rss, mpdPrivate: playing.mpdPrivate },
    },
    cpuWhilePlayingFlac: {
      mpdCoreShare: (cpu1.mpd - cpu0.mpd) / wall,
      engineProcessCoreShare: (cpu1.engine - cpu0.engine) / wall,
      windowMs: Math.round(wall),
    },
  };
  const report = [
    `play request → first PCM byte, bare MPD protocol (baseline): ${ms(result.firstPcmByte.bareProtocol)}`,
    `play request → first PCM byte, through the engine:           ${ms(result.firstPcmByte.engine)}  (${result.ratioP50.toFixed(2)}× baseline p50)`,
    // The engine runs inside this tsx process: its RSS is mostly the harness, shown beside the figure from before.
    `RSS idle:         engine process ${mb(idle.engine.rss)} (${mb(rssBefore.rss)} before the engines), mpd ${mb(idle.mpd.rss)} (private ${mb(idle.mpdPrivate)})`,
    `RSS playing FLAC: engine process ${mb(playing.engine.rss)}, mpd ${mb(playing.mpd.rss)} (private ${mb(playing.mpdPrivate)})`,
    `CPU playing FLAC: mpd ${(result.cpuWhilePlayingFlac.mpdCoreShare * 100).toFixed(1)}% of a core, engine process ${(result.cpuWhilePlayingFlac.engineProcessCoreShare * 100).toFixed(1)}% (over ${Math.round(wall)} ms)`,
  ];
  return { result, lines: report };
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  // Every mpd, connection and folder this run made, newest first.
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
}
