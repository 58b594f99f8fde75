// Reads a receiver's FIFO output without blocking: bytes, the loudest 16-bit sample and the frames with sound in
// them, and whether a writer still holds the FIFO; the receiver tests await these instead of sleeping.
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { Changes, waitFor } from './wait-for.js';

/** Reads the FIFO without blocking and keeps the byte count and the largest 16-bit sample seen. */
export class PcmReader {
  bytes = 0;
  peak = 0;
  /** Stereo frames with sound in them (a tone, not the silence a receiver writes around it). */
  soundFrames = 0;
  /** The last read found no writer left (end of file), rather than a writer with nothing to say. */
  atEnd = false;
  readonly changes = new Changes();
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(1 << 18);
  private timer: NodeJS.Timeout | undefined;
  private polls = 0;
  private closed = false;

  constructor(file: string) {
    this.fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    this.poll();
  }

  /** Resolves once samples of `peak` or more arrived (the tone, not the silence around it). */
  async tone(peak: number, what: string): Promise<void> {
    await waitFor(() => this.peak >= peak, undefined, { what, changes: this.changes });
  }

  /** Resolves once `count` more bytes arrived than when called. */
  async more(count: number, what: string): Promise<void> {
    const goal = this.bytes + count;
    await waitFor(() => this.bytes >= goal, undefined, { what, changes: this.changes });
  }

  /** Stops reading and closes the FIFO; again, does nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    closeSync(this.fd);
  }

  private poll(): void {
    // At most ten minutes of polls, so a forgotten reader ends by itself.
    if (++this.polls > 30_000) return;
    for (;;) {
      let n: number;
      try {
        n = readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        this.atEnd = false;
        break;
      }
      if (n === 0) {
        this.atEnd = true;
        break;
      }
      this.atEnd = false;
      this.bytes += n;
      // Reads are whole frames: the FIFO's writer writes them whole, and the buffer holds a whole number of them.
      for (let i = 0; i + 3 < n; i += 4) {
        const left = this.buffer.readInt16LE(i);
        const right = this.buffer.readInt16LE(i + 2);
        this.peak = Math.max(this.peak, Math.abs(left), Math.abs(right));
        if (left !== 0 || right !== 0) this.soundFrames++;
      }
    }
    this.changes.notify();
    this.timer = setTimeout(() => this.poll(), 20);
  }
}
