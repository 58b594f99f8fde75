// A stream player's ALSA device held by the daemon while receivers run for it: one aplay playing what the player's
// output switch writes on its standard input, tied to the daemon's life, restarted with back-off if it dies.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Clock, monotonicClock } from '../core/clock.js';
import { executable } from '../core/confine.js';
import { type Exit, type Log, SETPRIV } from '../mpd/process.js';
import { PCM_FORMAT, PlaybackError } from '../playback.js';
import { stopChild } from './child.js';
import { DEFAULT_RECEIVER_TIMING, type SupervisorTiming } from './supervisor.js';

/** The program that plays to the device, and the Debian package that installs it. */
export const APLAY = { program: 'aplay', debianPackage: 'alsa-utils' } as const;

/** aplay's arguments: raw PCM in PCM_FORMAT (what MPD's FIFO and every receiver write) from its standard input. */
export function aplayArgs(device: string): string[] {
  const { rate, bits, channels } = PCM_FORMAT;
  return ['-q', '-t', 'raw', '-f', `S${bits}_LE`, '-r', String(rate), '-c', String(channels), '-D', device, '-'];
}

/** aplay as found in `searchPath` (PATH unless given), or engine-missing naming its Debian package. */
export function findAplay(searchPath = process.env.PATH ?? ''): string {
  const found = searchPath
    .split(':')
    .filter(Boolean)
    .map((dir) => path.join(dir, APLAY.program))
    .find(executable);
  if (!found)
    throw new PlaybackError(
      'engine-missing',
      `${APLAY.program} is not installed: receivers on a player whose output is an ALSA device play through it (install it with: apt-get install --no-install-recommends ${APLAY.debianPackage})`,
    );
  return found;
}

export interface AlsaOutputOptions {
  device: string;
  /** The folders aplay is looked up in, as in PATH (the daemon's PATH unless given). */
  searchPath?: string;
  /** util-linux's setpriv, which ties aplay to the daemon's life. */
  setprivPath?: string;
  clock?: Clock;
  log?: Log;
  /** The receivers' back-off and stop bound. */
  timing?: Partial<SupervisorTiming>;
  /** aplay went away or runs again: `reason` changed. */
  onChange?: () => void;
}

/** Lines of aplay's log kept to explain an exit. */
const KEPT_LINES = 5;
const LINE_MAX = 500;

/**
 * `sink` is the switch's output: what is written there goes to the running aplay's standard input, waiting (as on a
 * full sound card) while that pipe is full or while aplay is down between two runs.
 */
export class AlsaOutput {
  readonly sink: Writable;
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly timing: SupervisorTiming;
  private program: string | undefined;
  private child: ChildProcess | undefined;
  private exited: Promise<Exit> | undefined;
  /** A write that waits: for aplay's pipe to drain, or for aplay to run again. */
  private waiting: { chunk: Buffer | null; done: () => void } | undefined;
  private restartTimer: unknown;
  private restartDelay: number;
  private upSince = 0;
  private stopping = false;
  private bytes = 0;
  private lastReason: string | null = null;

  constructor(private readonly options: AlsaOutputOptions) {
    this.clock = options.clock ?? monotonicClock;
    this.log = options.log ?? (() => undefined);
    this.timing = { ...DEFAULT_RECEIVER_TIMING, ...options.timing };
    this.restartDelay = this.timing.restartFirstMs;
    this.sink = new Writable({ write: (chunk: Buffer, _encoding, done) => this.feed(chunk, done) });
    this.sink.on('error', (err) => this.log('debug', `the ALSA output's sink: ${err.message}`));
  }

  /** Bytes aplay took on its standard input so far, over all its runs. */
  get written(): number {
    return this.bytes;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Why aplay is not running now (its last exit, and when it restarts); null while it runs. */
  get reason(): string | null {
    return this.lastReason;
  }

  /** Starts aplay on the device; throws engine-missing (naming alsa-utils) when it is not installed. */
  start(): void {
    this.program = findAplay(this.options.searchPath);
    this.stopping = false;
    this.run();
  }

  /** Stops aplay (end of input and SIGTERM, SIGKILL after the bound) and any restart to come; resolves once it is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.clock.clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    if (this.child && this.exited) {
      // Its standard input ends too: aplay waiting there for PCM (nothing holds the output) only sees the SIGTERM
      // once a read returns.
      this.child.stdin?.destroy();
      const boundMs = this.timing.stopTimeoutMs;
      await stopChild(this.child, this.exited, {
        clock: this.clock,
        boundMs,
        killing: () => this.log('warn', `aplay did not stop within ${boundMs} ms: killing it`),
      });
    }
    this.child = undefined;
    this.exited = undefined;
    this.sink.destroy();
    this.release();
  }

  private feed(chunk: Buffer, done: () => void): void {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) {
      // aplay is down between two runs: the switch waits, as on a full card, and the chunk goes to the next run.
      this.waiting = { chunk, done };
      return;
    }
    const length = chunk.length;
    const flushed = stdin.write(chunk, (err) => {
      if (!err) this.bytes += length;
    });
    if (flushed) return done();
    this.waiting = { chunk: null, done };
    stdin.once('drain', () => this.release());
  }

  /** Lets the waiting write go on (the pipe drained, aplay ended or stopped); its chunk, if held, is dropped. */
  private release(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.done();
  }

  private run(): void {
    const program = this.program!;
    const setpriv = this.options.setprivPath ?? SETPRIV;
    const tied = executable(setpriv);
    if (!tied) this.log('warn', `${setpriv} is missing (util-linux): aplay outlives a daemon killed with SIGKILL`);
    const command = [program, ...aplayArgs(this.options.device)];
    const [file, ...args] = tied ? [setpriv, '--pdeathsig', 'SIGTERM', '--', ...command] : command;
    // child_process waits for its first use, not the daemon's start (ARCHITECTURE.md, "Memory").
    const child = process
      .getBuiltinModule('node:child_process')
      .spawn(file!, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child = child;
    this.upSince = this.clock.now();
    const wasDown = this.lastReason !== null;
    this.lastReason = null;
    if (wasDown) this.options.onChange?.();
    child.stdin!.on('error', (err) => this.log('debug', `aplay's standard input: ${err.message}`));
    const recent: string[] = [];
    let partial = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!.slice(0, LINE_MAX);
      for (const raw of lines) {
        const line = raw.trim().slice(0, LINE_MAX);
        if (!line) continue;
        // An underrun (nothing written for a while) is logged by aplay and played through: not worth more than debug.
        this.log('debug', `aplay: ${line}`, { pid: child.pid });
        recent.push(line);
        if (recent.length > KEPT_LINES) recent.shift();
      }
    });
    let over = false;
    const ended = (exit: Exit) => {
      if (over) return;
      over = true;
      this.ended(child, exit, recent);
    };
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        resolve({ code, signal });
        ended({ code, signal });
      }),
    );
    child.once('error', (err) => {
      this.log('error', `aplay could not be started: ${err.message}`);
      if (child.pid === undefined) ended({ code: null, signal: null });
    });
    // A write held while aplay was down goes to this run.
    const held = this.waiting;
    if (held?.chunk) {
      this.waiting = undefined;
      this.feed(held.chunk, held.done);
    }
  }

  private ended(child: ChildProcess, exit: Exit, recent: string[]): void {
    if (this.stopping || child !== this.child) return;
    this.child = undefined;
    this.exited = undefined;
    // A write waiting on the dead pipe lets the next one come, which waits for the next run.
    if (this.waiting && this.waiting.chunk === null) this.release();
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const words = recent.length ? `: ${recent.join(' | ')}` : '';
    if (this.clock.now() - this.upSince >= this.timing.stableMs) this.restartDelay = this.timing.restartFirstMs;
    const wait = this.restartDelay;
    this.restartDelay = Math.min(this.timing.restartMaxMs, wait * 2);
    this.lastReason = `aplay on ${this.options.device} ${how}${words}; restarting in ${wait} ms`;
    this.log('warn', this.lastReason);
    this.options.onChange?.();
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopping) this.run();
    }, wait);
  }
}
