// The casting part of `npm run bench:playback`: the casting runtime (daemon/domain/playback/casting.ts) in this
// process with Debian's squeezelite and a stand-in slimproto server, against the same squeezelite writing straight
// into a FIFO, in the same run: the server's `strm s` → the tone's first sample on the FIFO, and this process's CPU
// per second of a cast.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Casting } from '../../../daemon/domain/playback/casting.js';
import { createLogger } from '../../../daemon/log.js';
import { squeezelite } from '../../../drivers/receivers/squeezelite.js';
import { soxTone } from '../../helpers/receiver-checks.js';
import { SlimprotoServer, UNITY_GAIN } from '../../helpers/slimproto-server.js';
import { waitFor } from '../../helpers/wait-for.js';
import { delay, PCM_BYTES_PER_SECOND } from './pcm-probe.js';
import { median, type Summary, summarize } from './stats.js';

const SOUND_LIMIT_MS = 10_000;
/** The tone's samples peak at half of full scale; anything this loud is the tone, not silence or a resampler's edge. */
const TONE_FLOOR = 1_000;

/** A sink reading at the PCM's rate reads a period's worth at a time, as snapserver reads a pipe (20 ms chunks). */
const PERIOD_MS = 20;
/** CPU windows per path, alternating between the two, each windowMs / 2 long. */
const WINDOW_ROUNDS = 4;

/**
 * Reads a FIFO (opened read-write, so it never sees end-of-file). `all`: everything as it comes, through libuv's pipe
 * handle (epoll); `paced`: a period's worth every PERIOD_MS, at the PCM's own rate, as a sound card or snapserver
 * reads (the writer waits on the full FIFO meanwhile; a period that finds nothing is not made up later, a sink plays
 * silence for it); `held`: nothing (the writer blocks, costing no CPU).
 */
class CastProbe {
  bytes = 0;
  private readonly fd: number;
  private readonly socket: Socket;
  private readonly buffer = Buffer.alloc(1 << 16);
  private waiter: ((at: number) => void) | undefined;
  private pacedFrom = 0;
  private pacedBytes = 0;
  private tick: NodeJS.Timeout | undefined;
  constructor(file: string) {
    this.fd = openSync(file, constants.O_RDWR | constants.O_NONBLOCK);
    this.socket = new Socket({ fd: this.fd, readable: true, writable: false });
    this.socket.on('data', (chunk: Buffer) => this.take(chunk, performance.now()));
  }
  read(mode: 'all' | 'paced' | 'held'): void {
    clearTimeout(this.tick);
    if (mode === 'all') return void this.socket.resume();
    this.socket.pause();
    if (mode === 'held') return;
    this.pacedFrom = performance.now();
    this.pacedBytes = 0;
    this.period();
  }
  /** Resolves with the time the next sample of the tone (not silence) was read. */
  nextSound(): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no tone within ${SOUND_LIMIT_MS} ms`)), SOUND_LIMIT_MS);
      this.waiter = (at) => {
        clearTimeout(timer);
        resolve(at);
      };
    });
  }
  close(): void {
    clearTimeout(this.tick);
    this.socket.destroy();
  }
  private period(): void {
    const at = performance.now();
    const due = ((at - this.pacedFrom) * PCM_BYTES_PER_SECOND) / 1000;
    let budget = Math.floor((due - this.pacedBytes) / 4) * 4;
    while (budget > 0) {
      let n = 0;
      try {
        n = readSync(this.fd, this.buffer, 0, Math.min(budget, this.buffer.length), null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      }
      if (n === 0) {
        // Nothing to read: the sink played silence for the rest of this period.
        this.pacedBytes = due;
        break;
      }
      this.pacedBytes += n;
      budget -= n;
      this.take(this.buffer.subarray(0, n), at);
    }
    this.tick = setTimeout(() => this.period(), PERIOD_MS);
  }
  private take(chunk: Buffer, at: number): void {
    this.bytes += chunk.length;
    if (!this.waiter) return;
    for (let i = 0; i + 1 < chunk.length; i += 2) {
      if (Math.abs(chunk.readInt16LE(i)) < TONE_FLOOR) continue;
      this.waiter(at);
      this.waiter = undefined;
      return;
    }
  }
}

/** Squeezelite started as the casting runtime starts it, but with its standard output on the FIFO itself. */
async function bareSqueezelite(dir: string, fifo: string, server: string): Promise<ChildProcess> {
  const playerId = randomUUID();
  const folder = path.join(dir, 'bare-squeezelite');
  mkdirSync(folder, { mode: 0o700 });
  const launch = squeezelite.launch({
    playerId,
    name: 'Bare',
    output: { kind: 'fifo', path: fifo },
    listenHost: '127.0.0.1',
    dir: folder,
    server,
  });
  const out = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  // Tied to this process's life as the supervisor ties a receiver (setpriv execs squeezelite: the pid is its own).
  const child = spawn('setpriv', ['--pdeathsig', 'SIGTERM', '--', 'squeezelite', ...launch.args], {
    cwd: folder,
    stdio: ['ignore', out, 'ignore'],
  });
  closeSync(out);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return child;
}

export interface CastFigures {
  runs: number;
  /** `strm s` → the tone's first sample on the FIFO (read as fast as it fills), ms, with every round's figure. */
  toneOnFifo: {
    casting: Summary;
    bare: Summary;
    rounds: Record<'casting' | 'bare' | 'castingStm' | 'bareStm' | 'castingPaced' | 'barePaced', number[]>;
  };
  /** The same with the FIFO read at the PCM's rate, a period at a time: what a sink (and a listener) gets. */
  toneReadAtPcmRate: { casting: Summary; bare: Summary };
  /** `strm s` → the player's STMs (its output reached the track) at the server, ms. */
  trackStarted: { casting: Summary; bare: Summary };
  /** This process's CPU (ms) per second of audio read from the FIFO, and squeezelite's, over all windows and per window. */
  cpuPerAudioSecond: {
    casting: { bench: number; squeezelite: number; audioSeconds: number; rounds: number[] };
    bare: { bench: number; squeezelite: number; audioSeconds: number; rounds: number[] };
    /** The median over the rounds of the runtime's window less the bare one's: what the runtime adds. */
    addedMedian: number;
    idleReceiver: { bench: number; wallSeconds: number };
  };
}

/**
 * Runs the casting benchmark in `dir` (removed by the caller): `runs` rounds after `warmup`, the two paths interleaved,
 * then a CPU window of `windowMs` with the receiver idle and WINDOW_ROUNDS alternating windows of `windowMs / 2` per
 * path after one of warm-up; every process and server it starts is ended through `cleanups`.
 */
export async function benchCast(
  dir: string,
  options: { runs: number; warmup: number; windowMs: number },
  cleanups: Array<() => unknown>,
): Promise<CastFigures> {
  const tone = path.join(dir, 'cast-tone.flac');
  soxTone(tone, Math.ceil((3 * options.windowMs) / 1000) + 15);
  const fifos = path.join(dir, 'cast-fifos');
  mkdirSync(fifos, { mode: 0o700 });
  const castFifo = path.join(fifos, 'cast.pcm');
  const bareFifo = path.join(fifos, 'bare.pcm');
  execFileSync('mkfifo', ['-m', '600', castFifo, bareFifo]);

  const castServer = await SlimprotoServer.start(tone);
  cleanups.push(() => castServer.close());
  const bareServer = await SlimprotoServer.start(tone);
  cleanups.push(() => bareServer.close());
  const castProbe = new CastProbe(castFifo);
  cleanups.push(() => castProbe.close());
  const bareProbe = new CastProbe(bareFifo);
  cleanups.push(() => bareProbe.close());

  const playerId = randomUUID();
  const casting = new Casting({
    stateDir: path.join(dir, 'cast-state'),
    listenHost: '127.0.0.1',
    player: (id) => (id === playerId ? { name: 'Bench', output: { kind: 'fifo', path: castFifo } } : undefined),
    pauseMpd: async () => undefined,
    setGroupVolume: async () => undefined,
    log: createLogger('warn', { write: () => undefined }),
  });
  mkdirSync(path.join(dir, 'cast-state'), { mode: 0o700 });
  cleanups.push(() => casting.stop());
  await casting.apply(playerId, [{ kind: 'squeezelite', server: castServer.address }]);
  const bare = await bareSqueezelite(dir, bareFifo, bareServer.address);
  cleanups.push(async () => {
    if (bare.exitCode !== null || bare.signalCode !== null) return;
    const exited = new Promise((resolve) => bare.once('exit', resolve));
    // SIGKILL: on SIGTERM squeezelite waits for its output thread, which waits on a FIFO nobody reads any more.
    bare.kill('SIGKILL');
    await exited;
  });
  for (const server of [castServer, bareServer]) {
    await server.hello();
    // With `-o -` squeezelite writes silence until the server's first volume, which a server sends on connection.
    server.volume(UNITY_GAIN, false);
  }

  /**
   * One round: the server says play, the probe waits for the tone, then the server stops it and the player flushes.
   * Gives the time to the tone and to the player's STMs (the track started on its output).
   */
  const round = async (server: SlimprotoServer, probe: CastProbe): Promise<[number, number]> => {
    const sound = probe.nextSound();
    const stats = server.stats.length;
    const started = performance.now();
    const reported = server.stat('STMs', stats).then(() => performance.now());
    server.play();
    const at = await sound;
    const startedAt = await reported;
    server.command('q');
    await server.stat('STMf', stats);
    return [at - started, startedAt - started];
  };

  const times = {
    casting: [] as number[],
    bare: [] as number[],
    castingStm: [] as number[],
    bareStm: [] as number[],
    castingPaced: [] as number[],
    barePaced: [] as number[],
  };
  const castIdle = () =>
    waitFor(() => casting.state(playerId, 'squeezelite').cast === 'idle', undefined, {
      what: 'the cast to read as idle after the server stopped it',
    });
  // The bare squeezelite writes silence as fast as the FIFO is read: it is read only during its own rounds.
  bareProbe.read('held');
  for (let i = 0; i < options.runs + options.warmup; i++) {
    const got: Array<[number, number]> = [];
    for (const mode of ['all', 'paced'] as const) {
      castProbe.read(mode);
      await delay(300);
      got.push(await round(castServer, castProbe));
      await castIdle();
      // Read at once, what the bare squeezelite wrote before it blocked (silence) is read away first; read at the
      // PCM's rate, the FIFO stays full of silence, as under a sink that reads it all along.
      bareProbe.read(mode);
      await delay(300);
      got.push(await round(bareServer, bareProbe));
      bareProbe.read('held');
    }
    if (i < options.warmup) continue;
    times.casting.push(got[0]![0]);
    times.castingStm.push(got[0]![1]);
    times.bare.push(got[1]![0]);
    times.bareStm.push(got[1]![1]);
    times.castingPaced.push(got[2]![0]);
    times.barePaced.push(got[3]![0]);
  }
  castProbe.read('held');

  /** This process's and squeezelite's CPU over `ms` while `probe` reads at the PCM's rate (none: nothing read). */
  const window = async (ms: number, probe: CastProbe | undefined, squeezelitePid: number | undefined) => {
    probe?.read('paced');
    await delay(500);
    const bytes0 = probe?.bytes ?? 0;
    const cpu0 = process.cpuUsage();
    const sq0 = squeezelitePid === undefined ? 0 : schedMs(squeezelitePid);
    const at0 = performance.now();
    await delay(ms);
    const cpu = process.cpuUsage(cpu0);
    const sq = squeezelitePid === undefined ? 0 : schedMs(squeezelitePid) - sq0;
    const wallSeconds = (performance.now() - at0) / 1000;
    const audioSeconds = ((probe?.bytes ?? 0) - bytes0) / PCM_BYTES_PER_SECOND;
    probe?.read('held');
    return { benchMs: (cpu.user + cpu.system) / 1000, squeezeliteMs: sq, audioSeconds, wallSeconds };
  };

  // A server talks to its player every few seconds (Lyrion's `strm t`); squeezelite drops a server silent for 35 s.
  // The same volume again is such a message, and an echo to the runtime, which sets nothing for it.
  const keepAlive = setInterval(() => {
    for (const server of [castServer, bareServer]) server.volume(UNITY_GAIN, false);
  }, 5_000);
  cleanups.push(() => clearInterval(keepAlive));
  // A receiver switched on and idle: the runtime reads its silence at the PCM's rate and drops it.
  const idle = await window(options.windowMs, undefined, undefined);
  // Both squeezelites play the tone; each FIFO is read at the PCM's rate in its own windows, the two alternating, and
  // held between (its squeezelite then waits on a full FIFO, costing nothing here).
  for (const [server, probe] of [
    [castServer, castProbe],
    [bareServer, bareProbe],
  ] as const) {
    probe.read('paced');
    const sound = probe.nextSound();
    server.play();
    await sound;
    probe.read('held');
  }
  // The supervisor's child: the squeezelite this process started other than the bare one.
  const castPid = findChild(bare.pid!);
  type Window = Awaited<ReturnType<typeof window>>;
  const castWindows: Window[] = [];
  const bareWindows: Window[] = [];
  // A first round of each warms up (its figures are higher for both paths, the runtime's most), not counted.
  for (let i = -1; i < WINDOW_ROUNDS; i++) {
    const viaCasting = await window(options.windowMs / 2, castProbe, castPid);
    const viaBare = await window(options.windowMs / 2, bareProbe, bare.pid);
    if (i < 0) continue;
    castWindows.push(viaCasting);
    bareWindows.push(viaBare);
  }
  clearInterval(keepAlive);
  castServer.command('q');
  bareServer.command('q');
  const perAudioSecond = (windows: Window[]) => {
    const audioSeconds = windows.reduce((sum, w) => sum + w.audioSeconds, 0);
    return {
      bench: windows.reduce((sum, w) => sum + w.benchMs, 0) / audioSeconds,
      squeezelite: windows.reduce((sum, w) => sum + w.squeezeliteMs, 0) / audioSeconds,
      audioSeconds,
      rounds: windows.map((w) => w.benchMs / w.audioSeconds),
    };
  };

  return {
    runs: options.runs,
    toneOnFifo: { casting: summarize(times.casting), bare: summarize(times.bare), rounds: times },
    toneReadAtPcmRate: { casting: summarize(times.castingPaced), bare: summarize(times.barePaced) },
    trackStarted: { casting: summarize(times.castingStm), bare: summarize(times.bareStm) },
    cpuPerAudioSecond: {
      casting: perAudioSecond(castWindows),
      bare: perAudioSecond(bareWindows),
      addedMedian: median(
        castWindows.map((w, i) => w.benchMs / w.audioSeconds - bareWindows[i]!.benchMs / bareWindows[i]!.audioSeconds),
      ),
      idleReceiver: { bench: idle.benchMs / idle.wallSeconds, wallSeconds: idle.wallSeconds },
    },
  };
}

/** CPU time of every thread of `pid`, ms (schedstat: nanoseconds, finer than stat's clock ticks). */
function schedMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ')[0]);
    } catch {
      // The thread ended while it was read.
    }
  }
  return ns / 1e6;
}

/** The pid of a squeezelite child of this process other than `except`. */
function findChild(except: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === except) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid && stat.includes('(squeezelite)')) return Number(entry);
    } catch {
      // It ended while /proc was read.
    }
  }
  return undefined;
}
