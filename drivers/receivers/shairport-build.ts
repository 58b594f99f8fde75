// What the installed shairport-sync is, asked once at each start of an AirPlay receiver: its version and build flags
// from `shairport-sync -V`, and whether it runs as AirPlay 1 or AirPlay 2 here (AirPlay 2 needs nqptp running).

import { accessSync, constants } from 'node:fs';
import { promisify } from 'node:util';
import { PlaybackError } from '../playback.js';
import type { ProgramBuild } from './receiver.js';

/**
 * nqptp's shared memory (POSIX `shm_open("/nqptp")`), which it makes readable by all (0644) when it starts and
 * removes when it stops, and which an AirPlay 2 shairport-sync reads its clock from.
 */
export const NQPTP_SHM = '/dev/shm/nqptp';

/** Where nqptp comes from: Debian 12 does not ship it. */
const NQPTP_SOURCE = 'https://github.com/mikebrady/nqptp';
/** `-V` answers at once; a program that does not within this long is not taken to be shairport-sync. */
const VERSION_TIMEOUT_MS = 10_000;

/**
 * What `shairport-sync -V` prints, one line: the version, then a flag per build option, joined by `-`:
 * `3.3.8-libdaemon-OpenSSL-Avahi-ALSA-…-metadata-…-sysconfdir:/etc` (Debian 12), `4.3.7-AirPlay2-smi10-OpenSSL-…`.
 * A version built from git carries its description (`4.3.8-dev-12-g1a2b3c4-AirPlay2-…`), whose parts are flags too.
 */
export function parseVersion(line: string): { version: string; major: number; minor: number; features: string[] } {
  const text = line.trim();
  const head = /^(\d+)\.(\d+)(?:\.\d+)*/.exec(text);
  if (!head) throw new Error(`it printed no version: ${JSON.stringify(text.slice(0, 120))}`);
  const features = text.slice(head[0].length).split('-').filter(Boolean);
  return { version: head[0], major: Number(head[1]), minor: Number(head[2]), features };
}

/** A shairport-sync that has `general.service_type` (5.1 on), so an AirPlay 2 build can be told to run as AirPlay 1. */
export function choosesServiceType(build: Pick<ProgramBuild, 'version'>): boolean {
  const [major = 0, minor = 0] = build.version.split('.').map(Number);
  return major > 5 || (major === 5 && minor >= 1);
}

/** Whether nqptp runs: its shared memory is there and readable, as shairport-sync needs it. */
function nqptpRuns(shm: string): boolean {
  try {
    accessSync(shm, constants.R_OK);
    return true;
  } catch {
    // Missing (nqptp is not running) or unreadable: either way shairport-sync could not use it.
    return false;
  }
}

/**
 * Asks `program -V` and decides how it runs: a build without AirPlay 2 runs as AirPlay 1; an AirPlay 2 build runs as
 * AirPlay 2 while nqptp runs (`nqptpShm` there), otherwise as AirPlay 1 where it can be told to (5.1 on); shairport-sync
 * 4 and 5.0 built for AirPlay 2 cannot, and exit at start without nqptp, so the start is refused saying what is missing.
 */
export async function probeShairport(program: string, nqptpShm = NQPTP_SHM): Promise<ProgramBuild> {
  let out: string;
  try {
    // node's child_process waits for its first use, not the daemon's start (ARCHITECTURE.md, "Memory").
    const run = promisify(process.getBuiltinModule('node:child_process').execFile);
    ({ stdout: out } = await run(program, ['-V'], { timeout: VERSION_TIMEOUT_MS, encoding: 'utf8' }));
  } catch (err) {
    throw new PlaybackError('failed', `${program} -V failed, so its build is unknown: ${(err as Error).message}`);
  }
  let parsed: ReturnType<typeof parseVersion>;
  try {
    parsed = parseVersion(out.split('\n')[0] ?? '');
  } catch (err) {
    throw new PlaybackError(
      'failed',
      `${program} -V did not say its version, so its build is unknown: ${(err as Error).message}`,
    );
  }
  const build: ProgramBuild = { version: parsed.version, features: parsed.features, variant: 'AirPlay 1' };
  if (!parsed.features.includes('AirPlay2')) return build;
  if (nqptpRuns(nqptpShm)) return { ...build, variant: 'AirPlay 2' };
  if (choosesServiceType(build)) return build;
  throw new PlaybackError(
    'engine-missing',
    `shairport-sync ${parsed.version} is built for AirPlay 2 and needs nqptp running (not in Debian: build it from ` +
      `${NQPTP_SOURCE} and enable its service); ${nqptpShm}, which nqptp makes, is missing or unreadable`,
  );
}
