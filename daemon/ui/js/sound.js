// @ts-check
// The zone's Sound panel (bass, treble, balance in the amplifier's own steps, loudness) and its amplifier-status badges.

import { put } from './api.js';
import { attr, h, text, uid } from './dom.js';
import { heldSlider } from './latest-sender.js';

/** The three stepped controls, in the order the panel shows them. */
export const STEPPED = ['bass', 'treble', 'balance'];
const LABELS = { bass: 'Bass', treble: 'Treble', balance: 'Balance', loudness: 'Loudness' };

/** The native step of a value on the API's −1…1 scale: the amplifier has `down` steps below flat and `up` above. */
export const toStep = (value, { down, up }) => Math.round(value < 0 ? value * down : value * up);
/** The API's value of a native step: step/down below flat, step/up above, so every step lands exactly. */
export const fromStep = (step, { down, up }) => (step < 0 ? step / down : step / up);

/** A step in people's words: "+3", "flat", "−2" for bass and treble; "L 2", "centre", "R 4" for balance. */
export function stepWords(control, step) {
  if (control === 'balance') return step === 0 ? 'centre' : `${step < 0 ? 'L' : 'R'} ${Math.abs(step)}`;
  return step === 0 ? 'flat' : `${step < 0 ? '−' : '+'}${Math.abs(step)}`;
}

/**
 * What one control of a zone shows: unavailable with the amplifier's reason, waiting for its first reading, or its value
 * (a native step for the stepped ones, on/off for loudness) with the words for it. The panel and the tests read this.
 */
export function controlView(zone, control) {
  const described = zone.toneControls?.[control];
  if (!described?.available)
    return {
      control,
      label: LABELS[control],
      available: false,
      words: `Not on this amplifier: ${described?.reason ?? 'the amplifier does not say'}`,
    };
  const value = zone.tone?.[control];
  if (value === null || value === undefined)
    return {
      control,
      label: LABELS[control],
      available: true,
      unknown: true,
      words: 'not read from the amplifier yet',
    };
  if (control === 'loudness')
    return { control, label: LABELS[control], available: true, value, words: value ? 'on' : 'off' };
  const step = toStep(value, described);
  return {
    control,
    label: LABELS[control],
    available: true,
    step,
    down: described.down,
    up: described.up,
    words: stepWords(control, step),
  };
}

/** The amplifier's reports that are true, as words for badges ("Paging", "Do not disturb", "Party"). */
export function statusWords(zone) {
  const s = zone.amplifierStatus ?? {};
  return [s.paging && 'Paging', s.doNotDisturb && 'Do not disturb', s.party && 'Party'].filter(Boolean);
}

/** The badges of a zone card; `update(zone)` shows what the amplifier reports now (text, not colour alone). */
export function statusBadges() {
  const el = h('span', { class: 'zone-flags' });
  el.update = (zone) => {
    const words = statusWords(zone);
    if (el.dataset.words === words.join('|')) return;
    el.dataset.words = words.join('|');
    el.hidden = words.length === 0;
    el.replaceChildren(...words.map((w) => h('span', { class: 'badge badge-flag', text: w })));
  };
  return el;
}

/**
 * One stepped control: a slider in the amplifier's native steps, its value in words beside it and for screen readers.
 * A change from the amplifier moves it unless the user holds it (dragging, sending, or just let go).
 */
function steppedControl(zoneId, control, readOnly, onError) {
  const id = uid(`tone-${control}`);
  const input = h('input', {
    id,
    type: 'range',
    class: 'range',
    step: '1',
    'data-control': control,
    disabled: readOnly,
  });
  const words = h('output', { class: 'tone-value', for: id });
  const reason = h('span', { class: 'tone-reason' });
  const el = h(
    'div',
    { class: 'tone-row', 'data-control': control },
    h('label', { for: id, text: LABELS[control] }),
    input,
    words,
    reason,
  );
  let view = null;
  const showStep = (step) => {
    if (Number(input.value) !== step) input.value = String(step);
    const said = stepWords(control, step);
    attr(input, 'aria-valuetext', said);
    text(words, said);
    input.style.setProperty('--fill', `${((step + view.down) / (view.down + view.up)) * 100}%`);
  };
  const slider = heldSlider({
    input,
    read: () => Number(input.value),
    send: (step) => put(`/api/zones/${zoneId}/tone`, { [control]: fromStep(step, view) }),
    onError,
    showModel: () => {
      if (view?.step !== undefined) showStep(view.step);
    },
  });
  input.addEventListener('input', () => {
    showStep(Number(input.value));
    slider.push();
  });

  el.update = (zone) => {
    const next = controlView(zone, control);
    if (next.step !== view?.step) slider.reported(next.step);
    view = next;
    el.classList.toggle('is-unavailable', !next.available);
    input.hidden = !next.available;
    words.hidden = !next.available;
    reason.hidden = next.available && !next.unknown;
    text(reason, next.available ? (next.unknown ? next.words : '') : next.words);
    if (!next.available || next.unknown) {
      input.disabled = true;
      return;
    }
    input.disabled = readOnly || !zone.available;
    attr(input, 'min', String(-next.down));
    attr(input, 'max', String(next.up));
    if (!slider.held()) showStep(next.step);
  };
  return el;
}

/** The loudness switch: a checkbox with role switch, sent at once (one press is one request). */
function loudnessControl(zoneId, readOnly, onError) {
  const id = uid('tone-loudness');
  const input = h('input', { id, type: 'checkbox', role: 'switch', 'data-control': 'loudness', disabled: readOnly });
  const reason = h('span', { class: 'tone-reason' });
  const el = h(
    'div',
    { class: 'tone-row tone-switch', 'data-control': 'loudness' },
    h('label', { for: id, text: LABELS.loudness }),
    input,
    reason,
  );
  let model = null;
  input.addEventListener('change', async () => {
    const wanted = input.checked;
    try {
      await put(`/api/zones/${zoneId}/tone`, { loudness: wanted });
    } catch (err) {
      input.checked = Boolean(model);
      onError(err);
    }
  });
  el.update = (zone) => {
    const view = controlView(zone, 'loudness');
    el.classList.toggle('is-unavailable', !view.available);
    input.hidden = !view.available;
    reason.hidden = view.available && !view.unknown;
    text(reason, view.available && !view.unknown ? '' : view.words);
    input.disabled = readOnly || !view.available || view.unknown || !zone.available;
    model = view.value;
    input.checked = Boolean(view.value);
  };
  return el;
}

/**
 * The panel's body for one zone: a row per control, a line for a refusal in the dashboard's words, and `update(zone)`
 * to follow zone.toneChanged. Viewers see the values with the controls disabled.
 */
export function soundPanel(zone, { readOnly }) {
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const onError = (err) => {
    error.textContent = err?.message ?? String(err);
    error.hidden = false;
  };
  const rows = [
    ...STEPPED.map((c) => steppedControl(zone.id, c, readOnly, onError)),
    loudnessControl(zone.id, readOnly, onError),
  ];
  const panel = h('div', { class: 'sound-panel' }, rows, error);
  panel.update = (z) => {
    for (const row of rows) row.update(z);
  };
  panel.update(zone);
  return panel;
}
