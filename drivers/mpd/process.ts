// One run of a player's mpd: spawned in the foreground under umask 077, tied to the daemon's life by a parent-death
// signal, confined by Landlock to the folders it needs, stderr logged, ready when its socket greets.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { confineArgs, executable, findConfine, NO_LANDLOCK, systemConfinement } from '../core/confine.js';
import { type PlaybackEngineOptions, PlaybackError } from '../playback.js';
import type { PlayerFiles } from './config.js';
import type { MpdConnection } from './connection.js';

export type Log = NonNullable<PlaybackEngineOptions['log']>;

export interface ProcessOptions {
  mpdPath: string;
  files: PlayerFiles;
  clock: Clock;
  log: Log;
  /** From spawn to the socket's greeting. */
  startTimeoutMs: number;
  /** From SIGTERM to SIGKILL. */
  stopTimeoutMs: number;
  /**
   * Each line mpd writes to stderr (its log), after it was logged; true when the line was taken as one track's
   * failure (reported with that track), so it is not quoted again as the reason of a later exit.
   */
  onLine?: (line: string) => boolean | undefined;
  /** util-linux's setpriv, which gives mpd its parent-death signal; tests name a missing one to see the fallback. */
  setprivPath?: string;
  /** The music folder's real path: mpd may read beneath it (and nowhere else outside the system folders). */
  musicRoot?: string;
  /** The real folder of a FIFO output: mpd creates, writes and removes the FIFO there. */
  outputFolder?: string;
  /** The azc-confine program (native/); tests name a missing one to see the fallback. */
  confinePath?: string;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** The message for a machine without MPD: what the daemon answers when a stream player is created. */
export const MPD_MISSING =
  'MPD is not installed: stream players are played by MPD (install it with: apt-get install mpd)';

/** Finds the mpd program: a path as given, or a name looked up in PATH and the usual system folders. */
export function findMpd(program = 'mpd'): string {
  const candidates = program.includes('/')
    ? [program]
    : [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/bin', '/usr/sbin', '/usr/local/bin'].map((dir) =>
        path.join(dir, program),
      );
  for (const candidate of candidates) if (executable(candidate)) return candidate;
  throw new PlaybackError('engine-missing', MPD_MISSING);
}

/** Lines of stderr kept for the message of an exit, and how old they may be when it comes (engine clock). */
const KEPT_LINES = 5;
const KEPT_MS = 5000;
export const SETPRIV = '/usr/bin/setpriv';
/** Said once per daemon: every mpd started without setpriv outlives a daemon killed with SIGKILL. */
let setprivMissingSaid = false;
/** Said once per daemon: without azc-confine or Landlock, mpd opens any file the daemon's user may read. */
let unconfinedSaid = false;
/**
 * What mpd may reach of the file system: its libraries, configuration and devices (read), its own folder (conf,
 * database, socket, state) and the audio devices (write), the music folder (read) and a FIFO output's folder (write).
 * Not the rest of the state folder (the daemon's database, its key), nor any home folder.
 */
function confinement(options: ProcessOptions): string[] {
  const rules = systemConfinement(options.mpdPath);
  if (options.musicRoot) rules.read.push(options.musicRoot);
  rules.write.unshift(options.files.dir, '/dev/snd');
  if (options.outputFolder) rules.write.push(options.outputFolder);
  return confineArgs(rules);
}

const LINE_MAX = 500;
const CONNECT_RETRY_MS = 50;

export class MpdProcess {
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private readonly recent: Array<{ line: string; at: number }> = [];
  private partial = '';

  private constructor(private readonly options: ProcessOptions) {
    const { files } = options;
    // umask 077 before exec: the database and the socket MPD creates are the daemon user's alone.
    const command = [
      '/bin/sh',
      '-c',
      'umask 077 && exec "$0" "$@"',
      options.mpdPath,
      '--no-daemon',
      '--stderr',
      files.conf,
    ];
    // setpriv sets PR_SET_PDEATHSIG and execs the rest in the same process: the kernel sends mpd SIGTERM when the
    // thread that forked it (Node's main thread, which runs every spawn) dies, even by SIGKILL. The start-up
    // clean-up (killStale) remains for what a power cut or a missing setpriv leaves behind.
    const setpriv = options.setprivPath ?? SETPRIV;
    const tied = executable(setpriv);
    if (!tied && !setprivMissingSaid) {
      setprivMissingSaid = true;
      options.log(
        'warn',
        `${setpriv} is missing (util-linux): a daemon killed with SIGKILL leaves its mpd processes running until its next start`,
      );
    }
    // azc-confine (native/confine.c) puts mpd under Landlock before it runs: the kernel refuses any open outside the
    // folders of confinement(), at the moment mpd opens the file, whatever symlinks its path goes through.
    const confine = options.confinePath ?? findConfine();
    const confined = executable(confine);
    if (!confined) this.unconfined(`${confine} is missing (the native part was not built: npm run-script install)`);
    const inner = confined ? [confine, ...confinement(options), '--', ...command] : command;
    const [program, ...args] = tied ? [setpriv, '--pdeathsig', 'SIGTERM', '--', ...inner] : inner;
    this.child = process
      .getBuiltinModule('node:child_process')
      .spawn(program!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.once('error', (err) => options.log('error', `mpd could not be started: ${err.message}`));
    if (this.child.pid !== undefined) writeFileSync(files.pid, `${this.child.pid}\n`, { mode: 0o600 });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr(chunk));
  }

  /** Starts mpd, after putting away one an earlier daemon left running on this player's files. */
  static async spawn(options: ProcessOptions): Promise<MpdProcess> {
    await killStale(options);
    return new MpdProcess(options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the process ended, with its last words, for the `engine` event and the log. */
  describeExit(exit: Exit): string {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    // Only what it said just before: start-up lines from long ago explain nothing about this exit.
    const since = this.options.clock.now() - KEPT_MS;
    const last = this.recent.filter((entry) => entry.at >= since).map((entry) => entry.line);
    const words = last.length ? `: ${last.join(' | ')}` : '';
    return `mpd ${how}${words}`;
  }

  /**
   * Connects to the socket until MPD greets; rejects when it exits first or does not answer in time. The retries
   * and this limit run on real time, not the engine clock: a start is a real process coming up, which no test's
   * clock should have to walk through.
   */
  async ready(connect: () => Promise<MpdConnection>): Promise<MpdConnection> {
    const { startTimeoutMs } = this.options;
    const deadline = Date.now() + startTimeoutMs;
    let exit: Exit | undefined;
    void this.exited.then((e) => (exit = e));
    for (;;) {
      if (exit) throw new PlaybackError('failed', `${this.describeExit(exit)} before its socket answered`);
      try {
        return await connect();
      } catch (err) {
        if (Date.now() >= deadline)
          throw new PlaybackError(
            'timeout',
            `mpd did not answer on ${this.options.files.socket} within ${startTimeoutMs} ms: ${(err as Error).message}`,
          );
      }
      await pause(CONNECT_RETRY_MS);
    }
  }

  /** Kills it at once (a stuck mpd); the exit is reported as a crash. */
  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }

  /** SIGTERM, then SIGKILL if it is still there after the bound; resolves once it is gone. */
  async stop(): Promise<void> {
    const { clock, stopTimeoutMs } = this.options;
    if (this.running) {
      this.child.kill('SIGTERM');
      let timer: unknown;
      const killed = new Promise<void>((resolve) => {
        timer = clock.setTimeout(() => {
          if (this.running) {
            this.options.log('warn', `mpd did not stop within ${stopTimeoutMs} ms of SIGTERM: killing it`);
            this.child.kill('SIGKILL');
          }
          resolve();
        }, stopTimeoutMs);
      });
      await Promise.race([this.exited, killed]);
      clock.clearTimeout(timer);
    }
    await this.exited;
    rmSync(this.options.files.pid, { force: true });
  }

  private unconfined(why: string): void {
    if (unconfinedSaid) return;
    unconfinedSaid = true;
    this.options.log(
      'warn',
      `${why}: mpd runs without file-system confinement, so a file of the music folder swapped for a symlink can make it play any file the daemon's user may read`,
    );
  }

  private stderr(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!.slice(0, LINE_MAX);
    for (const raw of lines) {
      const line = raw.trim().slice(0, LINE_MAX);
      if (!line) continue;
      if (NO_LANDLOCK.test(line)) {
        this.unconfined(line.replace(/: \S+ runs without file-system confinement$/, ''));
        continue;
      }
      this.options.log('warn', `mpd: ${line}`, { pid: this.child.pid });
      if (this.options.onLine?.(line) === true) continue;
      this.recent.push({ line, at: this.options.clock.now() });
      if (this.recent.length > KEPT_LINES) this.recent.shift();
    }
  }
}

/**
 * An mpd left behind by a daemon that died without stopping it still holds the output device: the pid file names
 * it, and it is killed if it is still an mpd of this very config.
 */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function killStale({ files, log, stopTimeoutMs }: ProcessOptions): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(files.pid, 'utf8').trim());
  } catch {
    return;
  }
  const ours = () => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return cmdline.includes(files.conf) && cmdline.some((arg) => /(^|\/)mpd$/.test(arg));
    } catch {
      return false;
    }
  };
  if (Number.isInteger(pid) && pid > 1 && ours()) {
    log('warn', `killing mpd ${pid}, left running by an earlier start of this player`);
    process.kill(pid, 'SIGKILL');
    // Its parent died, so init reaps it; the output device is free once it is gone (real time, as in ready()).
    const deadline = Date.now() + stopTimeoutMs;
    while (ours() && Date.now() < deadline) await pause(CONNECT_RETRY_MS);
  }
  rmSync(files.pid, { force: true });
}
