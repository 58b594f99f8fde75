// @ts-check
// The Inputs view: the appliance's physical inputs, with favorites; admins rename them and delete those of an amplifier
// that is gone.

import { del, put } from './api.js';
import { confirmDialog, field, openDialog } from './dialogs.js';
import { attempt, attr, h, iconButton, reconcile, showReason, text } from './dom.js';
import { icon } from './icons.js';
import { can, changed, sorted, state } from './store.js';

const KIND_ICONS = {
  optical: 'optical',
  turntable: 'disc',
  phono: 'disc',
  bluetooth: 'bluetooth',
  tv: 'tv',
  hdmi: 'tv',
};

export function inputsView(section) {
  const head = h(
    'div',
    { class: 'view-head' },
    h(
      'div',
      {},
      h('h1', { class: 'view-title', id: 'h-inputs', text: 'Inputs' }),
      h('p', { class: 'view-sub', text: 'Physical inputs of the appliance. Star the ones you use most.' }),
    ),
  );
  const grid = h('ul', { class: 'card-grid input-grid', 'aria-label': 'Input devices' });
  const empty = h('p', { class: 'muted empty-inline', text: 'This amplifier reports no inputs.', hidden: true });
  section.append(head, h('p', { class: 'loading', text: 'Loading inputs…' }), grid, empty);
  return {
    render() {
      section.querySelector('.loading').hidden = state.loaded.inputs;
      if (!state.loaded.inputs) return;
      const inputs = sorted.inputs();
      reconcile(grid, inputs, (i) => i.id, inputCard);
      empty.hidden = inputs.length > 0;
    },
  };
}

function inputCard(_input) {
  const glyph = h('span', { class: 'input-glyph' });
  const name = h('h2', { class: 'card-title' });
  const meta = h('p', { class: 'card-meta' });
  const fav = can.change()
    ? iconButton({
        icon: icon('star'),
        label: '',
        className: 'btn btn-icon btn-fav',
        action: 'favorite',
        onClick: () => toggle(state.inputs.get(card.input.id) ?? card.input),
      })
    : h('span', { class: 'fav-mark', title: 'Favorite' }, icon('star'));
  const reason = h('p', { class: 'unavailable-reason', hidden: true });
  const remove = can.admin()
    ? iconButton({
        icon: icon('trash'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'delete-input',
        onClick: () => deleteInput(card.input),
      })
    : null;
  const rename = can.admin()
    ? iconButton({
        icon: icon('pencil'),
        label: '',
        className: 'btn btn-icon btn-quiet',
        action: 'rename-input',
        onClick: () => renameInput(card.input),
      })
    : null;
  const card = h(
    'li',
    { class: 'card input-card' },
    glyph,
    h('div', { class: 'card-head-text' }, name, meta),
    fav,
    rename,
    remove,
    reason,
  );
  let kind = '';
  card.update = (i) => {
    card.input = i;
    if (kind !== i.kind) {
      kind = i.kind;
      glyph.replaceChildren(icon(KIND_ICONS[i.kind.toLowerCase()] ?? 'input'));
    }
    text(name, i.name);
    text(meta, `Input ${i.input.channel} · ${i.kind}`);
    card.classList.toggle('is-favorite', i.isFavorite);
    card.classList.toggle('is-unavailable', !i.available);
    showReason(reason, i);
    if (rename) {
      attr(rename, 'aria-label', `Rename input ${i.name}`);
      attr(rename, 'title', `Rename input ${i.name}`);
    }
    if (remove) {
      // Inputs are the amplifier's own; only one whose amplifier is gone is worth deleting.
      remove.hidden = i.available;
      attr(remove, 'aria-label', `Delete input ${i.name}`);
      attr(remove, 'title', `Delete input ${i.name}`);
    }
    if (can.change()) {
      attr(fav, 'aria-pressed', String(i.isFavorite));
      attr(fav, 'aria-label', `Favorite ${i.name}`);
      attr(fav, 'title', i.isFavorite ? `Remove ${i.name} from favorites` : `Mark ${i.name} as favorite`);
    } else {
      fav.hidden = !i.isFavorite;
    }
  };
  return card;
}

/** Admins name an input after what is wired to it (PUT /api/input-devices/{id}); the event refreshes every page. */
function renameInput(input) {
  return openDialog({
    title: `Rename ${input.name}`,
    content: [
      field({
        name: 'name',
        label: 'Name of the input',
        value: input.name,
        required: true,
        maxlength: '100',
        autocomplete: 'off',
      }),
      field({
        name: 'kind',
        label: 'Kind of source',
        value: input.kind,
        required: true,
        maxlength: '40',
        autocomplete: 'off',
        hint: 'For example optical, turntable, bluetooth, tv or line-in: it picks the icon.',
      }),
    ],
    submitLabel: 'Rename',
    onSubmit: (form) =>
      put(`/api/input-devices/${input.id}`, {
        name: form.elements.name.value.trim(),
        kind: form.elements.kind.value.trim(),
      }),
  });
}

async function deleteInput(input) {
  await confirmDialog({
    title: `Delete ${input.name}?`,
    message: `The input cannot be used (${input.unavailableReason}). Delete it if that amplifier is gone for good: it is not recreated at the next start.`,
    confirmLabel: 'Delete input',
    danger: true,
    onConfirm: () => del(`/api/input-devices/${input.id}`),
  });
}

async function toggle(input) {
  const next = !input.isFavorite;
  input.isFavorite = next;
  changed('inputs');
  if (!(await attempt(() => put(`/api/input-devices/${input.id}/favorite`, { isFavorite: next })))) {
    input.isFavorite = !next;
    changed('inputs');
  }
}
