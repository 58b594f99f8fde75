// The private folder and mpd.conf of one stream player's MPD: a unix socket only, no discovery, volume left at 100%.
import { chmodSync, lstatSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { alsaDeviceProblem, PCM_FORMAT, PlaybackError, type PlaybackOutput, placeFifo } from '../playback.js';

/** Most entries a queue holds (the playlist cap is lower); MPD is told the same so it never refuses first. */
export const QUEUE_MAX = 10_000;
/**
 * What MPD holds for one client's reply, in KiB (MPD's default, written out): a longer reply ends that connection.
 * Only a library listing comes near it (lsinfo of a folder of some 30 000 tagged tracks), on a connection of its own.
 */
export const OUTPUT_BUFFER_KIB = 8192;
/** A unix socket's path must fit sockaddr_un (108 bytes with the NUL). */
const SOCKET_PATH_MAX = 107;

export interface PlayerFiles {
  dir: string;
  conf: string;
  socket: string;
  database: string;
  pid: string;
}

/** Where a player's files live: `<stateDir>/players/<id>/`. */
export function playerFiles(stateDir: string, id: string): PlayerFiles {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(id) || id.startsWith('.')) {
    throw new PlaybackError(
      'bad-request',
      `player id ${JSON.stringify(id)} cannot name a folder: use letters, digits, '.', '_' or '-'`,
    );
  }
  const dir = path.join(path.resolve(stateDir), 'players', id);
  return {
    dir,
    conf: path.join(dir, 'mpd.conf'),
    socket: path.join(dir, 'socket'),
    database: path.join(dir, 'database'),
    pid: path.join(dir, 'mpd.pid'),
  };
}

/**
 * The FIFO an ALSA player's MPD plays into while receivers run for it (the daemon then holds the device and feeds it
 * from here or from a cast): the one FIFO allowed inside the state folder, as it is the player's own.
 */
export function castFifo(files: Pick<PlayerFiles, 'dir'>): string {
  return path.join(files.dir, 'cast-mpd.pcm');
}

export interface ConfigInput {
  files: PlayerFiles;
  /** The music folder's real path. */
  musicRoot: string;
  output: PlaybackOutput;
  listen?: { host: string; port: number };
  logLevel: 'error' | 'warning' | 'notice' | 'info' | 'verbose';
}

/** A quoted configuration value; MPD's parser has no way to carry a line break. */
function value(text: string | number, what: string): string {
  const s = String(text);
  if (/[\0\r\n]/.test(s)) throw new PlaybackError('bad-request', `${what} cannot contain a line break or NUL`);
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The state folder a player's files are in: `<stateDir>/players/<id>/` (playerFiles). */
function stateDirOf(files: PlayerFiles): string {
  return path.dirname(path.dirname(files.dir));
}

/**
 * The output's block. An ALSA device and a FIFO path are checked again here (the daemon checked them when they were
 * stored), so a row an older version stored never makes MPD open a plugin that runs a program or writes a file, or
 * make a FIFO in the state folder: the engine does not start, and says why.
 */
function outputBlock(output: PlaybackOutput, files: PlayerFiles): string[] {
  const pcm = `${PCM_FORMAT.rate}:${PCM_FORMAT.bits}:${PCM_FORMAT.channels}`;
  // mixer "none": the output has no volume of its own, so MPD plays at 100% and zones' volume is the amplifier's.
  const common = ['  name "azcd"', '  mixer_type "none"'];
  switch (output.kind) {
    case 'alsa': {
      if (!output.device)
        throw new PlaybackError(
          'bad-request',
          'an alsa output needs a device, as aplay -L names it (e.g. hw:CARD=sndrpihifiberry,DEV=0)',
        );
      const problem = alsaDeviceProblem(output.device);
      if (problem) throw new PlaybackError('bad-request', `the output's ALSA device ${problem}`);
      return ['  type "alsa"', ...common, `  device ${value(output.device, 'the ALSA device')}`];
    }
    case 'fifo': {
      if (output.path === castFifo(files))
        return ['  type "fifo"', ...common, `  path ${value(output.path, 'the FIFO path')}`, `  format "${pcm}"`];
      if (!path.isAbsolute(output.path) || output.path.split('/').includes('..')) {
        throw new PlaybackError(
          'bad-request',
          `a fifo output needs an absolute path without "..", got ${JSON.stringify(output.path)}`,
        );
      }
      // MPD is handed the path the check resolved, so it opens what was checked.
      const place = placeFifo(output.path, stateDirOf(files));
      if (place.problem !== undefined)
        throw new PlaybackError('bad-request', `the output's FIFO ${output.path} ${place.problem}`);
      return ['  type "fifo"', ...common, `  path ${value(place.path, 'the FIFO path')}`, `  format "${pcm}"`];
    }
    case 'pipe':
      if (!output.command.trim())
        throw new PlaybackError('bad-request', 'a pipe output needs a command that reads PCM on its standard input');
      return [
        '  type "pipe"',
        ...common,
        `  command ${value(output.command, 'the pipe command')}`,
        `  format "${pcm}"`,
      ];
    case 'null':
      // Paced in real time, as a sound card would be, so positions and track ends behave the same.
      return ['  type "null"', ...common, '  sync "yes"'];
  }
}

/** The text of mpd.conf. Every setting that could reach the LAN or change the volume is written out, not defaulted. */
export function renderConfig(input: ConfigInput): string {
  const { files } = input;
  if (Buffer.byteLength(files.socket) > SOCKET_PATH_MAX) {
    throw new PlaybackError(
      'bad-request',
      `the control socket path ${files.socket} is longer than ${SOCKET_PATH_MAX} bytes: choose a shorter state folder`,
    );
  }
  const lines = [
    '# Written by azcd at every start of this player; changes here are lost.',
    `music_directory ${value(input.musicRoot, 'the music folder')}`,
    `db_file ${value(files.database, 'the database path')}`,
    // Files change under a running player only through rescans and the per-file update before a new file plays.
    'auto_update "no"',
    'follow_outside_symlinks "no"',
    'follow_inside_symlinks "yes"',
    `bind_to_address ${value(files.socket, 'the socket path')}`,
  ];
  if (input.listen) {
    const { host, port } = input.listen;
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new PlaybackError('bad-request', `the listen port must be a whole number from 1 to 65535, got ${port}`);
    lines.push(`bind_to_address ${value(host, 'the listen host')}`, `port "${port}"`);
  }
  lines.push(
    // No Zeroconf: nothing announces this MPD on the network.
    'zeroconf_enabled "no"',
    'replaygain "off"',
    'volume_normalization "no"',
    'restore_paused "no"',
    `max_playlist_length "${QUEUE_MAX}"`,
    // The engine's command connection may stay quiet between tracks for long; it reconnects if closed anyway.
    'connection_timeout "86400"',
    'max_connections "8"',
    `max_output_buffer_size "${OUTPUT_BUFFER_KIB}"`,
    'filesystem_charset "UTF-8"',
    `log_level "${input.logLevel}"`,
    'audio_output {',
    ...outputBlock(input.output, files),
    '}',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Creates the player's folder (0700) and writes mpd.conf (0600) atomically, whatever the umask: the folder also
 * holds the control socket and the database, which only the daemon's user may reach.
 */
export function writePlayerConfig(files: PlayerFiles, text: string): void {
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  // The folder may be older than this start, or made under a loose umask: it is private either way.
  if (lstatSync(files.dir).isSymbolicLink())
    throw new PlaybackError('failed', `${files.dir} is a symlink: the player folder must be a real folder`);
  chmodSync(path.dirname(files.dir), 0o700);
  chmodSync(files.dir, 0o700);
  const temp = `${files.conf}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, files.conf);
}

/** The music folder's real path; a missing folder is named with the fix. */
export function musicRootOf(musicDir: string): string {
  try {
    return realpathSync(musicDir);
  } catch {
    throw new PlaybackError('failed', `the music folder ${musicDir} does not exist: create it or configure another`);
  }
}
