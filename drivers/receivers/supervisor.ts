// Runs one receiver of any kind for a stream player: its private folder, its output, the process tied to the
// daemon's life, restarted with back-off, its log read into state, metadata and volume events.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, constants, fstatSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { type Clock, monotonicClock } from '../core/clock.js';
import {
  type Confinement,
  confineArgs,
  executable,
  findBindShim,
  findConfine,
  NO_LANDLOCK,
  systemConfinement,
} from '../core/confine.js';
import { playerFiles } from '../mpd/config.js';
import { type Exit, type Log, SETPRIV } from '../mpd/process.js';
import { PlaybackError, placeFifo } from '../playback.js';
import { readFifo, stopChild } from './child.js';
import {
  type CastMetadata,
  type CastState,
  type Launch,
  type LogParser,
  missingProgram,
  type ReceiverEndpoint,
  type ReceiverKind,
  type ReceiverSettings,
  type SenderRemote,
} from './receiver.js';

export interface SupervisorTiming {
  /** The first restart waits this long, each next one twice as long, up to restartMaxMs. */
  restartFirstMs: number;
  restartMaxMs: number;
  /** A run this long resets the back-off. */
  stableMs: number;
  /** From SIGTERM to SIGKILL. */
  stopTimeoutMs: number;
  /** How long a volume given to the sender (sendVolume) may take before it is given up. */
  remoteMs: number;
}

/** The same back-off and stop bound as a player's MPD (docs/playback.md). */
export const DEFAULT_RECEIVER_TIMING: SupervisorTiming = {
  restartFirstMs: 1_000,
  restartMaxMs: 30_000,
  stableMs: 60_000,
  stopTimeoutMs: 5_000,
  remoteMs: 5_000,
};

export interface SupervisorOptions {
  kind: ReceiverKind;
  /** The daemon's state folder: the receiver's files go in `<stateDir>/players/<id>/<kind>/` (0700). */
  stateDir: string;
  settings: Omit<ReceiverSettings, 'dir'>;
  clock?: Clock;
  log?: Log;
  timing?: Partial<SupervisorTiming>;
  /** The folders the program is looked up in, as in PATH (the daemon's PATH unless given). */
  searchPath?: string;
  /** util-linux's setpriv, which ties the receiver to the daemon's life; tests name a missing one. */
  setprivPath?: string;
  /** The azc-confine program (native/); tests name a missing one to see the fallback. */
  confinePath?: string;
  /** azc-bind.node (native/), beside azc-confine unless given; '' runs without it (tests of the fallback). */
  bindShimPath?: string;
  /** Added to the daemon's environment (AirPlay: the D-Bus system bus its Avahi listens on). */
  env?: Record<string, string>;
  /** A command the program is run through, such as `ip netns exec <name>` (tests run receivers in a namespace). */
  prefix?: string[];
  /**
   * Takes the PCM of a program that writes it on its standard output (Launch.pcm `stdout`): each run's output comes
   * here as a readable pipe instead of going to the FIFO, for the player's output switch to pass on or drop.
   */
  pcm?: (stream: Readable) => void;
}

/** `stopped`: not started, or stopped; `running`: the process is up; `restarting`: it went away, back soon. */
export type ReceiverPhase = 'stopped' | 'running' | 'restarting';

export type ReceiverEvent =
  | { type: 'engine'; up: true; pid: number | undefined }
  | { type: 'engine'; up: false; detail: string }
  | { type: 'state'; state: CastState }
  | { type: 'metadata'; metadata: CastMetadata }
  /** The sender's volume, 0..1. */
  | { type: 'volume'; volume: number }
  | { type: 'sender'; connected: boolean };

export type ReceiverListener = (event: ReceiverEvent) => void;

const EMPTY_METADATA: CastMetadata = { title: null, artist: null, album: null, artwork: null };
/** Lines of the log kept to explain an exit, each cut to LINE_MAX characters, as the log gets them. */
const KEPT_LINES = 5;
const LINE_MAX = 500;
/** What the parser gets of a log line: gmediarender logs a sender's whole DIDL-Lite (the titles) on one line. */
const LOG_LINE_MAX = 64 << 10;
/**
 * The query of a URL in a log line: a sender's stream URL (which gmediarender logs) may carry a token there, and
 * what the supervisor logs or gives as a reason must not.
 */
const URL_QUERY = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#'"<>]*)\?[^\s#'"<>]*/gi;
/** A metadata line may carry cover art in base64. */
const METADATA_LINE_MAX = 8 << 20;

/** A receiver's program as found in `searchPath` (PATH unless given), or engine-missing naming its Debian package. */
export function findProgram(kind: ReceiverKind, searchPath = process.env.PATH ?? ''): string {
  const dirs = searchPath.split(':').filter(Boolean);
  const found = dirs.map((dir) => path.join(dir, kind.program)).find(executable);
  if (!found) throw new PlaybackError('engine-missing', missingProgram(kind, kind.program));
  return found;
}

/**
 * A player's FIFO output, placed where a FIFO may be (as MPD's is) and made if missing; bad-request naming the fix
 * otherwise. Its type is checked by whoever opens it.
 */
export function makeFifo(target: string, stateDir: string): string {
  const place = placeFifo(target, stateDir);
  if (place.problem !== undefined)
    throw new PlaybackError('bad-request', `the receiver's FIFO ${target} ${place.problem}`);
  try {
    process
      .getBuiltinModule('node:child_process')
      .execFileSync('mkfifo', ['-m', '600', place.path], { stdio: 'ignore' });
  } catch {
    // It exists already (the usual case): what it is is checked on the open descriptor.
  }
  return place.path;
}

/** Said once per daemon: without azc-confine or Landlock, a receiver opens any file the daemon's user may read. */
let unconfinedSaid = false;
function unconfined(log: Log, why: string): void {
  if (unconfinedSaid) return;
  unconfinedSaid = true;
  log(
    'warn',
    `${why}: receivers run without file-system confinement, so a receiver taken over by a sender could read the daemon's database`,
  );
}

/** Said once per daemon: without azc-bind.node, AirPlay and UPnP listen on addresses the daemon does not serve. */
let unboundSaid = false;
function unbound(log: Log, why: string): void {
  if (unboundSaid) return;
  unboundSaid = true;
  log('warn', `${why}: receivers listen on every address, not only where the daemon serves`);
}

export class ReceiverSupervisor {
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly timing: SupervisorTiming;
  private readonly settings: ReceiverSettings;
  private readonly listeners = new Set<ReceiverListener>();
  private child: ChildProcess | undefined;
  private metadata: Socket | undefined;
  /** The current run's log parser, until the run ends. */
  private parser: LogParser | undefined;
  private exited: Promise<Exit> | undefined;
  private restartTimer: unknown;
  private restartDelay: number;
  private upSince = 0;
  private stopping = false;
  private currentPhase: ReceiverPhase = 'stopped';
  private currentReason: string | null = null;
  /** Where the current run reaches the sender's side for a volume (its `endpoint` report). */
  private endpoint: ReceiverEndpoint | undefined;
  private sendingVolume = false;
  private volumeWaiting: number | undefined;
  private cast: { state: CastState; metadata: CastMetadata; volume: number | null; sender: boolean } = {
    state: 'idle',
    metadata: EMPTY_METADATA,
    volume: null,
    sender: false,
  };

  constructor(private readonly options: SupervisorOptions) {
    this.clock = options.clock ?? monotonicClock;
    this.log = options.log ?? (() => undefined);
    this.timing = { ...DEFAULT_RECEIVER_TIMING, ...options.timing };
    this.restartDelay = this.timing.restartFirstMs;
    const dir = path.join(playerFiles(options.stateDir, options.settings.playerId).dir, options.kind.kind);
    this.settings = { ...options.settings, dir };
  }

  get phase(): ReceiverPhase {
    return this.currentPhase;
  }

  /** Why the receiver is not running (its last exit, and when it restarts); null while it runs or was stopped. */
  get reason(): string | null {
    return this.currentReason;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The protocol its program runs as, as the kind's probe found at the last start (`AirPlay 2`); null if one only. */
  get variant(): string | null {
    return this.settings.build?.variant ?? null;
  }

  /** What the cast is doing, as last reported: state, metadata, the sender's volume (null until it sent one). */
  status(): { state: CastState; metadata: CastMetadata; volume: number | null; sender: boolean } {
    return { ...this.cast };
  }

  /**
   * Gives the sender a volume changed on this side (0..1), where the kind's protocol allows it and the run said where
   * (its `endpoint`); answers whether it will be sent. One request at a time: a level asked for meanwhile replaces the
   * one waiting, so a dragged slider sends its last value, not each step. A request that fails is logged.
   */
  sendVolume(level: number): boolean {
    const { remote } = this.options.kind;
    if (!remote || !this.endpoint || this.currentPhase !== 'running') return false;
    this.volumeWaiting = level;
    if (!this.sendingVolume) void this.sendWaitingVolume(remote);
    return true;
  }

  /**
   * Pauses the sender's playback where the kind's protocol allows it and the run said where; answers whether it was
   * asked. A request that fails is logged.
   */
  pauseSender(): boolean {
    const { remote } = this.options.kind;
    const endpoint = this.endpoint;
    if (!remote || !endpoint || this.currentPhase !== 'running') return false;
    remote
      .pause(endpoint, this.settings, AbortSignal.timeout(this.timing.remoteMs))
      .catch((err: Error) => this.log('warn', `the sender could not be paused: ${err.message}`));
    return true;
  }

  private async sendWaitingVolume(remote: SenderRemote): Promise<void> {
    this.sendingVolume = true;
    try {
      while (this.volumeWaiting !== undefined && this.endpoint && !this.stopping) {
        const level = this.volumeWaiting;
        this.volumeWaiting = undefined;
        try {
          await remote.setVolume(this.endpoint, this.settings, level, AbortSignal.timeout(this.timing.remoteMs));
        } catch (err) {
          this.log('warn', `the volume could not be given to the sender: ${(err as Error).message}`);
        }
      }
    } finally {
      this.sendingVolume = false;
      this.volumeWaiting = undefined;
    }
  }

  onEvent(listener: ReceiverListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Starts the receiver; rejects with engine-missing (naming the Debian package, or what else the kind's probe found
   * missing: nqptp for an AirPlay 2 build) or bad-request (its output).
   */
  async start(): Promise<void> {
    if (this.currentPhase !== 'stopped') return;
    const program = this.findProgram();
    this.stopping = false;
    // What the installed program is, asked once a start (each restart reuses it): a refusal is the start's.
    const build = await this.options.kind.probe?.(program);
    // Stopped, or started by another call, while the program was asked.
    if (this.stopping || this.currentPhase !== 'stopped') return;
    if (build) this.settings.build = build;
    mkdirSync(this.settings.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.settings.dir, 0o700);
    this.run(program);
  }

  /** Stops it (SIGTERM, SIGKILL after the bound) and any restart to come; resolves once the process is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    if (this.child && this.exited) {
      const { program } = this.options.kind;
      const boundMs = this.timing.stopTimeoutMs;
      await stopChild(this.child, this.exited, {
        clock: this.clock,
        boundMs,
        killing: () => this.log('warn', `${program} did not stop within ${boundMs} ms: killing it`),
      });
    }
    this.metadata?.destroy();
    this.metadata = undefined;
    this.closeParser();
    this.child = undefined;
    this.exited = undefined;
    this.currentPhase = 'stopped';
    this.currentReason = null;
    this.setState('idle');
  }

  /** What the receiver may reach: the system's files, its own folder and the audio devices, and its kind's own. */
  private confinement(program: string, launch: Launch): Confinement {
    const rules = systemConfinement(program);
    rules.write.unshift(this.settings.dir, '/dev/snd');
    rules.read.push(...(launch.confine?.read ?? []));
    rules.write.push(...(launch.confine?.write ?? []));
    return rules;
  }

  private findProgram(): string {
    return findProgram(this.options.kind, this.options.searchPath);
  }

  /**
   * Where the PCM goes for a program that writes it on stdout: the FIFO, opened read-write so the open never waits
   * for a reader (the program then waits on a full FIFO instead); the child keeps the only descriptor.
   */
  private openFifo(): number {
    const { output } = this.settings;
    if (output.kind !== 'fifo') throw new Error('only a FIFO output is handed over as standard output');
    const fifo = makeFifo(output.path, this.options.stateDir);
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NOFOLLOW);
    if (!fstatSync(fd).isFIFO()) {
      closeSync(fd);
      throw new PlaybackError('bad-request', `the receiver's output ${fifo} is not a FIFO`);
    }
    return fd;
  }

  /**
   * The metadata FIFO, made in the private folder and opened read-write (so it never reads end-of-file between two
   * writers), read as a socket: no thread of the pool waits on it.
   */
  private openMetadata(name: string, parser: LogParser): Socket {
    const file = path.join(this.settings.dir, name);
    const socket = readFifo(file);
    this.readLines(socket, METADATA_LINE_MAX, (line) => this.heard(parser, line, 'metadata'));
    socket.on('error', (err) => this.log('warn', `reading ${file}: ${err.message}`));
    return socket;
  }

  /** Calls `line` with each line of `stream`, trimmed and cut to `max` characters. */
  private readLines(stream: NodeJS.ReadableStream, max: number, line: (text: string) => void): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!.slice(0, max);
      for (const raw of lines) {
        const text = raw.trim().slice(0, max);
        if (text) line(text);
      }
    });
  }

  private run(program: string): void {
    const { kind } = this.options;
    const launch = kind.launch(this.settings);
    // Where the last run listened or connected says nothing about this one's.
    this.endpoint = undefined;
    for (const file of launch.files ?? [])
      writeFileSync(path.join(this.settings.dir, file.name), file.content, { mode: 0o600 });
    const parser = kind.parser();
    this.closeParser();
    this.parser = parser;
    parser.later?.({
      metadata: (metadata) => {
        if (this.parser === parser) this.addMetadata(metadata);
      },
      log: (message) => this.log('info', message),
    });
    this.metadata?.destroy();
    this.metadata = launch.metadataPipe ? this.openMetadata(launch.metadataPipe, parser) : undefined;
    const piped = launch.pcm === 'stdout' && this.options.pcm !== undefined;
    const fd = launch.pcm === 'stdout' && !piped ? this.openFifo() : undefined;
    // umask 077 before exec, as for MPD: whatever the receiver creates is the daemon user's alone. setpriv gives it
    // the parent-death signal, so a daemon killed with SIGKILL takes its receivers with it.
    const command = ['/bin/sh', '-c', 'umask 077 && exec "$0" "$@"', program, ...launch.args];
    const setpriv = this.options.setprivPath ?? SETPRIV;
    const tied = executable(setpriv);
    if (!tied)
      this.log('warn', `${setpriv} is missing (util-linux): ${kind.program} outlives a daemon killed with SIGKILL`);
    // azc-confine puts the receiver under Landlock, as it does mpd: it reaches its own folder, the audio devices and
    // the system's files, and nothing else of the state folder (the daemon's database, its key, other players').
    const confine = this.options.confinePath ?? findConfine();
    const confined = executable(confine);
    if (!confined)
      unconfined(this.log, `${confine} is missing (the native part was not built: npm run-script install)`);
    // azc-bind.node, preloaded, keeps its TCP listening sockets to the daemon's address (none of the programs can).
    const shim =
      this.options.bindShimPath === undefined ? findBindShim(confine) : this.options.bindShimPath || undefined;
    if (!shim) unbound(this.log, 'native/build/Release/azc-bind.node is missing (the native part was not built)');
    const rules = this.confinement(program, launch);
    if (shim) rules.exec.push(path.dirname(shim));
    const inner = confined ? [confine, ...confineArgs(rules), '--', ...command] : command;
    const prefixed = [...(this.options.prefix ?? []), ...inner];
    const [file, ...args] = tied ? [setpriv, '--pdeathsig', 'SIGTERM', '--', ...prefixed] : prefixed;
    let child: ChildProcess;
    try {
      // child_process waits for its first use, not the daemon's start (ARCHITECTURE.md, "Memory").
      child = process.getBuiltinModule('node:child_process').spawn(file!, args, {
        stdio: ['ignore', piped ? 'pipe' : (fd ?? 'ignore'), 'pipe'],
        cwd: this.settings.dir,
        // Its home is its own folder: what a program keeps there (GStreamer's registry, ALSA's settings) stays in it.
        env: {
          ...process.env,
          HOME: this.settings.dir,
          ...(shim ? { LD_PRELOAD: shim, AZC_BIND_HOST: this.settings.listenHost } : {}),
          ...this.options.env,
          ...launch.env,
        },
      });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    this.child = child;
    if (piped && child.stdout) this.options.pcm!(child.stdout);
    this.currentPhase = 'running';
    this.currentReason = null;
    this.upSince = this.clock.now();
    const recent: string[] = [];
    this.readLines(child.stderr!, LOG_LINE_MAX, (line) => {
      if (NO_LANDLOCK.test(line)) {
        unconfined(this.log, line.replace(/: \S+ runs without file-system confinement$/, ''));
        return;
      }
      const short = line.replace(URL_QUERY, '$1?[redacted]').slice(0, LINE_MAX);
      this.log('debug', `${kind.program}: ${short}`, { pid: child.pid });
      recent.push(short);
      if (recent.length > KEPT_LINES) recent.shift();
      this.heard(parser, line, 'log');
    });
    child.once('error', (err) => this.log('error', `${kind.program} could not be started: ${err.message}`));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    void this.exited.then((exit) => this.ended(child, exit, recent));
    this.emit({ type: 'engine', up: true, pid: child.pid });
  }

  private heard(parser: LogParser, line: string, from: 'log' | 'metadata'): void {
    for (const report of parser.line(line, from)) {
      switch (report.type) {
        case 'state':
          this.setState(report.state);
          break;
        case 'metadata':
          this.addMetadata(report.metadata);
          break;
        case 'volume':
          this.cast.volume = report.volume;
          this.emit({ type: 'volume', volume: report.volume });
          break;
        case 'sender':
          this.cast.sender = report.connected;
          this.emit({ type: 'sender', connected: report.connected });
          break;
        case 'endpoint':
          this.endpoint = report.endpoint ?? undefined;
          break;
      }
    }
  }

  private addMetadata(metadata: Partial<CastMetadata>): void {
    this.cast.metadata = { ...this.cast.metadata, ...metadata };
    this.emit({ type: 'metadata', metadata: this.cast.metadata });
  }

  /** The run's parser is done with: metadata it would still give (a cover being fetched) is dropped. */
  private closeParser(): void {
    this.parser?.close?.();
    this.parser = undefined;
  }

  private setState(state: CastState): void {
    if (state === 'idle') this.cast.metadata = EMPTY_METADATA;
    if (state === this.cast.state) return;
    this.cast.state = state;
    this.emit({ type: 'state', state });
  }

  private ended(child: ChildProcess, exit: Exit, recent: string[]): void {
    if (this.stopping || child !== this.child) return;
    const { program } = this.options.kind;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const words = recent.length ? `: ${recent.join(' | ')}` : '';
    if (this.clock.now() - this.upSince >= this.timing.stableMs) this.restartDelay = this.timing.restartFirstMs;
    const wait = this.restartDelay;
    this.restartDelay = Math.min(this.timing.restartMaxMs, wait * 2);
    const detail = `${program} ${how}${words}; restarting in ${wait} ms`;
    this.currentPhase = 'restarting';
    this.currentReason = detail;
    this.log('warn', detail);
    this.closeParser();
    this.setState('idle');
    this.emit({ type: 'engine', up: false, detail });
    this.restartTimer = this.clock.setTimeout(() => this.restart(), wait);
  }

  private restart(): void {
    this.restartTimer = undefined;
    if (this.stopping) return;
    try {
      this.run(this.findProgram());
    } catch (err) {
      // The program was removed, or its output went wrong, while it was down: say so and try again later.
      const detail = `${this.options.kind.program} could not be restarted: ${(err as Error).message}`;
      this.currentReason = detail;
      this.log('error', detail);
      this.emit({ type: 'engine', up: false, detail });
      const wait = this.restartDelay;
      this.restartDelay = Math.min(this.timing.restartMaxMs, wait * 2);
      this.restartTimer = this.clock.setTimeout(() => this.restart(), wait);
    }
  }

  private emit(event: ReceiverEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.log('error', `a receiver listener threw: ${(err as Error).message}`);
      }
    }
  }
}
