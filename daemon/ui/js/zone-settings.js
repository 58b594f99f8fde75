// @ts-check
// Zone extras on the Players view: the admin's zone dialog (name and volume limits), the Sound panel, sleep timers
// and All off.

import { post, put } from './api.js';
import { checkedValues, field, openDialog } from './dialogs.js';
import { attempt, attr, count, h, iconButton, toast, uid } from './dom.js';
import { icon } from './icons.js';
import { soundPanel } from './sound.js';
import { can, state, subscribe } from './store.js';

/** The choices of the sleep menu, in minutes (the API takes any number from 0 to 1440; 0 cancels). */
const SLEEP_CHOICES = [15, 30, 60, 90];
const DEFAULT_SLEEP = 30;
const MINUTE_MS = 60_000;

const toPercent = (fraction) => (fraction === null || fraction === undefined ? '' : String(Math.round(fraction * 100)));
const fromPercent = (value) => Number(value) / 100;

/** Admins set the name, the volume limit and the turn-on volume of a zone (PUT /api/zones/{id}). */
export function editZone(zone) {
  const percentField = (name, label, value, hint, required) =>
    field({
      name,
      label,
      type: 'number',
      min: '0',
      max: '100',
      step: '1',
      inputmode: 'numeric',
      value: toPercent(value),
      hint,
      required,
    });
  return openDialog({
    title: `Edit ${zone.name}`,
    content: [
      field({
        name: 'name',
        label: 'Name of the zone',
        value: zone.name,
        required: true,
        maxlength: '100',
        autocomplete: 'off',
      }),
      percentField(
        'maxVolume',
        'Volume limit (%)',
        zone.maxVolume ?? 1,
        'No path (keypad, group slider, scene, hub) can set the zone louder than this; louder requests are lowered to it.',
        true,
      ),
      percentField(
        'turnOnVolume',
        'Turn-on volume (%)',
        zone.turnOnVolume,
        'The volume the zone starts at when it is switched on, at most the volume limit. Leave empty to keep the last volume.',
        false,
      ),
    ],
    submitLabel: 'Save',
    onSubmit: (form) => {
      const { name, maxVolume, turnOnVolume } = form.elements;
      return put(`/api/zones/${zone.id}`, {
        name: name.value.trim(),
        maxVolume: fromPercent(maxVolume.value),
        turnOnVolume: turnOnVolume.value === '' ? null : fromPercent(turnOnVolume.value),
      });
    },
  });
}

/** A button that opens the Sound panel of a zone; `update(zone)` keeps its name current. */
export function soundButton() {
  const button = iconButton({
    icon: icon('music'),
    label: '',
    className: 'btn btn-icon btn-quiet btn-sound',
    action: 'sound',
    onClick: () => soundDialog(button.zone),
  });
  button.update = (z) => {
    button.zone = z;
    attr(button, 'aria-label', `Sound of ${z.name}`);
    attr(button, 'title', `Sound of ${z.name}: bass, treble, balance, loudness`);
  };
  return button;
}

/** Bass, treble, balance and loudness of one zone, following zone.toneChanged while open (Viewers see them only). */
function soundDialog(zone) {
  const panel = soundPanel(zone, { readOnly: !can.change() });
  const stop = subscribe((topics) => {
    const current = state.zones.get(zone.id);
    if (topics.has('audio') && current) panel.update(current);
  });
  return openDialog({
    title: `Sound of ${zone.name}`,
    description: 'Changes reach the amplifier as you make them, in its own steps.',
    content: [panel],
    submitLabel: 'Done',
    cancelLabel: null,
  }).finally(stop);
}

/** "sleeps in 14 min" / "sleeps in 1 h" / "sleeps in 1 h 5 min", or '' without a timer. */
export function sleepText(zone, now = Date.now()) {
  if (!zone.sleepUntil) return '';
  const minutes = Math.max(1, Math.ceil((Date.parse(zone.sleepUntil) - now) / MINUTE_MS));
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60 ? `${minutes % 60} min` : '';
  return `sleeps in ${hours ? `${hours} h${rest ? ` ${rest}` : ''}` : rest}`;
}

/** A button that opens the sleep timer dialog of a zone; `update(zone)` keeps its state and name current. */
export function sleepButton() {
  const button = iconButton({
    icon: icon('clock'),
    label: '',
    className: 'btn btn-toggle btn-sleep',
    action: 'sleep',
    onClick: () => sleepDialog(button.zone),
  });
  button.update = (z) => {
    button.zone = z;
    const label = `Sleep timer of ${z.name}`;
    attr(button, 'aria-label', label);
    attr(button, 'aria-pressed', String(Boolean(z.sleepUntil)));
    // A timer needs the zone to be on and able to answer (the API refuses it otherwise), so the button waits for that.
    button.disabled = !z.power || !z.available;
    const why = !z.available ? `${z.name} cannot answer now` : `Switch ${z.name} on to set a sleep timer`;
    attr(button, 'title', z.power && z.available ? `${label}${z.sleepUntil ? `: ${sleepText(z)}` : ''}` : why);
  };
  return button;
}

function sleepDialog(zone) {
  const choice = (value, label, checked) => {
    const id = uid('sleep');
    return h(
      'div',
      { class: 'check' },
      h('input', { id, type: 'radio', name: 'minutes', value: String(value), checked }),
      h('label', { for: id, text: label }),
    );
  };
  return openDialog({
    title: `Sleep timer of ${zone.name}`,
    description: zone.sleepUntil
      ? `${zone.name} ${sleepText(zone)}. Choose a new time or cancel the timer.`
      : `${zone.name} switches off by itself after the time you choose.`,
    content: [
      h(
        'fieldset',
        { class: 'check-group' },
        h('legend', { text: 'Switch off' }),
        SLEEP_CHOICES.map((m) => choice(m, `In ${m} min`, m === DEFAULT_SLEEP)),
        zone.sleepUntil ? choice(0, 'Cancel the timer', false) : null,
      ),
    ],
    submitLabel: 'Set timer',
    onSubmit: async (form) => {
      const minutes = Number(checkedValues(form, 'minutes')[0]);
      await put(`/api/zones/${zone.id}/sleep`, { minutes });
      toast(
        minutes ? `${zone.name} switches off in ${minutes} min.` : `Sleep timer of ${zone.name} cancelled.`,
        'success',
      );
    },
  });
}

/** Re-renders the view now and then while any timer runs, so "sleeps in" counts down. */
export function tickWhileSleeping(zones, render) {
  const TICK_MS = 15_000;
  let timer = 0;
  return () => {
    const sleeping = [...zones()].some((z) => z.sleepUntil);
    if (sleeping && !timer) timer = setInterval(render, TICK_MS);
    if (!sleeping && timer) {
      clearInterval(timer);
      timer = 0;
    }
  };
}

/** Powers off every zone the caller may see (POST /api/zones/all-off) and says how many went off, and which could not. */
export async function allOff(button) {
  button.disabled = true;
  /** @type {any} */
  let result;
  if (await attempt(async () => (result = await post('/api/zones/all-off')))) {
    const n = result.zoneIds.length;
    toast(n ? `Switched off ${count(n, 'zone')}.` : 'Every zone was already off.', 'success');
    if (result.skipped?.length) toast(skippedText(result.skipped), 'error');
  }
  button.disabled = false;
}

/** "Not reached: Garden (amplifier … does not answer)." for zones a multi-zone change had to leave alone. */
export function skippedText(skipped) {
  return `Not reached: ${skipped.map((s) => `${state.zones.get(s.zoneId)?.name ?? 'a zone'} (${s.reason})`).join('; ')}.`;
}
