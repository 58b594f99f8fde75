// The state folder is made private as a whole, so a person's home folder is refused; the folder systemd made for the
// service (StateDirectory=) is accepted although it is the home of the system user azcd runs as (azcd.sysusers).
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { prepareStateDir } from '../../daemon/paths.js';

/** Runs `fn` with these environment variables set (undefined: unset), and puts the environment back after. */
function withEnv(vars: Record<string, string | undefined>, fn: () => void): void {
  const before = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(vars);
  try {
    fn();
  } finally {
    apply(before);
  }
}

t.test('a home folder is refused as the state folder, unless systemd made it the service state folder', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'azc-home-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = path.join(root, 'var', 'lib', 'azcd');
  mkdirSync(home, { recursive: true, mode: 0o755 });
  withEnv({ HOME: home, STATE_DIRECTORY: undefined }, () => {
    t.throws(() => prepareStateDir(home), /not a folder of azcd's own/, 'a home folder is refused');
  });
  t.equal(statSync(home).mode & 0o777, 0o755, 'and left as it was');
  withEnv({ HOME: home, STATE_DIRECTORY: path.join(root, 'elsewhere') }, () => {
    t.throws(() => prepareStateDir(home), /not a folder of azcd's own/, 'a state directory systemd made elsewhere');
  });
  withEnv({ HOME: home, STATE_DIRECTORY: `${path.join(root, 'other')}:${home}/` }, () => {
    t.doesNotThrow(() => prepareStateDir(home), "the service's own state directory, the azcd user's home");
  });
  t.equal(statSync(home).mode & 0o777, 0o700, 'made private');
});
