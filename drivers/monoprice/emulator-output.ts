// The emulator's transmit line: paced like a 9600 baud wire, with dropped and garbled bytes from a seeded generator.
import type { Duplex } from 'node:stream';

export interface OutputOptions {
  /** Pace output like the serial line: 9600 baud is about 1.04 ms per byte. Default 0 (as fast as possible). */
  byteDelayMs?: number;
  /** Fraction (0..1) of output bytes dropped. Default 0. */
  dropRate?: number;
  /** Fraction (0..1) of output bytes replaced by a random byte. Default 0. */
  garbleRate?: number;
  /** Seed for the fault generator, so a failing run can be replayed. */
  seed?: number;
}

/** mulberry32: a tiny deterministic PRNG for reproducible line faults. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes to one attached stream at a time; the rates can change at run time through the public fields. */
export class PacedOutput {
  byteDelayMs: number;
  dropRate: number;
  garbleRate: number;
  private stream: Duplex | undefined;
  private readonly random: () => number;
  private queue: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private sent = 0;

  constructor(options: OutputOptions = {}) {
    this.byteDelayMs = options.byteDelayMs ?? 0;
    this.dropRate = options.dropRate ?? 0;
    this.garbleRate = options.garbleRate ?? 0;
    this.random = prng(options.seed ?? 0x5eed);
  }

  attach(stream: Duplex | undefined): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.stream = stream;
  }

  /** Sends text (latin1, one char per byte); `faults: false` for bytes that are themselves the fault (noise). */
  write(text: string, faults = true): void {
    if (!this.stream) return;
    let bytes: Buffer = Buffer.from(text, 'latin1');
    if (faults && (this.dropRate > 0 || this.garbleRate > 0)) bytes = this.corrupt(bytes);
    if (this.byteDelayMs <= 0) {
      this.stream.write(bytes);
      return;
    }
    this.queue.push(bytes);
    if (!this.timer) {
      this.startedAt = performance.now();
      this.sent = 0;
      this.pace();
    }
  }

  private corrupt(bytes: Buffer): Buffer {
    const out: number[] = [];
    for (const byte of bytes) {
      const r = this.random();
      if (r < this.dropRate) continue;
      out.push(r < this.dropRate + this.garbleRate ? Math.floor(this.random() * 256) : byte);
    }
    return Buffer.from(out);
  }

  /** Writes whatever the baud rate allows by now; catching up by elapsed time keeps the average exact despite 1 ms timers. */
  private pace(): void {
    this.timer = undefined;
    if (!this.stream) return;
    const due = Math.floor((performance.now() - this.startedAt) / this.byteDelayMs) + 1 - this.sent;
    const out: Buffer[] = [];
    let budget = due;
    while (budget > 0 && this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.length <= budget) {
        out.push(head);
        budget -= head.length;
        this.queue.shift();
      } else {
        out.push(head.subarray(0, budget));
        this.queue[0] = head.subarray(budget);
        budget = 0;
      }
    }
    if (out.length > 0) {
      const chunk = Buffer.concat(out);
      this.sent += chunk.length;
      this.stream.write(chunk);
    }
    if (this.queue.length > 0) this.timer = setTimeout(() => this.pace(), Math.max(1, this.byteDelayMs));
  }
}
