// @ts-check
// A volume slider that feels instant: the thumb follows the finger at once, the API sees at most one request
// in flight per slider carrying only the latest value, and live events never yank a slider in the user's hand.
import { h, percent, text } from './dom.js';
import { icon } from './icons.js';

/** Smallest gap between the starts of two requests of one slider (a throttle on top of "one in flight"). */
export const MIN_GAP_MS = 80;
/** After release, echoes of our own intermediate values may still arrive: wait before showing the model. */
const SETTLE_MS = 400;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
  let latest = null;
  let sent = null;
  let busy = false;
  let dragging = false;
  let settleTimer = 0;
  let lastStart = -Infinity;
  /** Values sent since the pump last went busy (their echoes are no news), and whether another one was reported. */
  const mine = new Set();
  let overtaken = false;

  const show = (fraction) => {
    const v = Math.round(fraction * 100);
    if (Number(input.value) !== v) input.value = String(v);
    input.setAttribute('aria-valuetext', `${v}%`);
    input.style.setProperty('--fill', `${v}%`);
    text(readout, `${v}%`);
  };
  const held = () => dragging || busy || settleTimer !== 0;

  const settle = () => {
    if (dragging || busy) return;
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      settleTimer = 0;
      if (!held()) show(model);
    }, SETTLE_MS);
  };

  async function pump() {
    if (busy) return;
    busy = true;
    try {
      while (latest !== null && latest !== sent) {
        const wait = lastStart + MIN_GAP_MS - performance.now();
        if (wait > 0) await sleep(wait);
        // Read the value only now: whatever arrived during the wait collapses into this one request.
        const value = latest;
        if (value === null || value === sent) break;
        lastStart = performance.now();
        mine.add(value);
        overtaken = false;
        await send(value);
        // Overtaken by another value reported while in flight (a keypad, another client): it has to go again.
        if (!overtaken) sent = value;
      }
    } catch (err) {
      latest = sent = null;
      dragging = false;
      show(model);
      onError?.(err);
    } finally {
      busy = false;
      mine.clear();
      settle();
    }
  }

  const push = () => {
    latest = Number(input.value) / 100;
    void pump();
  };
  const release = () => {
    if (!dragging) return;
    dragging = false;
    push();
    settle();
  };

  input.addEventListener('pointerdown', () => {
    dragging = true;
    sent = null;
    clearTimeout(settleTimer);
    settleTimer = 0;
    window.addEventListener('pointerup', release, { once: true });
    window.addEventListener('pointercancel', release, { once: true });
  });
  input.addEventListener('input', () => {
    if (Number(input.value) > limit) input.value = String(limit);
    show(Number(input.value) / 100);
    push();
  });
  input.addEventListener('change', () => {
    push();
    release();
    settle();
  });

  el.setValue = (fraction) => {
    if (fraction !== model) {
      sent = null;
      if (busy && !mine.has(fraction)) overtaken = true;
    }
    model = fraction;
    if (!held()) show(fraction);
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
