// Builds native/ during npm install/ci — the optional sd_notify addon, azc-confine, the program each mpd and receiver
// starts under (Landlock), and azc-bind, preloaded into each receiver; a failed build never fails the install.
// node-gyp's ~40 lines of `gyp info` are kept back and shown only when the build fails, with the reason.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('native/binding.gyp')) process.exit(0);
const result = spawnSync('node-gyp', ['rebuild', '--directory=native', '--loglevel=warn'], {
  encoding: 'utf8',
  shell: false,
});
if (result.status === 0) {
  console.log('azcd: built the sd_notify addon, azc-confine and azc-bind (native/)');
} else {
  process.stderr.write(
    `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `${result.error.message}\n` : ''}`,
  );
  console.warn(
    'azcd: native/ was not built; the daemon runs without systemd notification, starts each mpd and receiver unconfined, and receivers listen on every address.',
  );
}
