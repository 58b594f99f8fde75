// @ts-check
// Sends a control's latest value, one request in flight: the volume sliders and the Sound panel's steps share it, so
// a drag or a held arrow key is a handful of requests, not one per step, and the value the hand lets go of wins.

/** Smallest gap between the starts of two requests of one control (a throttle on top of "one in flight"). */
export const MIN_GAP_MS = 80;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @template T
 * @param {object} o
 * @param {(value: T) => Promise<unknown>} o.send
 * @param {(error: Error) => void} o.onError      the request failed; nothing more is sent until the next push
 * @param {() => void} o.onIdle                    nothing is left to send
 * @param {() => boolean} o.handHeld               the user holds the control (pointer down on it)
 * @param {(reported: T, sent: T) => boolean} [o.isEcho]   a report that is what a sent value became at the amplifier
 * @param {Element} [o.marks]                      carries aria-busy while a value is on its way
 */
export function latestSender({ send, onError, onIdle, handHeld, isEcho = (a, b) => a === b, marks }) {
  /** @type {T | null} */
  let latest = null;
  /** @type {T | null} */
  let sent = null;
  let busy = false;
  let lastStart = Number.NEGATIVE_INFINITY;
  /** Values sent since the sender last went busy: their echoes are no news. */
  /** @type {T[]} */
  const mine = [];
  /** A report that is not an echo of ours arrived while the value was in flight: the amplifier may not have it. */
  let stale = false;
  /** ... and the hand held the control then: the value goes again. */
  let overtaken = false;

  const setBusy = (on) => {
    busy = on;
    if (on) marks?.setAttribute('aria-busy', 'true');
    else marks?.removeAttribute('aria-busy');
  };

  return {
    get busy() {
      return busy;
    },
    /** A new gesture starts: whatever it pushes goes, even a value sent before. */
    forget() {
      sent = null;
    },
    /**
     * The amplifier reports another value: what was sent is no longer what it has, so the next push sends again. A
     * report that is not an echo of ours, seen while the hand holds the control and a value is in flight, overtakes
     * that value: it goes again when answered, because the hand let go after seeing the report. A report seen after
     * the hand let go is later than it and stays, until the next push.
     * @param {T} reported
     */
    reported(reported) {
      sent = null;
      if (!busy || mine.some((value) => isEcho(reported, value))) return;
      stale = true;
      if (handHeld()) overtaken = true;
    },
    /** @param {T} value */
    async push(value) {
      latest = value;
      if (busy) return;
      setBusy(true);
      try {
        while (latest !== null && latest !== sent) {
          const wait = lastStart + MIN_GAP_MS - performance.now();
          if (wait > 0) await sleep(wait);
          // Read the value only now: whatever arrived during the wait collapses into this one request.
          const next = latest;
          if (next === sent) break;
          lastStart = performance.now();
          mine.push(next);
          stale = overtaken = false;
          await send(next);
          if (overtaken) continue;
          if (!stale) sent = next;
          else if (latest === next) break;
        }
      } catch (err) {
        latest = sent = null;
        onError(err);
      } finally {
        setBusy(false);
        mine.length = 0;
        onIdle();
      }
    },
  };
}

/** After the hand lets go, echoes of its own intermediate values may still arrive: wait this long before showing. */
const SETTLE_MS = 400;

/**
 * A range input whose values go out through a latestSender, held while the hand is on it, while a value is on its way
 * and for SETTLE_MS after: what the amplifier reports moves it only once it is let go of (`showModel`). Letting go
 * sends the value under the hand. The caller shows each value as it is dragged and calls `push()` from its own
 * `input` handler; `reported(value)` when the amplifier reports one.
 * @template T
 * @param {object} o
 * @param {HTMLInputElement} o.input
 * @param {() => T} o.read                     the input's value, as sent
 * @param {(value: T) => Promise<unknown>} o.send
 * @param {(error: Error) => void} o.onError
 * @param {() => void} o.showModel             shows what the amplifier reports now
 * @param {(reported: T, sent: T) => boolean} [o.isEcho]
 */
export function heldSlider({ input, read, send, onError, showModel, isEcho }) {
  let dragging = false;
  let settleTimer = 0;
  const sender = latestSender({
    send,
    onError: (err) => {
      dragging = false;
      showModel();
      onError(err);
    },
    onIdle: () => settle(),
    handHeld: () => dragging,
    isEcho,
    marks: input,
  });
  const held = () => dragging || sender.busy || settleTimer !== 0;
  const settle = () => {
    if (dragging || sender.busy) return;
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      settleTimer = 0;
      if (!held()) showModel();
    }, SETTLE_MS);
  };
  const push = () => void sender.push(read());
  const release = () => {
    if (!dragging) return;
    dragging = false;
    push();
    settle();
  };
  input.addEventListener('pointerdown', () => {
    dragging = true;
    sender.forget();
    clearTimeout(settleTimer);
    settleTimer = 0;
    window.addEventListener('pointerup', release, { once: true });
    window.addEventListener('pointercancel', release, { once: true });
  });
  // The value let go of is sent again if the amplifier reported another one meanwhile: the hand that let go wins.
  input.addEventListener('change', () => {
    push();
    release();
    settle();
  });
  return {
    held,
    push,
    /** @param {T} value */
    reported: (value) => sender.reported(value),
  };
}
