// A player's stream output as rows store it and views show it, its checks, and what the audio capability asks the
// playback capability about stream players (the composition root connects the two).
import type { PlayerRow, StreamOutputKind } from '../../store/audio-repo.js';

export type { StreamOutputKind };
import { conflict, invalid } from '../shared/index.js';
import type { StreamOutput } from '../shared/index.js';

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

/**
 * Refuses (400) an output MPD could not be configured with: an ALSA device is a name as `aplay -L` prints it, a FIFO
 * an absolute path without `..`; neither may hold a control character, a quote or a backslash (MPD's config syntax).
 */
export function checkOutputForm(output: StreamOutput): void {
  const refuse = (field: string, why: string): never => {
    throw invalid(`"output.${field}" ${why}`, { [`output.${field}`]: [why] });
  };
  const target = output.kind === 'alsa' ? output.device : output.kind === 'fifo' ? output.path : undefined;
  if (target === undefined) return;
  const field = output.kind === 'alsa' ? 'device' : 'path';
  if (target.length === 0 || target.length > TARGET_MAX) refuse(field, `must be 1 to ${TARGET_MAX} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f"\\]/.test(target)) refuse(field, 'must not hold control characters, quotes or backslashes');
  if (output.kind === 'fifo') {
    if (!target.startsWith('/')) refuse(field, `must be an absolute path, e.g. /run/snapserver/azcd.pcm, got ${JSON.stringify(target.slice(0, 80))}`);
    if (target.split('/').includes('..')) refuse(field, 'must not climb with ".."');
  }
}

/** Refuses (409) an output another player already plays on: a device or FIFO carries one player's audio. */
export function checkOutputFree(taken: Readonly<PlayerRow> | undefined, output: StreamOutput, playerId?: string): void {
  if (!taken || taken.id === playerId || output.kind === 'null') return;
  const what = output.kind === 'alsa' ? `ALSA device ${output.device}` : `FIFO ${output.path}`;
  throw conflict(`the ${what} already carries player "${taken.name}" (${taken.id}); give this player another output, or change that one's first`);
}

/** Whether two outputs are the same (null: none). */
export function sameOutput(a: StreamOutput | null, b: StreamOutput | null): boolean {
  const x = outputColumns(a);
  const y = outputColumns(b);
  return x.kind === y.kind && x.target === y.target;
}

/** An output as a request names it: the kind may be left to the configured default, a device to ALSA's "default". */
export interface OutputRequest {
  kind?: StreamOutputKind;
  device?: string;
  path?: string;
}

/** The output a request means; a FIFO must name its path (400 otherwise). null and undefined stay as they are. */
export function resolveOutput<T extends OutputRequest | null | undefined>(request: T, defaultKind: StreamOutputKind): StreamOutput | Exclude<T, OutputRequest> {
  if (request === null || request === undefined) return request as Exclude<T, OutputRequest>;
  const kind = request.kind ?? defaultKind;
  if (kind === 'alsa') return { kind, device: request.device ?? 'default' };
  if (kind === 'null') return { kind };
  if (request.path === undefined) {
    const why = 'a fifo output needs the absolute path of its FIFO, e.g. {"kind":"fifo","path":"/run/snapserver/azcd.pcm"}';
    throw invalid(`"output.path" is missing: ${why}`, { 'output.path': [why] });
  }
  return { kind, path: request.path };
}
