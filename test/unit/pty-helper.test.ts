// The pseudo-terminal pairs the driver tests unplug and replug (test/helpers/pty.ts): an unplug leaves no link,
// even when socat could not remove its own.

import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { createPtyPair } from '../helpers/pty.js';

const present = (link: string): boolean => {
  try {
    lstatSync(link);
    return true;
  } catch {
    return false;
  }
};

/** The pids of the processes whose command line has `text` in one of its arguments. */
function pidsWith(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(`/proc/${entry}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.includes(text))
      )
        pids.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

t.test(
  'an unplug leaves no link behind, also when socat died without removing them, and the pair plugs back in',
  async (t) => {
    const pty = await createPtyPair();
    t.teardown(() => pty.close());
    t.ok(existsSync(pty.a) && existsSync(pty.b), 'both ends exist while plugged');
    // SIGKILL: socat ends without its clean-up, so its links point at ptys that are gone.
    const socat = pidsWith(`link=${pty.a}`);
    t.equal(socat.length, 1, 'one socat serves the pair');
    for (const pid of socat) process.kill(pid, 'SIGKILL');
    await pty.kill();
    t.notOk(present(pty.a), 'the host end is gone');
    t.notOk(present(pty.b), 'the device end is gone');
    await pty.replug();
    t.ok(existsSync(pty.a) && existsSync(pty.b), 'a new pair at the same paths');
  },
);
