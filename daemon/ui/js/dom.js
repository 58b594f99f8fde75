// @ts-check
// Tiny DOM helpers: element creation, keyed list reconciliation, the toast/announce regions and saving a file.

/**
 * Creates an element. `attrs` keys: `class`, `text`, `dataset` (object), `on` (event map), `aria*`/other
 * attributes (false/null/undefined skip the attribute, true sets it empty). Never sets `style` (the CSP forbids it).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'on') for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
    else if (key in el && typeof value !== 'string') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Sets an attribute, or removes it for null/undefined/false. */
export function attr(el, name, value) {
  if (value === null || value === undefined || value === false) el.removeAttribute(name);
  else el.setAttribute(name, value === true ? '' : String(value));
}

/** Sets text only when it changed (keeps screen readers and selection quiet). */
export function text(el, value) {
  const s = String(value);
  if (el.textContent !== s) el.textContent = s;
}

/**
 * Makes `parent`'s keyed children match `items` in order, reusing nodes by key so focus, a slider being
 * dragged and open pickers survive re-renders. `create(item)` returns a node with an `update(item)` method.
 */
export function reconcile(parent, items, keyOf, create) {
  const existing = new Map();
  for (const child of parent.children) if (child.dataset.key) existing.set(child.dataset.key, child);
  let previous = null;
  for (const item of items) {
    const key = keyOf(item);
    let node = existing.get(key);
    if (node) existing.delete(key);
    else {
      node = create(item);
      node.dataset.key = key;
    }
    node.update?.(item);
    const wanted = previous ? previous.nextElementSibling : parent.firstElementChild;
    if (node !== wanted) parent.insertBefore(node, wanted);
    previous = node;
  }
  for (const node of existing.values()) node.remove();
}

/** At most this many messages show at once; a new one pushes the oldest out. */
const MAX_TOASTS = 3;

/**
 * How long a message stays, in ms; errors stay longer. `?toastMs=<n>` in the page address sets it (the browser
 * tests use it, so they neither wait seconds nor race a timer); hovering or focusing a message holds it.
 */
const TOAST_MS = (() => {
  const wanted = Number(new URLSearchParams(location.search).get('toastMs'));
  return Number.isFinite(wanted) && wanted > 0 ? wanted : 6000;
})();
const ERROR_FACTOR = 1.5;

/** The messages shown, oldest first. */
const toasts = () => /** @type {Toast[]} */ ([...document.getElementById('toasts').children]);

/** Removes the newest message on Escape unless a dialog has it (a modal's Escape closes the modal). */
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]')) return;
  toasts().at(-1)?.dismiss();
});

/**
 * Shows a short message in the role="status" region. It leaves by itself, by its close button or by Escape;
 * the same message again counts up on the one already shown instead of stacking a copy.
 */
export function toast(message, kind = 'info') {
  const region = document.getElementById('toasts');
  const same = toasts().find((el) => el.dataset.kind === kind && el.message === message);
  if (same) {
    same.repeat();
    region.append(same);
    return same;
  }
  const count = h('span', { class: 'toast-count', hidden: true });
  const close = h('button', {
    class: 'toast-close',
    type: 'button',
    'aria-label': 'Dismiss message',
    title: 'Dismiss (Esc)',
    text: '×',
  });
  const el = h(
    'div',
    { class: `toast toast-${kind}`, dataset: { kind } },
    h('span', { class: 'toast-text', text: message }),
    count,
    close,
  );
  el.message = message;
  let timer = 0;
  let times = 1;
  const ms = kind === 'error' ? TOAST_MS * ERROR_FACTOR : TOAST_MS;
  const hold = () => clearTimeout(timer);
  const wait = () => {
    hold();
    timer = setTimeout(el.dismiss, ms);
  };
  el.dismiss = () => {
    hold();
    // Keep focus in the page when the message that had it goes away.
    if (el.contains(document.activeElement)) document.getElementById('main')?.focus({ preventScroll: true });
    el.remove();
  };
  el.repeat = () => {
    count.hidden = false;
    count.textContent = `×${++times}`;
    if (!el.matches(':hover, :focus-within')) wait();
  };
  close.addEventListener('click', el.dismiss);
  el.addEventListener('mouseenter', hold);
  el.addEventListener('focusin', hold);
  el.addEventListener('mouseleave', () => !el.contains(document.activeElement) && wait());
  el.addEventListener('focusout', (event) => !el.contains(event.relatedTarget) && !el.matches(':hover') && wait());
  region.append(el);
  for (const old of toasts().slice(0, -MAX_TOASTS)) old.dismiss();
  wait();
  return el;
}

/** Tells screen-reader users about a change that has no visible message (e.g. a track moved). */
export function announce(message) {
  const el = document.getElementById('announcer');
  el.textContent = '';
  requestAnimationFrame(() => (el.textContent = message));
}

export const percent = (fraction) => `${Math.round(fraction * 100)}%`;

/** "1 player", "3 players", "0 players": a count with its noun, singular only for one. */
export const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** 215000 → "3:35" */
export function duration(ms) {
  if (ms === null || ms === undefined) return '';
  const s = Math.round(ms / 1000);
  const hours = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, '0');
  return hours ? `${hours}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

let idSeq = 0;
export const uid = (prefix) => `${prefix}-${++idSeq}`;

/** Runs an action; an error becomes a toast (the problem detail in words). Resolves true on success. */
export async function attempt(action, successMessage) {
  try {
    await action();
    if (successMessage) toast(successMessage, 'success');
    return true;
  } catch (err) {
    if (err?.name !== 'AbortError' && err?.status !== 401) toast(err?.message ?? String(err), 'error');
    return false;
  }
}

/** Why a zone, player or input cannot be used now, under its name (hidden while it can). */
export function showReason(el, thing) {
  el.hidden = thing.available;
  text(el, thing.available ? '' : `Unavailable: ${thing.unavailableReason}`);
}

/** A button with an icon and a visible or screen-reader-only label. @param {IconButtonOptions} options */
export function iconButton({
  icon: iconNode,
  label,
  visibleLabel,
  className = 'btn btn-icon',
  action,
  pressed,
  onClick,
  type = 'button',
}) {
  return h(
    'button',
    {
      type,
      class: className,
      'aria-label': visibleLabel ? undefined : label,
      title: visibleLabel ? undefined : label,
      'data-action': action,
      'aria-pressed': pressed,
      on: onClick ? { click: onClick } : undefined,
    },
    iconNode,
    visibleLabel ? h('span', { text: visibleLabel }) : null,
  );
}

const OBJECT_URL_LIFETIME_MS = 60_000;

/** Hands a Blob to the browser as a download named `filename` (an <a download> on an object URL). */
export function saveFile(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking at once can cancel a download that has not read the Blob yet; a minute is plenty.
  setTimeout(() => URL.revokeObjectURL(url), OBJECT_URL_LIFETIME_MS);
}
