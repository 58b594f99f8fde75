// The Inputs view: the appliance's physical inputs, with favorites.
import { h, attr, text, reconcile, attempt, iconButton } from './dom.js';
import { icon } from './icons.js';
import { put } from './api.js';
import { state, can, sorted, changed } from './store.js';

const KIND_ICONS = { optical: 'optical', turntable: 'disc', phono: 'disc', bluetooth: 'bluetooth', tv: 'tv', hdmi: 'tv' };

export function inputsView(section) {
  const head = h(
    'div',
    { class: 'view-head' },
    h('div', {}, h('h1', { class: 'view-title', id: 'h-inputs', text: 'Inputs' }), h('p', { class: 'view-sub', text: 'Physical inputs of the appliance. Star the ones you use most.' })),
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

function inputCard(input) {
  const glyph = h('span', { class: 'input-glyph' });
  const name = h('h2', { class: 'card-title' });
  const meta = h('p', { class: 'card-meta' });
  const fav = can.change()
    ? iconButton({ icon: icon('star'), label: '', className: 'btn btn-icon btn-fav', action: 'favorite', onClick: () => toggle(state.inputs.get(card.input.id) ?? card.input) })
    : h('span', { class: 'fav-mark', title: 'Favorite' }, icon('star'));
  const card = h('li', { class: 'card input-card' }, glyph, h('div', { class: 'card-head-text' }, name, meta), fav);
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

async function toggle(input) {
  const next = !input.isFavorite;
  input.isFavorite = next;
  changed('inputs');
  if (!(await attempt(() => put(`/api/input-devices/${input.id}/favorite`, { isFavorite: next })))) {
    input.isFavorite = !next;
    changed('inputs');
  }
}
