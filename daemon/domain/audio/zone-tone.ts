// A zone's tone and what its amplifier reports about it, as the API shows them: the stored tone (or, before any was
// stored, the one read from the amplifier) on the controls the family has, which controls it lacks and why, and flags.

import type { AmplifierDriver, SoundDescription, ToneControl, ZoneFlags, ZoneTone } from '../../../drivers/driver.js';
import { TONE_CONTROLS } from '../../../drivers/driver.js';
import type { ZoneRow, ZoneToneColumns } from '../../store/audio-repo.js';
import type { AmplifierStatusView, ToneControlsView, ZoneToneView } from '../shared/index.js';
import { conflict, invalid } from '../shared/index.js';

/** What a tone change naming no control is told (the REST schema says the same). */
export const TONE_NONE = 'send at least one of "bass", "treble", "balance" and "loudness"';

const NO_TONE = 'this amplifier family has no tone controls';

/** Whether the family has the control; the reason it lacks it otherwise. */
function lacks(sound: SoundDescription | undefined, control: ToneControl): string | undefined {
  const has = sound?.controls[control];
  if (!has) return NO_TONE;
  return typeof has === 'object' && 'absent' in has ? has.absent : undefined;
}

/** The tone a zone has stored (controls never stored left out), as a driver takes it. */
export function storedTone(zone: Readonly<ZoneToneColumns>): ZoneTone {
  const tone: ZoneTone = {};
  if (zone.tone_bass !== null) tone.bass = zone.tone_bass;
  if (zone.tone_treble !== null) tone.treble = zone.tone_treble;
  if (zone.tone_balance !== null) tone.balance = zone.tone_balance;
  if (zone.tone_loudness !== null) tone.loudness = zone.tone_loudness === 1;
  return tone;
}

/** A tone as the zone's columns: a control left out is null. */
export function toneColumns(tone: ZoneTone): ZoneToneColumns {
  return {
    tone_bass: tone.bass ?? null,
    tone_treble: tone.treble ?? null,
    tone_balance: tone.balance ?? null,
    tone_loudness: tone.loudness === undefined ? null : tone.loudness ? 1 : 0,
  };
}

/** Only the controls the family has: a tone kept from another amplifier, or stored before, is not sent to one that lacks them. */
export function toneFor(sound: SoundDescription | undefined, tone: ZoneTone): ZoneTone {
  const kept: Record<string, unknown> = {};
  for (const control of TONE_CONTROLS)
    if (tone[control] !== undefined && lacks(sound, control) === undefined) kept[control] = tone[control];
  return kept as ZoneTone;
}

/**
 * The zone's tone as the API shows it: the stored value of each control the family has, or before one was stored
 * the value read from the amplifier; null for a control the family lacks (or one not read yet).
 */
export function toneViewOf(
  zone: Readonly<ZoneRow>,
  driver: AmplifierDriver | undefined,
  sound = driver?.describe().sound,
): ZoneToneView {
  const known = { ...driver?.hardwareTone?.(zone.output_channel), ...storedTone(zone) };
  const has = (control: ToneControl) => lacks(sound, control) === undefined;
  return {
    bass: has('bass') ? (known.bass ?? null) : null,
    treble: has('treble') ? (known.treble ?? null) : null,
    balance: has('balance') ? (known.balance ?? null) : null,
    loudness: has('loudness') ? (known.loudness ?? null) : null,
  };
}

/** The zone's tone as it shows it, the controls known only (what a scene captures and a write completes). */
export function knownTone(zone: Readonly<ZoneRow>, driver: AmplifierDriver | undefined): ZoneTone {
  const shown = toneViewOf(zone, driver);
  const tone: ZoneTone = {};
  if (shown.bass !== null) tone.bass = shown.bass;
  if (shown.treble !== null) tone.treble = shown.treble;
  if (shown.balance !== null) tone.balance = shown.balance;
  if (shown.loudness !== null) tone.loudness = shown.loudness;
  return tone;
}

/** Which controls the family has (with its native steps each side) and, for each it lacks, the driver's reason. */
export function toneControlsOf(sound: SoundDescription | undefined): ToneControlsView {
  const stepped = (control: 'bass' | 'treble' | 'balance') => {
    const reason = lacks(sound, control);
    if (reason !== undefined) return { available: false as const, reason };
    const scale = sound!.controls[control] as { down: number; up: number };
    return { available: true as const, down: scale.down, up: scale.up };
  };
  const loudness = lacks(sound, 'loudness');
  return {
    bass: stepped('bass'),
    treble: stepped('treble'),
    balance: stepped('balance'),
    loudness: loudness === undefined ? { available: true } : { available: false, reason: loudness },
  };
}

/** What the amplifier last reported about the zone; null for what the family does not report (or has not yet). */
export function amplifierStatusOf(flags: ZoneFlags | undefined): AmplifierStatusView {
  return { paging: flags?.paging ?? null, doNotDisturb: flags?.doNotDisturb ?? null, party: flags?.party ?? null };
}

/**
 * Checks a tone change for a zone of this family: a key that is no control or a value off the scale is a 400
 * naming it and the range; a control the family lacks is a 409 quoting the reason. Nothing is changed on refusal.
 */
export function checkToneChange(
  zoneName: string,
  sound: SoundDescription | undefined,
  change: Record<string, unknown>,
): ZoneTone {
  const keys = Object.keys(change).filter((key) => change[key] !== undefined);
  const unknown = keys.find((key) => !(TONE_CONTROLS as readonly string[]).includes(key));
  if (unknown !== undefined) {
    const detail = `"${unknown}" is no tone control; ${TONE_NONE}`;
    throw invalid(detail, { [unknown]: [detail] });
  }
  if (keys.length === 0) throw invalid(TONE_NONE, { body: [TONE_NONE] });
  for (const key of keys as ToneControl[]) {
    const value = change[key];
    if (key === 'loudness') {
      if (typeof value !== 'boolean')
        throw invalid(`"loudness" must be true or false, got ${JSON.stringify(value)}`, {
          loudness: ['must be true or false'],
        });
    } else if (typeof value !== 'number' || !Number.isFinite(value) || value < -1 || value > 1) {
      throw invalid(`"${key}" must be a number from -1 to 1, got ${JSON.stringify(value)}`, {
        [key]: ['must be a number from -1 to 1'],
      });
    }
  }
  for (const key of keys as ToneControl[]) {
    const reason = lacks(sound, key);
    if (reason !== undefined) throw conflict(`zone "${zoneName}" has no ${key} control: ${reason}`);
  }
  return change as ZoneTone;
}

/** Whether two tones as the API shows them differ. */
export function toneDiffers(a: ZoneToneView, b: ZoneToneView): boolean {
  return a.bass !== b.bass || a.treble !== b.treble || a.balance !== b.balance || a.loudness !== b.loudness;
}

/** Whether two statuses differ. */
export function statusDiffers(a: AmplifierStatusView, b: AmplifierStatusView): boolean {
  return a.paging !== b.paging || a.doNotDisturb !== b.doNotDisturb || a.party !== b.party;
}
