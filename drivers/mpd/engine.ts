// A stream player's engine: its own mpd, started, watched and restarted with back-off, playback given back after a crash.
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import {
  type PlaybackEngine,
  type PlaybackEngineOptions,
  PlaybackError,
  type PlaybackEvent,
  type PlaybackListener,
  type PlaybackSnapshot,
  type PlaybackStatus,
  placeFifo,
} from '../playback.js';
import {
  type ConfigInput,
  musicRootOf,
  type PlayerFiles,
  playerFiles,
  renderConfig,
  writePlayerConfig,
} from './config.js';
import { MpdConnection } from './connection.js';
import { MpdLibrary } from './library.js';
import { MpdPlayer } from './player.js';
import { findMpd, type Log, MpdProcess } from './process.js';
import { command, field } from './protocol.js';

export interface MpdTiming {
  /** Each command's answer. */
  commandTimeoutMs: number;
  /** From spawn to the socket's greeting. */
  startTimeoutMs: number;
  /** From SIGTERM to SIGKILL. */
  stopTimeoutMs: number;
  /** The first restart waits this long, each next one twice as long, up to restartMaxMs. */
  restartFirstMs: number;
  restartMaxMs: number;
  /** A run this long resets the back-off. */
  stableMs: number;
  /** Position ticks while playing. */
  tickMs: number;
  /** A scan of one folder before a new file plays. */
  updateTimeoutMs: number;
}

export const DEFAULT_TIMING: MpdTiming = {
  commandTimeoutMs: 10_000,
  startTimeoutMs: 20_000,
  stopTimeoutMs: 5_000,
  restartFirstMs: 1_000,
  restartMaxMs: 30_000,
  stableMs: 60_000,
  tickMs: 1_000,
  updateTimeoutMs: 60_000,
};

export interface MpdEngineOptions extends PlaybackEngineOptions {
  /** The mpd program: a path, or a name looked up in PATH (`mpd`). */
  mpdPath?: string;
  timing?: Partial<MpdTiming>;
  logLevel?: ConfigInput['logLevel'];
  /**
   * Hosts (`host`: any port) and places (`host:port`) a stream may come from besides a usual port (80, 443,
   * 8000–8999) of a host other than this machine: playback.streamHosts.
   */
  streamHosts?: readonly string[];
}

/** The system clock; its timers never keep the process alive by themselves. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fire, ms) => setTimeout(fire, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How long a broken idle connection waits for mpd's exit before it takes mpd for stuck. */
const IDLE_GRACE_MS = 2_000;

/** mpd's log line for a track that failed (domain "exception", at error level, so kept at log_level warning). */
const TRACK_FAILURE = /^exception: (Failed to (?:decode|open) .*)$/;

type Phase = 'new' | 'starting' | 'up' | 'down' | 'stopped';

export class MpdEngine implements PlaybackEngine {
  readonly id: string;
  readonly library: MpdLibrary;
  private readonly timing: MpdTiming;
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly files: PlayerFiles;
  private readonly player: MpdPlayer;
  private readonly listeners = new Set<PlaybackListener>();
  private musicRoot = '';
  /** The real folder of a FIFO output, which mpd writes in (confinement). */
  private outputFolder: string | undefined;
  private phase: Phase = 'new';
  private proc: MpdProcess | undefined;
  private command: Promise<MpdConnection> | undefined;
  private idle: MpdConnection | undefined;
  private restartTimer: unknown = undefined;
  private restartDelay: number;
  private upSince = 0;
  /** Counts MPD's `update` idle events, so a wait never misses one that came between a read and the wait. */
  private updates = 0;
  private updateWaiters = new Set<{ wake: () => void; fail: (err: Error) => void }>();

  constructor(private readonly options: MpdEngineOptions) {
    this.id = options.id;
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.clock = options.clock ?? systemClock;
    this.restartDelay = this.timing.restartFirstMs;
    this.files = playerFiles(options.stateDir, options.id);
    this.log = (level, msg, fields) => {
      try {
        options.log?.(level, msg, { player: options.id, ...fields });
      } catch {
        // A broken logger must not stop the music.
      }
    };
    const link = {
      clock: this.clock,
      tickMs: this.timing.tickMs,
      musicRoot: () => this.musicRoot,
      streamHosts: options.streamHosts ?? [],
      connection: () => this.connection(),
      update: (folder: string) => this.update(folder, this.timing.updateTimeoutMs),
      emit: (event: PlaybackEvent) => this.emit(event),
      log: (level: 'debug' | 'warn', msg: string) => this.log(level, msg),
    };
    this.player = new MpdPlayer(link);
    this.library = new MpdLibrary({
      musicRoot: () => this.musicRoot,
      connection: () => this.connection(),
      update: (folder) => this.update(folder, null),
      scanning: (scanning) => this.emit({ type: 'library', scanning }),
    });
  }

  get up(): boolean {
    return this.phase === 'up';
  }

  /** The engine process's pid while it runs (for benchmarks and tests that look at it). */
  get pid(): number | undefined {
    return this.proc?.running ? this.proc.pid : undefined;
  }

  onEvent(listener: PlaybackListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): PlaybackStatus {
    return this.player.status();
  }

  async start(): Promise<void> {
    if (this.phase === 'up' || this.phase === 'starting' || this.phase === 'down') return;
    const mpdPath = findMpd(this.options.mpdPath);
    this.musicRoot = musicRootOf(this.options.musicDir);
    this.writeConfig();
    this.phase = 'starting';
    try {
      await this.bringUp(mpdPath);
      await this.firstScan();
      await this.player.recover({ queue: [], index: null, positionMs: 0, state: 'stopped' });
    } catch (err) {
      await this.stop();
      throw err instanceof PlaybackError
        ? err
        : new PlaybackError('failed', `the player's MPD could not start: ${(err as Error).message}`);
    }
    this.emit({ type: 'engine', up: true, recovery: 'fresh' });
  }

  async stop(): Promise<void> {
    this.phase = 'stopped';
    this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.player.halt();
    this.closeConnections(new PlaybackError('engine-down', "the player's MPD was stopped"));
    const proc = this.proc;
    this.proc = undefined;
    await proc?.stop();
  }

  // Transport: the player does the work; this engine only says whether MPD is there to do it.
  playQueue(uris: string[], index?: number, positionMs?: number) {
    return this.player.playQueue(uris, index, positionMs);
  }
  playUri(uri: string) {
    return this.player.playQueue([uri]);
  }
  play(index: number) {
    return this.player.play(index);
  }
  pause() {
    return this.player.pause();
  }
  resume() {
    return this.player.resume();
  }
  stopPlayback() {
    return this.player.stopPlayback();
  }
  next() {
    return this.player.next();
  }
  previous() {
    return this.player.previous();
  }
  seek(positionMs: number) {
    return this.player.seek(positionMs);
  }
  replaceQueue(uris: string[], at: { current: number } | { next: number }) {
    return this.player.replaceQueue(uris, at);
  }
  snapshot() {
    return this.player.snapshot();
  }
  restore(snapshot: PlaybackSnapshot) {
    return this.player.restore(snapshot);
  }

  private writeConfig(): void {
    const { output, listen } = this.options;
    const input: ConfigInput = {
      files: this.files,
      musicRoot: this.musicRoot,
      output,
      logLevel: this.options.logLevel ?? 'warning',
    };
    if (listen) input.listen = listen;
    writePlayerConfig(this.files, renderConfig(input));
    // renderConfig checked the FIFO's place: this is the folder mpd was handed it in.
    const fifo = output.kind === 'fifo' ? placeFifo(output.path, this.options.stateDir).path : undefined;
    this.outputFolder = fifo === undefined ? undefined : path.dirname(fifo);
  }

  private async bringUp(mpdPath: string): Promise<void> {
    const { startTimeoutMs, stopTimeoutMs } = this.timing;
    const onLine = (line: string) => {
      // MPD clears a track's error from `status` as soon as the next track starts; its log keeps the words.
      const failure = TRACK_FAILURE.exec(line);
      if (failure) this.player.mpdSaid(failure[1]!);
      return failure !== null;
    };
    const { musicRoot, outputFolder } = this;
    const confinement = { musicRoot, ...(outputFolder === undefined ? {} : { outputFolder }) };
    const proc = await MpdProcess.spawn({
      mpdPath,
      files: this.files,
      clock: this.clock,
      log: this.log,
      startTimeoutMs,
      stopTimeoutMs,
      onLine,
      ...confinement,
    });
    this.proc = proc;
    void proc.exited.then((exit) => this.exited(proc, proc.describeExit(exit)));
    try {
      const first = await proc.ready(() => this.connect());
      this.idle = await this.connect();
      this.command = Promise.resolve(first);
    } catch (err) {
      await proc.stop();
      throw err;
    }
    if (this.phase === 'stopped')
      throw new PlaybackError('engine-down', "the player's MPD was stopped while it started");
    this.phase = 'up';
    this.upSince = this.clock.now();
    void this.idleLoop(this.idle, proc);
  }

  private connect(): Promise<MpdConnection> {
    return MpdConnection.connect(this.files.socket, { clock: this.clock, timeoutMs: this.timing.commandTimeoutMs });
  }

  /** The command connection, opened again if MPD closed it; engine-down while MPD is not up. */
  private connection(): Promise<MpdConnection> {
    if (this.phase !== 'up') {
      const why = this.phase === 'down' ? 'is restarting' : 'is not running';
      return Promise.reject(new PlaybackError('engine-down', `the player's MPD ${why}: try again in a moment`));
    }
    const current = this.command;
    const reopen = () => (this.command = this.connect());
    if (!current) return reopen();
    return current.then(
      (connection) => (connection.closed ? (this.command === current ? reopen() : this.command!) : connection),
      () => (this.command === current ? reopen() : this.command!),
    );
  }

  private async idleLoop(idle: MpdConnection, proc: MpdProcess): Promise<void> {
    for (;;) {
      let changed: string[];
      try {
        const [pairs = []] = await idle.request(['idle player playlist options update database'], null);
        changed = pairs.filter(([key]) => key === 'changed').map(([, value]) => value);
      } catch (err) {
        if (this.phase === 'up' && this.proc === proc) await this.idleBroke(proc, err as Error);
        return;
      }
      if (changed.includes('update') || changed.includes('database')) {
        this.updates++;
        for (const waiter of [...this.updateWaiters]) waiter.wake();
      }
      if (changed.some((name) => name === 'player' || name === 'playlist' || name === 'options')) this.player.refresh();
    }
  }

  /**
   * MPD never closes an idle connection by itself: either it died (its exit is on the way, and the restart follows)
   * or it is stuck, and a stuck one is killed so that it restarts like a crash. Real time: a process's death.
   */
  private async idleBroke(proc: MpdProcess, err: Error): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const alive = await Promise.race([
      proc.exited.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), IDLE_GRACE_MS))),
    ]);
    clearTimeout(timer);
    if (!alive || this.proc !== proc || this.phase !== 'up') return;
    this.log('warn', `the MPD idle connection ended (${err.message}) while mpd runs: restarting mpd`);
    proc.kill();
  }

  /** Scans `folder` ('' for all) and resolves when MPD has finished; `timeoutMs` null waits as long as it takes. */
  private async update(folder: string, timeoutMs: number | null): Promise<void> {
    const connection = await this.connection();
    const [reply = []] = await connection.request([command('update', folder)]);
    await this.scanned(
      Number(field(reply, 'updating_db')),
      timeoutMs === null ? Number.POSITIVE_INFINITY : this.clock.now() + timeoutMs,
      folder,
    );
  }

  /** Resolves once MPD's update job `job` (and any before it) has finished. */
  private async scanned(job: number, deadline: number, folder: string): Promise<void> {
    for (;;) {
      const seen = this.updates;
      const [status = []] = await (await this.connection()).request(['status']);
      const running = Number(field(status, 'updating_db') ?? 0);
      // Jobs are numbered in order: none running, or a later one, means this one is done.
      if (!running || running > job) return;
      if (this.clock.now() >= deadline)
        throw new PlaybackError('timeout', `MPD did not finish scanning ${folder || 'the music folder'} in time`);
      if (this.updates === seen) await this.nextUpdate(deadline);
    }
  }

  /**
   * A player's first start builds its database by scanning the whole music folder: start() resolves after that
   * scan, so the library lists everything and no file is dropped from the queue by a scan still under way.
   */
  private async firstScan(): Promise<void> {
    const [status = []] = await (await this.connection()).request(['status']);
    const job = Number(field(status, 'updating_db') ?? 0);
    if (!job) return;
    this.emit({ type: 'library', scanning: true });
    try {
      await this.scanned(job, Number.POSITIVE_INFINITY, '');
    } finally {
      this.emit({ type: 'library', scanning: false });
    }
  }

  private nextUpdate(deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = {
        wake: () => done(resolve),
        fail: (err: Error) => done(() => reject(err)),
      };
      const timer = Number.isFinite(deadline)
        ? this.clock.setTimeout(() => waiter.wake(), Math.max(0, deadline - this.clock.now()))
        : undefined;
      const done = (settle: () => void) => {
        this.clock.clearTimeout(timer);
        this.updateWaiters.delete(waiter);
        settle();
      };
      this.updateWaiters.add(waiter);
    });
  }

  private exited(proc: MpdProcess, detail: string): void {
    if (this.proc !== proc || this.phase !== 'up') return;
    this.phase = 'down';
    this.log('warn', detail);
    this.closeConnections(new PlaybackError('engine-down', detail));
    const saved = this.player.engineDown();
    if (this.clock.now() - this.upSince >= this.timing.stableMs) this.restartDelay = this.timing.restartFirstMs;
    this.emit({ type: 'engine', up: false, detail: `${detail}; restarting in ${this.restartDelay} ms` });
    this.scheduleRestart(saved);
  }

  private scheduleRestart(saved: PlaybackSnapshot): void {
    const wait = this.restartDelay;
    this.restartDelay = Math.min(this.timing.restartMaxMs, wait * 2);
    this.restartTimer = this.clock.setTimeout(() => void this.restart(saved), wait);
  }

  private async restart(saved: PlaybackSnapshot): Promise<void> {
    this.restartTimer = undefined;
    if (this.phase !== 'down') return;
    try {
      this.writeConfig();
      await this.bringUp(findMpd(this.options.mpdPath));
    } catch (err) {
      if (this.phase !== 'down') return;
      this.log('warn', `the player's MPD did not come back: ${(err as Error).message}`);
      this.scheduleRestart(saved);
      return;
    }
    const { recovery, detail } = await this.player.recover(saved);
    this.emit(
      detail === undefined ? { type: 'engine', up: true, recovery } : { type: 'engine', up: true, recovery, detail },
    );
  }

  private closeConnections(err: Error): void {
    this.idle?.close(err);
    this.idle = undefined;
    void this.command?.then(
      (connection) => connection.close(err),
      () => undefined,
    );
    this.command = undefined;
    for (const waiter of [...this.updateWaiters]) waiter.fail(err);
  }

  private emit(event: PlaybackEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.log('error', `a playback event listener threw: ${(err as Error).message}`);
      }
    }
  }
}
