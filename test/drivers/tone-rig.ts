// Tone and status flags between the shared scale (drivers/driver.ts) and an emulator's native fields, for the rigs.
import type { SoundDescription, StepControl, ToneScale, ZoneFlags, ZoneState, ZoneTone } from '../../drivers/driver.js';
import { stepToTone, toneToStep } from '../../drivers/driver.js';

/** What a keypad, a front panel or the amplifier itself may change behind the driver's back. */
export type PanelChange = Partial<ZoneState> & ZoneTone & ZoneFlags;

/** Bass, treble and balance in native steps, loudness as is (what emulators hold). */
export interface NativeTone {
  bass: number;
  treble: number;
  balance: number;
  loudness?: boolean;
}

const STEPPED: readonly StepControl[] = ['bass', 'treble', 'balance'];

/** A stepped control's scale in a family's description; throws for one it lacks (a rig asked for what cannot be). */
export function scaleOf(sound: SoundDescription, control: StepControl): ToneScale {
  const has = sound.controls[control];
  if ('absent' in has) throw new Error(`no ${control} control: ${has.absent}`);
  return has;
}

/** The tone fields of a change, in native steps; the others left out. */
export function toNative(change: ZoneTone, sound: SoundDescription): Partial<NativeTone> {
  const out: Partial<NativeTone> = {};
  for (const control of STEPPED) {
    const value = change[control];
    if (value !== undefined) out[control] = toneToStep(value, scaleOf(sound, control));
  }
  if (change.loudness !== undefined) out.loudness = change.loudness;
  return out;
}

/** What an emulator holds, on the shared scale: the controls the family has. */
export function fromNative(native: NativeTone, sound: SoundDescription): ZoneTone {
  const tone: ZoneTone = {};
  for (const control of STEPPED)
    if (!('absent' in sound.controls[control])) tone[control] = stepToTone(native[control], scaleOf(sound, control));
  if (sound.controls.loudness === true) tone.loudness = native.loudness === true;
  return tone;
}
