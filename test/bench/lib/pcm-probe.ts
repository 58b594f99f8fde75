// The PCM side of the playback benchmarks: a FIFO reader told the moment bytes arrive, and an engine playing into one.
import { execFileSync } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPlaybackEngine } from '../../../drivers/mpd/index.js';
import type { PlaybackEngine } from '../../../drivers/playback.js';
import { MPD } from '../../helpers/mpd-rig.js';

const FIRST_BYTE_LIMIT_MS = 10_000;
/** MPD's FIFO output: 44.1 kHz, 16-bit, stereo. */
export const PCM_BYTES_PER_SECOND = 44_100 * 2 * 2;

export const delay = (wait: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, wait));

/**
 * A FIFO reader that is told the moment bytes arrive: opened read-write (Linux), so it never sees end-of-file while
 * MPD has no writer open, and read through libuv's pipe handle (epoll), not a polling loop. It reads everything, so
 * MPD (which paces its FIFO output in real time) never waits on it; `bytes` counts what came.
 */
export class FifoProbe {
  bytes = 0;
  private readonly socket: Socket;
  private waiter: ((at: number) => void) | undefined;
  constructor(file: string) {
    this.socket = new Socket({
      fd: openSync(file, constants.O_RDWR | constants.O_NONBLOCK),
      readable: true,
      writable: false,
    });
    this.socket.on('data', (chunk: Buffer) => {
      const at = performance.now();
      this.bytes += chunk.length;
      this.waiter?.(at);
      this.waiter = undefined;
    });
  }
  /** Resolves with the time (performance.now()) the next chunk of PCM arrived. */
  nextBytes(): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no PCM within ${FIRST_BYTE_LIMIT_MS} ms`)), FIRST_BYTE_LIMIT_MS);
      this.waiter = (at) => {
        clearTimeout(timer);
        resolve(at);
      };
    });
  }
  close(): void {
    this.socket.destroy();
  }
}

/** A FIFO made with mkfifo (0600) in `dir`, and its probe. */
export function fifoWithProbe(dir: string, name: string): { fifo: string; probe: FifoProbe } {
  const fifo = path.join(dir, `${name}.pcm`);
  execFileSync('mkfifo', ['-m', '600', fifo]);
  return { fifo, probe: new FifoProbe(fifo) };
}

/** Time from sending the play request to the first PCM byte, after a stop and a moment for MPD to close its output. */
export async function firstByte(
  probe: FifoProbe,
  play: () => Promise<unknown>,
  stop: () => Promise<unknown>,
): Promise<number> {
  await stop();
  await delay(300);
  const arrived = probe.nextBytes();
  const started = performance.now();
  await play();
  return (await arrived) - started;
}

/** An engine (drivers/mpd, in this process) playing into a FIFO of its own; `cleanups` gets its stop and the probe's close. */
export async function engineWithFifo(
  stateDir: string,
  music: string,
  id: string,
  cleanups: Array<() => unknown>,
): Promise<{ engine: PlaybackEngine & { pid: number | undefined }; probe: FifoProbe }> {
  // The FIFO beside the engine's state folder: a FIFO output may not be inside it.
  const { fifo, probe } = fifoWithProbe(stateDir, id);
  const engine = createPlaybackEngine({
    id,
    stateDir: path.join(stateDir, `${id}-state`),
    musicDir: music,
    output: { kind: 'fifo', path: fifo },
    mpdPath: MPD,
  });
  cleanups.push(
    () => engine.stop(),
    () => probe.close(),
  );
  await engine.start();
  return { engine, probe };
}
