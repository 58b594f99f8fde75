// Real MPD for the playback tests: a music folder of sox tones, an engine whose FIFO output the test reads, its events.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, cpSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createPlaybackEngine, type MpdEngineOptions } from '../../drivers/mpd/index.js';
import type { PlaybackEngine, PlaybackEvent } from '../../drivers/playback.js';
import { tempDir } from './daemon.js';
import { Changes, WAIT_MS, waitFor } from './wait-for.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const MPD = '/usr/bin/mpd';
export const SOX = '/usr/bin/sox';

/** A tone of `seconds` at `hz`, tagged when the format carries tags (FLAC and Ogg Vorbis comments, MP3 ID3). */
export function tone(
  file: string,
  seconds: number,
  hz: number,
  tags: { title?: string; artist?: string; album?: string } = {},
): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const comments = Object.entries(tags).flatMap(([key, value], i) => [
    i === 0 ? '--comment' : '--add-comment',
    `${key.toUpperCase()}=${value}`,
  ]);
  execFileSync(SOX, ['-n', '-r', '44100', '-c', '2', ...comments, file, 'synth', String(seconds), 'sine', String(hz)], {
    stdio: 'pipe',
  });
}

/** The tracks every playback test may use, relative to the music folder. */
export const TRACKS = {
  a: 'tones/a.flac',
  b: 'tones/b.ogg',
  c: 'tones/c.wav',
  d: 'tones/d.mp3',
  long: 'long/long.flac',
} as const;

/** The tones of a music folder, made by sox once per test process; each folder is a copy (`musicFolder`). */
let madeTones: string | undefined;

function tonesOfThisProcess(): string {
  if (madeTones) return madeTones;
  const dir = tempDir('azc-tones-'); // removed when the process exits
  tone(path.join(dir, TRACKS.a), 3, 440, { title: 'Tone A', artist: 'Sine Band', album: 'Tones' });
  tone(path.join(dir, TRACKS.b), 3, 660, { title: 'Tone B', artist: 'Sine Band', album: 'Tones' });
  tone(path.join(dir, TRACKS.c), 3, 550);
  tone(path.join(dir, TRACKS.d), 3, 330, { title: 'Tone D', artist: 'Mp3 Band' });
  tone(path.join(dir, TRACKS.long), 30, 220, { title: 'Long Tone' });
  madeTones = dir;
  return dir;
}

/**
 * A music folder of short tones (3 s each, the long one 30 s), removed after the test. sox makes the tones once per
 * test process (encoding them, the MP3 and the 30 s FLAC above all, costs ~0.34 s of CPU a folder, and many rigs make
 * a folder each); every folder gets its own copies, so a test may add, change or delete files in its own.
 * Generated, never committed.
 */
export function musicFolder(t: Teardown): string {
  const dir = tempDir('azc-music-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(tonesOfThisProcess(), dir, { recursive: true });
  return dir;
}

/** Reads a FIFO without blocking (O_NONBLOCK, a bounded poll loop) and counts the PCM bytes that arrive. */
export class FifoReader {
  bytes = 0;
  readonly changes = new Changes();
  private readonly fd: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly buffer = Buffer.alloc(1 << 18);
  private polls = 0;

  /** At most this many polls (20 ms apart: ten minutes), so a forgotten reader ends by itself. */
  static readonly MAX_POLLS = 30_000;

  constructor(file: string) {
    this.fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    this.poll();
  }

  /** Resolves once `count` more bytes arrived than when called. */
  async receive(count: number, what = `${count} PCM bytes`): Promise<void> {
    const goal = this.bytes + count;
    await waitFor(() => this.bytes >= goal, WAIT_MS, { what, changes: this.changes });
  }

  /** Reads until a read finds nothing waiting; resolves with the byte count then. */
  async drained(): Promise<number> {
    await waitFor(() => this.readOnce() === 0, WAIT_MS, { what: 'the FIFO to hold nothing' });
    return this.bytes;
  }

  /**
   * Bytes that arrive over the next `polls` reads (20 ms apart at the least): for "nothing arrives", which no event
   * can announce, the window is a count of reads, so a loaded machine only makes it longer.
   */
  async during(polls: number): Promise<number> {
    const from = this.bytes;
    const goal = this.polls + polls;
    await waitFor(() => this.polls >= goal, WAIT_MS + polls * 20, {
      what: `${polls} reads of the FIFO`,
      changes: this.changes,
    });
    return this.bytes - from;
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    closeSync(this.fd);
  }

  private readOnce(): number {
    try {
      const n = readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      if (n > 0) {
        this.bytes += n;
        this.changes.notify();
      }
      return n;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return 0;
      throw err;
    }
  }

  private poll(): void {
    if (++this.polls > FifoReader.MAX_POLLS) return;
    while (this.readOnce() > 0) {
      // keep reading while there is more
    }
    this.changes.notify();
    this.timer = setTimeout(() => this.poll(), 20);
  }
}

export interface EngineRig {
  engine: PlaybackEngine & { readonly pid: number | undefined };
  music: string;
  stateDir: string;
  fifo: string;
  events: PlaybackEvent[];
  /** Resolves with the first event after `from` (an index into events) that matches. */
  next<T extends PlaybackEvent>(match: (event: PlaybackEvent) => event is T, what: string, from?: number): Promise<T>;
  next(match: (event: PlaybackEvent) => boolean, what: string, from?: number): Promise<PlaybackEvent>;
  /** Resolves once the status satisfies `match`. */
  until(match: (status: ReturnType<PlaybackEngine['status']>) => boolean, what: string): Promise<void>;
  reader(): FifoReader;
}

/** Starts an engine on `music` with a FIFO output (made before MPD starts), stopped in teardown. */
export async function startEngine(
  t: Teardown,
  music: string,
  options: Partial<MpdEngineOptions> = {},
): Promise<EngineRig> {
  const stateDir = tempDir('azc-mpd-');
  // A FIFO output may not be inside the state folder (drivers/playback-outputs.ts).
  const fifos = tempDir('azc-mpd-fifo-');
  const fifo = path.join(fifos, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  // Test radio stations listen on loopback ports: allowed, as playback.streamHosts allows them on an appliance.
  // What the engine logged (MPD's own log lines among it), kept to explain a wait that times out.
  const logged: string[] = [];
  const engine = createPlaybackEngine({
    id: 'player-1',
    stateDir,
    musicDir: music,
    output: { kind: 'fifo', path: fifo },
    mpdPath: MPD,
    streamHosts: ['127.0.0.1'],
    log: (level, message) => {
      logged.push(`${level}: ${message}`);
      if (logged.length > 40) logged.shift();
    },
    ...options,
  });
  const events: PlaybackEvent[] = [];
  const changes = new Changes();
  engine.onEvent((event) => {
    events.push(event);
    changes.notify();
  });
  let reader: FifoReader | undefined;
  t.teardown(async () => {
    reader?.close();
    await engine.stop();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(fifos, { recursive: true, force: true });
  });
  await engine.start();
  /** A timed-out wait says what the engine saw: its events, its status and the last lines it logged. */
  const explained = (err: unknown): never => {
    if (!(err instanceof Error) || !err.message.startsWith('timed out')) throw err;
    const seen = events.map((event) => JSON.stringify(event)).slice(-20);
    throw new Error(
      `${err.message}\nevents:\n${seen.join('\n')}\nstatus: ${JSON.stringify(engine.status())}\nlog:\n${logged.join('\n')}`,
    );
  };
  const next = (match: (event: PlaybackEvent) => boolean, what: string, from = 0) =>
    waitFor(() => events.slice(from).find(match), WAIT_MS, { what, changes }).catch(explained);
  return {
    engine,
    music,
    stateDir,
    fifo,
    events,
    next: next as EngineRig['next'],
    until: (match, what) =>
      waitFor(() => match(engine.status()), WAIT_MS, { what, changes })
        .catch(explained)
        .then(() => undefined),
    reader: () => (reader ??= new FifoReader(fifo)),
  };
}

/**
 * Where nothing listens: a port below the ephemeral range, which no server of the suite is given. A port found free
 * and let go (freePort) could be taken meanwhile by another test's server — a radio station among them, which MPD
 * then played instead of failing to reach.
 */
const DEAD_PORT = 1;

/**
 * A radio station on loopback: an Ogg stream with an `icy-name`, served in full to each listener. `url` for tracks;
 * `unreachable` is a URL on a port nothing listens on.
 */
export async function radioStation(
  t: Teardown,
  oggFile: string,
  name: string,
): Promise<{ url: string; unreachable: string; listeners: () => number }> {
  const { readFileSync } = await import('node:fs');
  const body = readFileSync(oggFile);
  let listeners = 0;
  const server: Server = createServer((_req, res) => {
    listeners++;
    res.writeHead(200, { 'Content-Type': 'application/ogg', 'icy-name': name });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/radio.ogg`,
    unreachable: `http://127.0.0.1:${DEAD_PORT}/gone.ogg`,
    listeners: () => listeners,
  };
}
