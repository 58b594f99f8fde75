// aplay for the ALSA casting tests: alsa-utils' own when installed, otherwise a stand-in that refuses any arguments
// but those the daemon must give and plays through SoX's ALSA output (alsa-lib all the same); and an ALSA
// configuration whose default device is alsa-lib's null PCM, so a player on `default` needs no sound card.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { executable } from '../../drivers/core/confine.js';
import { tempDir } from './daemon.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The folders programs are found in, aplay among them: the system's, or a stand-in's first without alsa-utils. */
export function aplaySearchPath(t: Teardown): string {
  if (SYSTEM_PATH.split(':').some((dir) => executable(path.join(dir, 'aplay')))) return SYSTEM_PATH;
  const dir = tempDir('azc-aplay-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = [
    '#!/bin/sh',
    '# Stands in for aplay: refuses any arguments but those the daemon must give, and plays through SoX.',
    'device=',
    'for arg; do [ "$prev" = "-D" ] && device=$arg; prev=$arg; done',
    '[ "$*" = "-q -t raw -f S16_LE -r 44100 -c 2 -D $device -" ] || { echo "unexpected arguments: $*" >&2; exit 2; }',
    'exec sox -q -t raw -r 44100 -e signed-integer -b 16 -c 2 -L - -t alsa "$device"',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'aplay'), script, { mode: 0o700 });
  return `${dir}:${SYSTEM_PATH}`;
}

/**
 * Points this process and its children (MPD, aplay) at an ALSA configuration whose `default` is the null PCM and
 * aplay at `aplaySearchPath`, until the teardown puts PATH and ALSA_CONFIG_PATH back. The configuration is written
 * in `folder`, which must be one a confined MPD may read (the music folder).
 */
export function nullAlsaDefault(t: Teardown, folder: string): void {
  const conf = path.join(folder, 'asound.conf');
  writeFileSync(conf, '</usr/share/alsa/alsa.conf>\npcm.!default { type null }\n', { mode: 0o600 });
  const before = { PATH: process.env.PATH, ALSA_CONFIG_PATH: process.env.ALSA_CONFIG_PATH };
  process.env.PATH = `${aplaySearchPath(t)}:${before.PATH ?? ''}`;
  process.env.ALSA_CONFIG_PATH = conf;
  t.teardown(() => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(conf, { force: true });
  });
}
