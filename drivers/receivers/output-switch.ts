// One player's output fed by one source at a time: the receivers' PCM (each on its own pipe) reaches the output only
// while that receiver is selected, whole frames only, so two sources never mix and a switch never leaves the output
// between two samples.
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Clock } from '../core/clock.js';

/** Bytes of one PCM frame as every source writes it: 16-bit little-endian samples, two channels. */
export const FRAME_BYTES = 4;

interface Source {
  readonly name: string;
  readonly stream: Readable;
  /** Bytes read from it so far: where its frames begin. */
  seen: number;
  /** The start of a frame that straddles two chunks, held until the rest comes (the selected source only). */
  carry: Buffer | null;
  forwarded: number;
  onData: (chunk: Buffer) => void;
  /** Dropping (not selected): bytes it may still be read before it waits, as of `paced`; the timer that resumes it. */
  credit: number;
  paced: number;
  wait: unknown;
}

/**
 * Drop a source that is not selected at the pace a sound card reads, instead of leaving it unread: Squeezelite's
 * output thread starts the next track only after its blocked write of silence returns, so a receiver left unread never
 * reports a cast that begins; read at the PCM's own rate it runs as if it played to a card nobody listens to.
 */
export interface DropPace {
  bytesPerSecond: number;
  clock: Clock;
}

/** What a dropped source may be read ahead of its pace: a quarter of a second. */
const DROP_CREDIT_SECONDS = 0.25;

/** What went where, per source: bytes written to the output, and bytes it wrote while another one was selected. */
export interface SourceCounts {
  forwarded: number;
  seen: number;
}

/**
 * The switch reads the selected source and writes its frames to the output, holding it back while the output is full
 * (the source then waits on its own pipe, as it would on a sound card). A source that is not selected is not read
 * (its program waits on a full pipe until it is selected again or stopped), or, with a DropPace, is read and dropped
 * at that pace: an idle Squeezelite, which writes silence without end and as fast as its pipe takes, then costs one
 * read of its rate.
 */
export class OutputSwitch {
  private readonly sources = new Map<string, Source>();
  private selected: string | null = null;
  /** The output is full: the selected source is paused until it drains. */
  private full = false;

  constructor(
    private readonly output: Writable,
    private readonly drop?: DropPace,
  ) {
    output.on('drain', () => {
      this.full = false;
      const source = this.selected === null ? undefined : this.sources.get(this.selected);
      source?.stream.resume();
    });
  }

  /** The source whose frames reach the output now (null: none, the output gets nothing). */
  get active(): string | null {
    return this.selected;
  }

  /** Adds a source under `name`; it is read only once selected. */
  add(name: string, stream: Readable): void {
    if (this.sources.has(name)) throw new Error(`the output already has a source named ${name}`);
    const source: Source = {
      name,
      stream,
      seen: 0,
      carry: null,
      forwarded: 0,
      onData: () => undefined,
      credit: 0,
      paced: 0,
      wait: undefined,
    };
    source.onData = (chunk: Buffer) => this.take(name, source, chunk);
    stream.pause();
    stream.on('data', source.onData);
    this.sources.set(name, source);
    this.startDropping(source);
  }

  /** Forgets a source (its program ended): it is deselected first if it was selected. */
  remove(name: string): void {
    const source = this.sources.get(name);
    if (!source) return;
    if (this.selected === name) this.select(null);
    this.drop?.clock.clearTimeout(source.wait);
    source.stream.off('data', source.onData);
    this.sources.delete(name);
  }

  /**
   * Makes `name` the one source the output gets, from its next whole frame on; the one selected before stops at the
   * end of its last whole frame and is no longer read. null: none.
   */
  select(name: string | null): void {
    if (name !== null && !this.sources.has(name)) throw new Error(`the output has no source named ${name}`);
    if (name === this.selected) return;
    const before = this.selected === null ? undefined : this.sources.get(this.selected);
    if (before) {
      before.stream.pause();
      before.carry = null;
    }
    this.selected = name;
    const next = name === null ? undefined : this.sources.get(name);
    if (next) {
      this.drop?.clock.clearTimeout(next.wait);
      next.wait = undefined;
      if (!this.full) next.stream.resume();
    }
    if (before) this.startDropping(before);
  }

  counts(name: string): SourceCounts | undefined {
    const source = this.sources.get(name);
    return source && { forwarded: source.forwarded, seen: source.seen };
  }

  private take(name: string, source: Source, chunk: Buffer): void {
    const at = source.seen;
    source.seen += chunk.length;
    if (name !== this.selected) return this.dropped(source, chunk.length);
    let bytes = chunk;
    if (source.carry) {
      bytes = Buffer.concat([source.carry, chunk]);
      source.carry = null;
    } else {
      // Selected between two chunks that split a frame: begin at its next frame.
      const skip = (FRAME_BYTES - (at % FRAME_BYTES)) % FRAME_BYTES;
      if (skip > 0) bytes = bytes.subarray(Math.min(skip, bytes.length));
    }
    const whole = bytes.length - (bytes.length % FRAME_BYTES);
    if (whole < bytes.length) source.carry = Buffer.from(bytes.subarray(whole));
    if (whole === 0) return;
    source.forwarded += whole;
    if (!this.output.write(bytes.subarray(0, whole))) {
      this.full = true;
      source.stream.pause();
    }
  }

  /** A source that lost the output, or came while another has it, is read at the drop pace (with one). */
  private startDropping(source: Source): void {
    if (!this.drop) return;
    source.credit = 0;
    source.paced = this.drop.clock.now();
    source.stream.resume();
  }

  /** Counts `bytes` read from a source not selected against its pace; past it, the source waits until the pace says. */
  private dropped(source: Source, bytes: number): void {
    if (!this.drop) return;
    const { bytesPerSecond, clock } = this.drop;
    const now = clock.now();
    source.credit = Math.min(
      bytesPerSecond * DROP_CREDIT_SECONDS,
      source.credit + ((now - source.paced) * bytesPerSecond) / 1000,
    );
    source.paced = now;
    source.credit -= bytes;
    if (source.credit >= 0 || source.wait !== undefined) return;
    source.stream.pause();
    source.wait = clock.setTimeout(
      () => {
        source.wait = undefined;
        if (this.sources.get(source.name) === source && this.selected !== source.name) source.stream.resume();
      },
      Math.ceil((-source.credit * 1000) / bytesPerSecond),
    );
  }
}

/**
 * A FIFO as the switch's output: opened read-write, so the open never waits for a reader and a reader that comes and
 * goes never makes a write fail; while nobody reads, the FIFO fills and the selected source waits.
 */
export function fifoOutput(file: string): Socket {
  const fd = openSync(file, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  if (!fstatSync(fd).isFIFO()) {
    closeSync(fd);
    throw new Error(`${file} is not a FIFO`);
  }
  // node's net module waits for the first receiver's output, not the daemon's start (ARCHITECTURE.md, "Memory").
  return new (process.getBuiltinModule('node:net').Socket)({ fd, readable: false, writable: true });
}
