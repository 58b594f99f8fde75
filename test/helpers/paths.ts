// Where the suite's files are, whether it runs from the TypeScript sources (under tsx) or bundled into .test-build/
// (npm test, scripts/build-tests.mjs), and how to start one of the project's scripts the way the suite runs.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../../daemon/paths.js';

/** The repository: package.json, README.md, daemon/ui, native/build, systemd/ (never .test-build/). */
export const ROOT = PROJECT_ROOT;

/** True when this process runs the bundled suite (.test-build/), false under tsx. */
const BUNDLED = import.meta.url.endsWith('.js');

/** The tree this module belongs to: ROOT for the sources, ROOT/.test-build for the bundled suite. */
const CODE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Node arguments that run a TypeScript file of the project (`file` relative to ROOT, e.g. `daemon/main.ts`): its
 * bundle when the suite is bundled, the source under tsx otherwise. Children of the bundled suite never pay tsx's
 * start-up, and a run from the sources never depends on a stale bundle.
 */
export function nodeEntry(file: string): string[] {
  if (!BUNDLED) return ['--import', 'tsx', path.join(ROOT, file)];
  const bundle = path.join(CODE_ROOT, file.replace(/\.ts$/, '.js'));
  if (!existsSync(bundle))
    throw new Error(`${file} is not bundled for the tests: add it to CHILD_ENTRIES in scripts/build-tests.mjs`);
  return [bundle];
}
