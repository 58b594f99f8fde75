// Throwaway network namespaces for the discovery tests: multicast stays inside networks the test itself makes.
import { spawnSync } from 'node:child_process';

type Outcome = { ok: true } | { ok: false; why: string };

function ip(args: string[]): Outcome {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.status === 0) return { ok: true };
  return { ok: false, why: `ip ${args.join(' ')}: ${result.error?.message ?? result.stderr.trim()}` };
}

/**
 * Adds the namespaces `names` (deleted again in the test's teardown), then runs each of `steps` as `ip` arguments,
 * in order. Not ok, with why, where namespaces cannot be made here (no privilege, or AZC_TEST_SSDP_NO_NETNS set):
 * the caller says what goes unverified. A step that fails once the namespaces exist throws: that is a broken test
 * network, not a machine without namespaces.
 */
export function createNetwork(
  t: { teardown(fn: () => unknown): void },
  names: string[],
  steps: string[][] = [],
): Outcome {
  if (process.env['AZC_TEST_SSDP_NO_NETNS']) return { ok: false, why: 'AZC_TEST_SSDP_NO_NETNS is set' };
  const made: string[] = [];
  const remove = () => {
    for (const name of made.splice(0)) spawnSync('ip', ['netns', 'delete', name]);
  };
  t.teardown(remove);
  for (const name of names) {
    const outcome = ip(['netns', 'add', name]);
    if (!outcome.ok) {
      remove();
      return outcome;
    }
    made.push(name);
  }
  for (const args of steps) {
    const outcome = ip(args);
    if (!outcome.ok) throw new Error(`the test network could not be built: ${outcome.why}`);
  }
  return { ok: true };
}
