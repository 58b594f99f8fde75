// The benchmark's side of loop-meter.mjs: the node options that preload it into a daemon, and a phase's figures asked
// for over the daemon's IPC channel.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { BENCH_DIR } from './processes.js';

/** A stretch of the daemon's main thread between two turns of its event loop (see loop-meter.mjs). */
export interface Section {
  wallMs: number;
  /** The main thread's own CPU time. */
  cpuMs: number;
  /** Runnable, waiting for a core another process had. */
  queuedMs: number;
  /** Neither: in a blocking system call (an fsync, a wait for the collector's helpers), or idle in the poll. */
  blockedMs: number;
  /** CPU time of the process's other threads meanwhile (the garbage collector's helpers, libuv's pool). */
  othersCpuMs: number;
  /** The daemon's performance.now() when it started and ended. */
  startedAt: number;
  endedAt: number;
}

export interface GcPause {
  /** How long the main thread was stopped (wall clock). */
  ms: number;
  /** Its own part at most: the CPU time every thread of the daemon ran in the section the pause fell in. */
  ownMs: number;
  kind: 'major' | 'minor' | 'incremental' | 'weakcb' | 'other';
  /** Epoch milliseconds. */
  endedAt: number;
}

export interface MeterFigures {
  seconds: number;
  sections: number;
  /** Sections that ran more than 50 ms of the main thread's CPU. */
  over50: number;
  mainCpuMs: number;
  othersCpuMs: number;
  /** performance.now() in the daemon + this = the monotonic clock of its CPU profile, in ms. */
  monotonicOffsetMs: number;
  /** The longest sections by CPU time, then by wall time (five each). */
  byCpu: Section[];
  byWall: Section[];
  /** Pauses: the longest by wall time, and by their own part. */
  gc: { count: number; totalMs: number; longest: GcPause[]; longestOwn: GcPause[] };
}

/** Node options that load the meter into the daemon; the daemon must be spawned with an IPC channel. */
export const METER_NODE_ARGS = ['--import', path.join(BENCH_DIR, 'lib', 'loop-meter.mjs')];

export interface PhaseMeter {
  /** Starts a phase: what was measured so far is dropped. */
  reset(): void;
  /** The figures since the last reset (and starts the next phase). */
  take(): Promise<MeterFigures>;
}

export function phaseMeter(child: ChildProcess): PhaseMeter {
  return {
    reset() {
      child.send({ meter: 'reset' });
    },
    take() {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.off('message', onMessage);
          reject(
            new Error(
              'the daemon did not answer the loop meter in 10 s (was it started with METER_NODE_ARGS and an IPC channel?)',
            ),
          );
        }, 10_000);
        const onMessage = (message: unknown) => {
          if (!message || typeof message !== 'object' || !('meter' in message)) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve((message as { meter: MeterFigures }).meter);
        };
        child.on('message', onMessage);
        child.send({ meter: 'take' });
      });
    },
  };
}
