// What holds for every receiver kind, checked the same way for each: without its program in PATH the start is refused
// naming the Debian package, a killed one comes back with back-off, and once stopped its process is gone and its FIFO
// free; and the folders and the tone every receiver test starts from.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { PlaybackError } from '../../drivers/playback.js';
import type { ReceiverEvent, ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import { tempDir } from './daemon.js';
import type { ManualClock } from './manual-clock.js';
import type { PcmReader } from './pcm-reader.js';
import { waitFor } from './wait-for.js';

/** A receiver's state folder and a FIFO output (`fifo`, made) in a folder of its own: both removed in teardown. */
export function receiverFolders(t: Test, prefix: string): { dir: string; fifo: string } {
  const dir = tempDir(`${prefix}-`);
  const fifos = tempDir(`${prefix}-fifo-`);
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(fifos, { recursive: true, force: true });
  });
  const fifo = path.join(fifos, 'out.pcm');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  return { dir, fifo };
}

/** What a sender plays in the tests, written by sox to `file` (its type from the name): a 440 Hz sine at half of full scale, 16-bit stereo. */
export function soxTone(file: string, seconds: number, rate = 44_100): void {
  const synth = `synth ${seconds} sine 440 vol 0.5`.split(' ');
  execFileSync('sox', ['-D', '-n', '-r', String(rate), '-b', '16', '-c', '2', file, ...synth]);
}

/** Starts `supervisor` (made with a search path lacking `program`) and checks the refusal names `debianPackage`. */
export async function refusedWithoutProgram(
  t: Test,
  supervisor: ReceiverSupervisor,
  what: { program: string; kind: string; debianPackage: string },
): Promise<void> {
  const err = await supervisor.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, PlaybackError);
  t.equal((err as PlaybackError).code, 'engine-missing');
  t.equal(
    (err as PlaybackError).message,
    `${what.program} is not installed: the ${what.kind} receiver runs it (install it with: apt-get install --no-install-recommends ${what.debianPackage})`,
  );
  t.equal(supervisor.phase, 'stopped');
}

/** Stops `supervisor`, which is writing into the FIFO `reader` reads, and checks both that it ended and let go. */
export async function stopsAndLetsGo(t: Test, supervisor: ReceiverSupervisor, reader: PcmReader): Promise<void> {
  const pid = supervisor.pid!;
  await supervisor.stop();
  t.equal(supervisor.phase, 'stopped');
  t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the process is gone');
  await waitFor(() => reader.atEnd, undefined, { what: 'end of file on the FIFO: no writer holds it' });
}

export const isDown = (e: ReceiverEvent): e is Extract<ReceiverEvent, { type: 'engine'; up: false }> =>
  e.type === 'engine' && !e.up;
export const isUp = (e: ReceiverEvent): e is Extract<ReceiverEvent, { type: 'engine'; up: true }> =>
  e.type === 'engine' && e.up;

/** A receiver under test: its supervisor on a manual clock, the events it gave, and a wait for the next one. */
export interface SupervisedRig {
  supervisor: ReceiverSupervisor;
  clock: ManualClock;
  events: ReceiverEvent[];
  event<T extends ReceiverEvent>(what: string, match: (e: ReceiverEvent) => e is T, since?: number): Promise<T>;
}

/**
 * Kills the running receiver (whose first run `ready(1)` awaits) and checks it comes back after 1 s and not before,
 * then, killed again once `ready(2)` says its second run is up, that the wait doubles to 2 s.
 */
export async function restartsWithBackOff(
  t: Test,
  r: SupervisedRig,
  program: string,
  ready: (run: number) => Promise<void>,
): Promise<void> {
  await ready(1);
  const first = r.supervisor.pid!;
  process.kill(first, 'SIGKILL');
  const down = await r.event('the first exit', isDown);
  t.match(down.detail, new RegExp(`^${program} was killed by SIGKILL.*; restarting in 1000 ms$`));
  t.equal(r.supervisor.phase, 'restarting');
  t.equal(r.supervisor.reason, down.detail, 'the reason is the exit');
  const seen = r.events.length;
  r.clock.advance(999);
  t.equal(r.supervisor.phase, 'restarting', 'not before the second is up');
  r.clock.advance(1);
  const up = await r.event('the restart', isUp, seen);
  t.not(up.pid, first, 'a new process');
  t.equal(r.supervisor.phase, 'running');
  t.equal(r.supervisor.reason, null);
  await ready(2);
  process.kill(up.pid!, 'SIGKILL');
  const again = await r.event('the second exit', isDown, seen);
  t.match(again.detail, /restarting in 2000 ms$/, 'the wait doubles');
}
