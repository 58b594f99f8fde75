// @ts-check
// A volume slider that feels instant: the thumb follows the finger at once, the API sees at most one request
// in flight per slider carrying only the latest value, and live events never yank a slider in the user's hand.
import { h, percent, text } from './dom.js';
import { icon } from './icons.js';
import { heldSlider } from './latest-sender.js';

/**
 * A reported volume this close to one we sent is its echo: the amplifier keeps whole steps, so what it reports for a
 * value is within half a step of it (38 steps on the coarsest amplifier families).
 */
const ECHO_TOLERANCE = 0.5 / 38;

/**
 * @param {object} o
 * @param {string} o.label        accessible name, e.g. "Kitchen volume"
 * @param {boolean} o.readOnly    render a meter instead of a slider (Viewers)
 * @param {(volume: number) => Promise<unknown>} [o.send]
 * @param {(error: Error) => void} [o.onError]
 * @param {(delta: number) => Promise<unknown>} [o.nudge]   adds − and + buttons that send a relative step
 * @returns {HTMLElement & { setValue(v: number): void, setLabel(label: string): void, setLimit(v: number): void, setDisabled(off: boolean): void }}
 */
export function volumeControl({ label, readOnly, send, onError, nudge }) {
  const readout = h('span', { class: 'volume-value', 'aria-hidden': 'true' });
  if (readOnly) return meter(label, readout);

  const input = h('input', { type: 'range', class: 'range', min: '0', max: '100', step: '1', 'aria-label': label });
  const step = (sign) =>
    h('button', {
      type: 'button',
      class: 'btn btn-icon btn-quiet btn-step',
      'data-action': sign > 0 ? 'raise' : 'lower',
      text: sign > 0 ? '+' : '−',
      on: { click: () => nudge(sign * NUDGE_STEP).catch((err) => onError?.(err)) },
    });
  const el = h(
    'div',
    { class: 'volume' },
    icon('volume', 'icon volume-icon'),
    nudge ? step(-1) : null,
    input,
    nudge ? step(1) : null,
    readout,
  );
  /** The zone's maxVolume in percent: the thumb stops there, as the daemon would clamp anyway. */
  let limit = 100;
  let model = 0;
  const show = (fraction) => {
    const v = Math.round(fraction * 100);
    if (Number(input.value) !== v) input.value = String(v);
    input.setAttribute('aria-valuetext', `${v}%`);
    input.style.setProperty('--fill', `${v}%`);
    text(readout, `${v}%`);
  };
  const slider = heldSlider({
    input,
    read: () => Number(input.value) / 100,
    send,
    onError: (err) => onError?.(err),
    showModel: () => show(model),
    isEcho: (reported, sent) => Math.abs(reported - sent) < ECHO_TOLERANCE,
  });

  input.addEventListener('input', () => {
    if (Number(input.value) > limit) input.value = String(limit);
    show(Number(input.value) / 100);
    slider.push();
  });

  el.setValue = (fraction) => {
    if (fraction !== model) slider.reported(fraction);
    model = fraction;
    if (!slider.held()) show(fraction);
  };
  el.setLabel = (name) => {
    input.setAttribute('aria-label', name);
    for (const button of el.querySelectorAll('.btn-step')) {
      const words = `${button.dataset.action === 'raise' ? 'Raise' : 'Lower'} ${name}`;
      button.setAttribute('aria-label', words);
      button.title = words;
    }
  };
  el.setLimit = (fraction) => setLimit(el, input, (limit = Math.round(fraction * 100)));
  el.setDisabled = (off) => {
    for (const control of [input, ...el.querySelectorAll('.btn-step')]) control.disabled = off;
  };
  return el;
}

/** One press of − or + moves the volume by this fraction (applied by the daemon to its current value). */
export const NUDGE_STEP = 0.05;

/** Marks the part of the track above the limit (CSS paints it from --limit) and says it in words. */
function setLimit(el, track, percentLimit) {
  track.style.setProperty('--limit', `${percentLimit}%`);
  el.classList.toggle('has-limit', percentLimit < 100);
  el.dataset.limit = String(percentLimit);
  el.title = percentLimit < 100 ? `Limited to ${percentLimit}%` : '';
}

function meter(label, readout) {
  const fill = h('span', { class: 'meter-fill' });
  const bar = h(
    'div',
    { class: 'meter', role: 'meter', 'aria-label': label, 'aria-valuemin': '0', 'aria-valuemax': '100' },
    fill,
  );
  const el = h('div', { class: 'volume volume-readonly' }, icon('volume', 'icon volume-icon'), bar, readout);
  el.setValue = (fraction) => {
    const v = Math.round(fraction * 100);
    bar.setAttribute('aria-valuenow', String(v));
    bar.setAttribute('aria-valuetext', percent(fraction));
    fill.style.setProperty('--fill', `${v}%`);
    text(readout, percent(fraction));
  };
  el.setLabel = (name) => bar.setAttribute('aria-label', name);
  el.setLimit = (fraction) => setLimit(el, bar, Math.round(fraction * 100));
  el.setDisabled = () => {
    // A meter takes no input: nothing to disable.
  };
  return el;
}
