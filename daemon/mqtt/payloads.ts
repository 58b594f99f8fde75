// How values look on the wire: percent volumes, ON/OFF switches and the player names a zone's source select offers.
import type { PlayerView } from '../domain/events.js';

/** The select option meaning "no player": choosing it detaches the zone. */
export const NO_SOURCE = 'None';
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
 * One unique label per player for the source select: its name, or the name and the id's first digits when two
 * players share a name (or a player is named like the "none" option).
 */
export function sourceLabels(players: readonly PlayerView[]): Map<string, string> {
  const counts = new Map<string, number>([[NO_SOURCE, 1]]);
  for (const player of players) counts.set(player.name, (counts.get(player.name) ?? 0) + 1);
  const labels = new Map<string, string>();
  for (const player of players) {
    labels.set(player.id, counts.get(player.name)! > 1 ? `${player.name} (${player.id.slice(0, 8)})` : player.name);
  }
  return labels;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A volume command: a number from 0 to 100 (percent). */
export function parsePercent(payload: string): Parsed<number> {
  const text = payload.trim();
  const n = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 100) return { ok: false, reason: `volume must be a number from 0 to 100, got ${JSON.stringify(payload.slice(0, 40))}` };
  return { ok: true, value: n / 100 };
}

/** A switch command: ON or OFF (any letter case). */
export function parseOnOff(payload: string): Parsed<boolean> {
  const text = payload.trim().toUpperCase();
  if (text === ON) return { ok: true, value: true };
  if (text === OFF) return { ok: true, value: false };
  return { ok: false, reason: `expected ON or OFF, got ${JSON.stringify(payload.slice(0, 40))}` };
}
