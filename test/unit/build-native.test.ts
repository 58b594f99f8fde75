// The install step that builds the sd_notify addon (scripts/build-native.mjs), run with a stand-in node-gyp: an
// `npm ci` shows one line when the build works, and node-gyp's own output with the reason when it does not.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/paths.js';

/** Runs the build script in a folder with a native/binding.gyp, with a node-gyp that chatters and exits `status`. */
function build(t: { teardown(fn: () => void): void }, status: number): { code: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'azc-native-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'native'));
  writeFileSync(path.join(dir, 'native', 'binding.gyp'), '{}');
  mkdirSync(path.join(dir, 'bin'));
  const gypInfo = Array.from({ length: 40 }, (_, i) => `gyp info line ${i}`).join('\n');
  writeFileSync(
    path.join(dir, 'bin', 'node-gyp'),
    `#!/bin/sh\ncat <<'END'\n${gypInfo}\nEND\n${status ? 'echo "gyp ERR! build error" >&2\n' : ''}exit ${status}\n`,
    { mode: 0o755 },
  );
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-native.mjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH ?? ''}` },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

t.test('a build that works prints one line and none of node-gyp’s', async (t) => {
  const { code, output } = build(t, 0);
  t.equal(code, 0);
  t.equal(output, 'azcd: built the sd_notify addon, azc-confine and azc-bind (native/)\n');
});

t.test(
  'a build that fails shows node-gyp’s output and says the daemon runs without the addon, without failing the install',
  async (t) => {
    const { code, output } = build(t, 1);
    t.equal(code, 0, 'npm ci goes on');
    t.match(output, /gyp info line 39/);
    t.match(output, /gyp ERR! build error/);
    t.match(
      output,
      /native\/ was not built; the daemon runs without systemd notification, starts each mpd and receiver unconfined, and receivers listen on every address/,
    );
  },
);
