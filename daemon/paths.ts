// Locates the project's files whether running from source (daemon/) or compiled (dist/daemon/).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the azcd installation (package.json) above ' + fileURLToPath(import.meta.url));
}

export const PROJECT_ROOT = findRoot();
export const UI_DIR = path.join(PROJECT_ROOT, 'daemon', 'ui');
export const VERSION: string = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
