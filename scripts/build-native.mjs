// Builds the optional sd_notify addon in native/ during npm install/ci; a failed build never fails the install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('native/binding.gyp')) process.exit(0);
const result = spawnSync('node-gyp', ['rebuild', '--directory=native'], { stdio: 'inherit', shell: false });
if (result.status !== 0) {
  console.warn('azcd: the native sd_notify addon was not built; the daemon runs without systemd notification.');
}
