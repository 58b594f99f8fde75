// Preloaded into a child daemon (`node --import`): as the process exits, writes the names of the node built-in modules
// it loaded (`process.moduleLoadList`, node's internal ones left out) to the file named by BUILTINS_WATCH_FILE, one
// a line. A daemon stopped by SIGTERM exits through process.exit, so the list is written then.
import { writeFileSync } from 'node:fs';

const file = process.env.BUILTINS_WATCH_FILE;
if (file) {
  process.on('exit', () => {
    const names = process.moduleLoadList
      .filter((entry) => entry.startsWith('NativeModule ') && !entry.startsWith('NativeModule internal/'))
      .map((entry) => entry.slice('NativeModule '.length));
    writeFileSync(file, `${names.join('\n')}\n`);
  });
}
