// What holds for every receiver kind, checked the same way for each: without its program in PATH the start is refused
// naming the Debian package, and once stopped its process is gone and its FIFO free.
import type { Test } from 'tap';
import { PlaybackError } from '../../drivers/playback.js';
import type { ReceiverSupervisor } from '../../drivers/receivers/supervisor.js';
import type { PcmReader } from './pcm-reader.js';
import { waitFor } from './wait-for.js';

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
