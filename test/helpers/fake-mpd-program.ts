// An "mpd" program that runs the stand-in (fake-mpd.mjs) in one of its modes, for a daemon's or an engine's mpdPath.
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.js';

const FAKE = path.join(ROOT, 'test/helpers/fake-mpd.mjs');

/**
 * Writes the program into `dir` and returns its path. The stand-in is copied beside it: mpd runs confined to the
 * system's folders and its program's own (drivers/mpd/process.ts), where the test runner's hook (NODE_OPTIONS, its
 * coverage folder) cannot be reached either, so the stand-in runs without them.
 */
export function fakeMpdProgram(dir: string, mode: string): string {
  const program = path.join(dir, `mpd-${mode}`);
  const standIn = path.join(dir, 'fake-mpd.mjs');
  copyFileSync(FAKE, standIn);
  writeFileSync(
    program,
    `#!/bin/sh\nexec env -u NODE_OPTIONS -u NODE_V8_COVERAGE "${process.execPath}" "${standIn}" --mode ${mode} "$@"\n`,
  );
  chmodSync(program, 0o755);
  return program;
}
