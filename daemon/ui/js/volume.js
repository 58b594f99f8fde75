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
 * @returns {HTMLElement & { setValue(v: number): void, setLabel(label: string): void }}
 */
export function volumeControl({ label, readOnly, send, onError }) {
  const readout = h('span', { class: 'volume-value', 'aria-hidden': 'true' });
  if (readOnly) return meter(label, readout);

  const input = h('input', { type: 'range', class: 'range', min: '0', max: '100', step: '1', 'aria-label': label });
  const el = h('div', { class: 'volume' }, icon('volume', 'icon volume-icon'), input, readout);
  let model = 0;
  let latest = null;
  let sent = null;
  let busy = false;
  let dragging = false;
  let settleTimer = 0;
  let lastStart = -Infinity;

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
        await send(value);
        sent = value;
      }
    } catch (err) {
      latest = sent = null;
      dragging = false;
      show(model);
      onError?.(err);
    } finally {
      busy = false;
      settle();
    }
  }

  const push = () => {
    latest = Number(input.value) / 100;
    pump();
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
    show(Number(input.value) / 100);
    push();
  });
  input.addEventListener('change', () => {
    push();
    release();
    settle();
  });

  el.setValue = (fraction) => {
    if (fraction !== model) sent = null;
    model = fraction;
    if (!held()) show(fraction);
  };
  el.setLabel = (name) => input.setAttribute('aria-label', name);
  return el;
}

function meter(label, readout) {
  const fill = h('span', { class: 'meter-fill' });
  const bar = h('div', { class: 'meter', role: 'meter', 'aria-label': label, 'aria-valuemin': '0', 'aria-valuemax': '100' }, fill);
  const el = h('div', { class: 'volume volume-readonly' }, icon('volume', 'icon volume-icon'), bar, readout);
  el.setValue = (fraction) => {
    const v = Math.round(fraction * 100);
    bar.setAttribute('aria-valuenow', String(v));
    bar.setAttribute('aria-valuetext', percent(fraction));
    fill.style.setProperty('--fill', `${v}%`);
    text(readout, percent(fraction));
  };
  el.setLabel = (name) => bar.setAttribute('aria-label', name);
  return el;
}
