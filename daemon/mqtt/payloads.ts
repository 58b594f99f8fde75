// How values look on the wire: percent volumes, ON/OFF switches and the player names a zone's source select offers.

import { stepToTone, toneToStep } from '../domain/audio/index.js';
import { RECEIVER_DISPLAY_NAMES } from '../domain/playback/index.js';
import type { PlaybackView, PlayerView, ReceiverView } from '../domain/shared/index.js';

/**
 * The select option meaning "no player": choosing it detaches the zone. Not "None": Home Assistant's MQTT select
 * reads a state of `None` (any letter case) as "no option chosen" and shows the entity as unknown.
 */
export const NO_SOURCE = 'No player';
/** What older versions published for a detached zone; still taken as a command from scripts written for them. */
export const LEGACY_NO_SOURCE = 'None';
export const ON = 'ON';
export const OFF = 'OFF';
export const PRESS = 'PRESS';
export const ONLINE = 'online';
export const OFFLINE = 'offline';

/** 0..1 as a percentage with at most one decimal (0.333 → "33.3"): what a hub's slider shows. */
export function percent(volume: number): string {
  return String(Math.round(volume * 1000) / 10);
}

export const onOff = (value: boolean): string => (value ? ON : OFF);

/**
 * Names Home Assistant cannot offer as they are: its select takes `None` in any letter case for "no option" and
 * ignores a blank state, and the detach option must stay the only one of its name.
 */
function reserved(name: string): boolean {
  const folded = name.trim().toLowerCase();
  return folded === '' || folded === LEGACY_NO_SOURCE.toLowerCase() || folded === NO_SOURCE.toLowerCase();
}

/**
 * One unique label per player for the source select: its name, or the name and the id's first digits when two
 * players share a name or the name is one Home Assistant reads as "no option" (`none`, blank) or is the detach
 * option's. Labels never repeat, even for names made to look like another player's label.
 */
export function sourceLabels(players: readonly PlayerView[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const player of players) counts.set(player.name, (counts.get(player.name) ?? 0) + 1);
  const labels = new Map<string, string>();
  for (const player of players) {
    const plain = counts.get(player.name) === 1 && !reserved(player.name);
    const label = plain ? player.name : `${player.name.trim() || 'Player'} (${player.id.slice(0, 8)})`;
    labels.set(player.id, label);
  }
  // A player literally named "Den (aaaaaaaa)" beside two players named "Den": the full id settles it.
  const seen = new Map<string, number>();
  for (const label of labels.values()) seen.set(label, (seen.get(label) ?? 0) + 1);
  for (const player of players) {
    const label = labels.get(player.id)!;
    if (seen.get(label)! > 1) labels.set(player.id, `${player.name.trim() || 'Player'} (${player.id})`);
  }
  return labels;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A plain decimal number from `min` to `max`, as hubs send them ("42", "42.5"; no exponents, hex or units). */
function parseNumber(payload: string, min: number, max: number, what: string): Parsed<number> {
  const text = payload.trim();
  const n = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n) || n < min || n > max)
    return {
      ok: false,
      reason: `${what} must be a number from ${min} to ${max}, got ${JSON.stringify(payload.slice(0, 40))}`,
    };
  return { ok: true, value: n };
}

/** A volume command: a number from 0 to 100 (percent). */
export function parsePercent(payload: string): Parsed<number> {
  const parsed = parseNumber(payload, 0, 100, 'volume');
  return parsed.ok ? { ok: true, value: parsed.value / 100 } : parsed;
}

/** A sleep timer command: minutes from now, 0 cancels. */
export function parseMinutes(payload: string, max: number): Parsed<number> {
  return parseNumber(payload, 0, max, 'sleep minutes');
}

/** Minutes left on a sleep timer, rounded up (a timer due in 10 s still shows 1); 0 without one. */
export function minutesLeft(sleepUntil: string | null, now: number): number {
  if (sleepUntil === null) return 0;
  return Math.max(0, Math.ceil((Date.parse(sleepUntil) - now) / 60_000));
}

/** A stepped tone control's native steps each side of flat (or centre), as the zone's toneControls give them. */
export interface ToneSteps {
  down: number;
  up: number;
}

/**
 * A tone control (-1..1) as the amplifier's native step counted from flat or centre: -down..up, 0 flat. Each side of
 * flat is spread evenly over its own steps (the API's tone scale), so each value Home Assistant offers is one step the
 * amplifier has, and a tone written between two steps shows the step the amplifier plays.
 */
export function toneStep(value: number, scale: ToneSteps): string {
  // The drivers count steps from full cut (0); Home Assistant from flat.
  return String(toneToStep(value, scale) - scale.down);
}

/**
 * A tone command: a native step from -down to up, as the number entity offers them, back on the API's -1..1 scale
 * (each side of flat spread over its own steps, as the drivers map it, so the step reaches the amplifier exactly).
 */
export function parseToneStep(payload: string, scale: ToneSteps, control: string): Parsed<number> {
  const parsed = parseNumber(payload, -scale.down, scale.up, control);
  if (!parsed.ok) return parsed;
  return { ok: true, value: stepToTone(parsed.value + scale.down, scale) };
}

/** A switch command: ON or OFF (any letter case). */
export function parseOnOff(payload: string): Parsed<boolean> {
  const text = payload.trim().toUpperCase();
  if (text === ON) return { ok: true, value: true };
  if (text === OFF) return { ok: true, value: false };
  return { ok: false, reason: `expected ON or OFF, got ${JSON.stringify(payload.slice(0, 40))}` };
}

/** What the now-playing line is made of. */
export type NowPlayingFields = Pick<PlaybackView, 'uri' | 'title' | 'artist' | 'name'> &
  Partial<Pick<PlaybackView, 'source'>>;

/**
 * How a receiver kind is named (the drivers' registry's display names): its switch's entity, and the now-playing
 * line of a cast whose sender gives no title.
 */
export const RECEIVER_NAMES: Readonly<Record<string, string>> = RECEIVER_DISPLAY_NAMES;

/** What a now-playing sensor shows when nothing is current. */
export const NOTHING_PLAYING = 'Nothing playing';
/** Home Assistant refuses a sensor state longer than this many code points (Python's len). */
const STATE_MAX = 255;

/**
 * A stream player's now-playing line: "Artist – Title", the title alone, a radio's name, or the file's name; held to
 * the length Home Assistant takes.
 */
export function nowPlaying(playback: NowPlayingFields): string {
  const cast = playback.source === undefined ? undefined : RECEIVER_NAMES[playback.source];
  if (playback.uri === null && cast === undefined) return NOTHING_PLAYING;
  // A URL ending in a slash has no last segment: the whole URI then (Home Assistant reads a blank state as no value).
  const title =
    playback.title ??
    playback.name ??
    (playback.uri === null ? `${cast} cast` : playback.uri.slice(playback.uri.lastIndexOf('/') + 1) || playback.uri);
  const line = playback.artist && playback.title ? `${playback.artist} – ${playback.title}` : title;
  // Cut by code points, as Home Assistant counts: a cut by UTF-16 units could split an emoji's surrogate pair.
  const points = [...line];
  return points.length > STATE_MAX ? `${points.slice(0, STATE_MAX - 1).join('')}…` : line;
}

/** The details beside the line (the sensor's attributes); the position has its own topic, as it changes every second. */
export function nowPlayingAttributes(playback: PlaybackView): string {
  const { source, state, title, artist, album, name, uri, durationMs, playlistId, trackId } = playback;
  return JSON.stringify({
    source,
    state,
    title,
    artist,
    album,
    station: name,
    uri,
    duration_s: durationMs === null ? null : Math.round(durationMs / 1000),
    playlist_id: playlistId,
    track_id: trackId,
  });
}

/** How a receiver runs, beside its switch (the switch's attributes): the same fields as the API's receiver. */
export function receiverAttributes(receiver: ReceiverView): string {
  const { phase, cast, detail, server, variant } = receiver;
  return JSON.stringify({ phase, cast, detail, server, ...(variant === undefined ? {} : { variant }) });
}
