// @ts-check
// Modal dialogs on the native <dialog> element: confirmations, small forms and showing an API key.
import { h, uid } from './dom.js';
import { icon } from './icons.js';

/**
 * Opens a modal. `onSubmit` runs on the primary button; if it throws, its message is shown inside the dialog
 * and the dialog stays open. Resolves with onSubmit's result, or null when cancelled. A `blocking` dialog
 * ignores Escape and stays until it is submitted, its cancel button's `onCancel` runs, or the app closes it
 * with `forceClose()` (signing out).
 * @param {DialogOptions} options
 */
export function openDialog({
  title,
  description,
  content = [],
  submitLabel = 'Save',
  cancelLabel = 'Cancel',
  danger = false,
  onSubmit,
  onCancel,
  wide = false,
  blocking = false,
}) {
  return new Promise((resolve) => {
    const titleId = uid('dlg-title');
    const descId = description ? uid('dlg-desc') : undefined;
    const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const submit = h('button', {
      class: `btn ${danger ? 'btn-danger' : 'btn-primary'}`,
      type: 'submit',
      text: submitLabel,
    });
    const cancel = cancelLabel
      ? h('button', {
          class: 'btn btn-ghost',
          type: 'button',
          text: cancelLabel,
          on: { click: () => (onCancel ? onCancel() : dialog.close()) },
        })
      : null;
    const form = h(
      'form',
      { class: 'dialog-form', method: 'dialog', novalidate: true },
      h('h2', { class: 'dialog-title', id: titleId, text: title }),
      description ? h('p', { class: 'dialog-desc', id: descId, text: description }) : null,
      content,
      error,
      h('div', { class: 'dialog-actions' }, cancel, submit),
    );
    const dialog = h(
      'dialog',
      { class: `dialog${wide ? ' dialog-wide' : ''}`, 'aria-labelledby': titleId, 'aria-describedby': descId },
      form,
    );
    let result = null;
    let forced = false;
    dialog.forceClose = () => {
      forced = true;
      dialog.close();
    };
    if (blocking) {
      // Escape's default action is what closes a modal; cancel alone can be skipped on a repeated Escape.
      dialog.addEventListener('keydown', (event) => event.key === 'Escape' && event.preventDefault());
      dialog.addEventListener('cancel', (event) => event.preventDefault());
    }
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const invalid = form.querySelector(':invalid');
      if (invalid) {
        invalid.focus();
        error.textContent = invalid.validationMessage || 'Please complete the form.';
        error.hidden = false;
        return;
      }
      submit.disabled = true;
      error.hidden = true;
      try {
        result = onSubmit ? ((await onSubmit(form)) ?? true) : true;
        dialog.close();
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
      } finally {
        submit.disabled = false;
      }
    });
    dialog.addEventListener('close', () => {
      // Some browsers close a modal on a repeated Escape even when cancel was prevented: open it again.
      if (blocking && result === null && !forced) return dialog.showModal();
      dialog.remove();
      resolve(result);
    });
    document.body.append(dialog);
    dialog.showModal();
    (form.querySelector('input:not([type=hidden]), select, textarea') ?? (danger ? cancel : submit))?.focus();
  });
}

export const confirmDialog = ({ title, message, confirmLabel = 'Confirm', danger = false, onConfirm }) =>
  openDialog({ title, description: message, submitLabel: confirmLabel, danger, onSubmit: onConfirm }).then(Boolean);

/** A labelled form field; `options` makes a <select>. @param {FieldOptions} options */
export function field({ name, label, type = 'text', value = '', required = false, options, hint, ...rest }) {
  const id = uid(`f-${name}`);
  const hintId = hint ? `${id}-hint` : undefined;
  const control = options
    ? h(
        'select',
        { id, name, required, 'aria-describedby': hintId },
        options.map((o) => h('option', { value: o.value, selected: o.value === value, text: o.label })),
      )
    : h('input', { id, name, type, value, required, 'aria-describedby': hintId, ...rest });
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id, text: label }),
    control,
    hint ? h('p', { class: 'hint', id: hintId, text: hint }) : null,
  );
}

/** The values of a form's ticked checkboxes (or radio button) named `name`. */
export const checkedValues = (form, name) =>
  [.../** @type {NodeListOf<HTMLInputElement>} */ (form.querySelectorAll(`input[name="${name}"]:checked`))].map(
    (el) => el.value,
  );

/** Copies text; falls back to a selection copy where the Clipboard API is missing (plain http on a LAN address). */
export async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!input) return false;
    input.select();
    return document.execCommand('copy');
  }
}

/** Shows a full API key with a copy button. */
export function keyDialog({ title, apiKey, note }) {
  const id = uid('key');
  const input = h('input', {
    id,
    class: 'key-input mono',
    readonly: true,
    value: apiKey,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const status = h('span', { class: 'copy-status', 'aria-live': 'polite' });
  const copy = h(
    'button',
    { class: 'btn btn-secondary', type: 'button', 'data-action': 'copy-key' },
    icon('copy'),
    h('span', { text: 'Copy' }),
  );
  copy.addEventListener('click', async () => {
    status.textContent = (await copyText(apiKey, input)) ? 'Copied to the clipboard' : 'Select the key and copy it';
  });
  const content = [
    h('div', { class: 'field' }, h('label', { for: id, text: 'API key' }), h('div', { class: 'key-row' }, input, copy)),
    status,
    note ? h('p', { class: 'hint', text: note }) : null,
  ];
  return openDialog({ title, content, submitLabel: 'Done', cancelLabel: null, wide: true });
}
