// A player's stream output as rows store it and views show it, its checks, and what the audio capability asks the
// playback capability about stream players (the composition root connects the two).
import type { PlayerRow, StreamOutputKind } from '../../store/audio-repo.js';

export type { StreamOutputKind };

import { alsaDeviceProblem, placeFifo, resolveFifoPath } from '../../../drivers/playback.js';
import type { StreamOutput } from '../shared/index.js';
import { conflict, invalid } from '../shared/index.js';

/** Answers about stream players, given by the capability that plays them. */
export interface StreamHooks {
  /** Refuses (409) an output the appliance cannot play now, naming what to install. */
  checkOutput(output: StreamOutput): void;
  /** Whether the stream player plays now (not paused, not stopped). */
  playing(playerId: string): boolean;
}

/** Without a playback capability: any output is taken, and nothing plays. */
export const NO_STREAMS: StreamHooks = { checkOutput: () => undefined, playing: () => false };

/** The output a row stores; null for a device wired to the input. */
export function outputOf(row: Readonly<Pick<PlayerRow, 'output_kind' | 'output_target'>>): StreamOutput | null {
  switch (row.output_kind) {
    case 'alsa':
      return { kind: 'alsa', device: row.output_target ?? '' };
    case 'fifo':
      return { kind: 'fifo', path: row.output_target ?? '' };
    case 'null':
      return { kind: 'null' };
    default:
      return null;
  }
}

/** The two columns an output is stored in. */
export function outputColumns(output: StreamOutput | null): { kind: StreamOutputKind | null; target: string | null } {
  if (output === null) return { kind: null, target: null };
  if (output.kind === 'alsa') return { kind: 'alsa', target: output.device };
  if (output.kind === 'fifo') return { kind: 'fifo', target: output.path };
  return { kind: 'null', target: null };
}

/** Longest device name or FIFO path taken (a config line of MPD's). */
const TARGET_MAX = 1024;

/** An output as the appliance may play it (a FIFO's path resolved), or the field at fault and why. */
export type PlacedOutput =
  | { output: StreamOutput; field?: undefined; problem?: undefined }
  | { output?: undefined; field: 'device' | 'path'; problem: string };

/**
 * Whether the appliance may play into `output`, and how it stores it: an ALSA device must be a name of
 * ALSA_DEVICE_FORMS (no plugin that writes a file or runs a program); a FIFO an absolute path without `..` that
 * resolves (symlinks followed) into FIFO_FOLDERS, outside the state folder `stateDir`, naming a FIFO or nothing yet. A
 * FIFO is stored as the path it resolves to, so two spellings of one FIFO are one output. Neither may hold a control
 * character, a quote or a backslash (MPD's config syntax).
 */
export function placeOutput(output: StreamOutput, stateDir: string): PlacedOutput {
  if (output.kind === 'null') return { output };
  const field = output.kind === 'alsa' ? 'device' : 'path';
  const target = output.kind === 'alsa' ? output.device : output.path;
  const refuse = (problem: string): PlacedOutput => ({ field, problem });
  if (target.length === 0 || target.length > TARGET_MAX) return refuse(`must be 1 to ${TARGET_MAX} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f"\\]/.test(target)) return refuse('must not hold control characters, quotes or backslashes');
  if (output.kind === 'alsa') {
    const problem = alsaDeviceProblem(target);
    return problem ? refuse(problem) : { output };
  }
  if (!target.startsWith('/'))
    return refuse(
      `must be an absolute path, e.g. /run/snapserver/azcd.pcm, got ${JSON.stringify(target.slice(0, 80))}`,
    );
  if (target.split('/').includes('..')) return refuse('must not climb with ".."');
  const place = placeFifo(target, stateDir);
  return place.problem === undefined ? { output: { kind: 'fifo', path: place.path } } : refuse(place.problem);
}

/** The output as it is stored (see placeOutput); refuses (400) one the appliance may not play into, naming the field. */
export function checkOutputForm(output: StreamOutput, stateDir: string): StreamOutput {
  const placed = placeOutput(output, stateDir);
  if (placed.problem === undefined) return placed.output;
  const field = `output.${placed.field}`;
  throw invalid(`"${field}" ${placed.problem}`, { [field]: [placed.problem] });
}

/** The player other than `playerId` whose output is `output` (FIFOs compared by where they lead), if any. */
export function playerOn(
  players: readonly Readonly<PlayerRow>[],
  output: StreamOutput,
  playerId?: string,
): Readonly<PlayerRow> | undefined {
  if (output.kind === 'null') return undefined;
  return players.find((player) => player.id !== playerId && sameOutput(outputOf(player), output));
}

/** Refuses (409) an output another player already plays on: a device or FIFO carries one player's audio. */
export function checkOutputFree(taken: Readonly<PlayerRow> | undefined, output: StreamOutput, playerId?: string): void {
  if (!taken || taken.id === playerId || output.kind === 'null') return;
  const what = output.kind === 'alsa' ? `ALSA device ${output.device}` : `FIFO ${output.path}`;
  throw conflict(
    `the ${what} already carries player "${taken.name}" (${taken.id}); give this player another output, or change that one's first`,
  );
}

/** Where a stored FIFO path leads now (a row an older version stored may be spelled otherwise); as it is if it cannot be resolved. */
function fifoKey(target: string): string {
  try {
    return resolveFifoPath(target);
  } catch {
    return target;
  }
}

/** Whether two outputs are the same (null: none); two FIFO paths are when they lead to the same file. */
export function sameOutput(a: StreamOutput | null, b: StreamOutput | null): boolean {
  const x = outputColumns(a);
  const y = outputColumns(b);
  if (x.kind !== y.kind) return false;
  if (x.target === y.target) return true;
  return x.kind === 'fifo' && fifoKey(x.target!) === fifoKey(y.target!);
}

/** An output as a request names it: the kind may be left to the configured default, a device to ALSA's "default". */
export interface OutputRequest {
  kind?: StreamOutputKind;
  device?: string;
  path?: string;
}

/** The output a request means; a FIFO must name its path (400 otherwise). null and undefined stay as they are. */
export function resolveOutput<T extends OutputRequest | null | undefined>(
  request: T,
  defaultKind: StreamOutputKind,
): StreamOutput | Exclude<T, OutputRequest> {
  if (request === null || request === undefined) return request as Exclude<T, OutputRequest>;
  const kind = request.kind ?? defaultKind;
  if (kind === 'alsa') return { kind, device: request.device ?? 'default' };
  if (kind === 'null') return { kind };
  if (request.path === undefined) {
    const why =
      'a fifo output needs the absolute path of its FIFO, e.g. {"kind":"fifo","path":"/run/snapserver/azcd.pcm"}';
    throw invalid(`"output.path" is missing: ${why}`, { 'output.path': [why] });
  }
  return { kind, path: request.path };
}
