// An "mpd" program that runs the stand-in (fake-mpd.mjs) in one of its modes, for a daemon's or an engine's mpdPath.
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.js';

const FAKE = path.join(ROOT, 'test/helpers/fake-mpd.mjs');

/** Writes the program into `dir` and returns its path. */
export function fakeMpdProgram(dir: string, mode: string): string {
  const program = path.join(dir, `mpd-${mode}`);
  writeFileSync(program, `#!/bin/sh\nexec "${process.execPath}" "${FAKE}" --mode ${mode} "$@"\n`);
  chmodSync(program, 0o755);
  return program;
}
