// @ts-check
// The Scenes strip of the Players view: apply a saved setup, undo the last apply; admins save, rename and delete.

import { del, post, put } from './api.js';
import { checkedValues, confirmDialog, field, openDialog } from './dialogs.js';
import { attempt, h, reconcile, text, toast, uid } from './dom.js';
import { icon } from './icons.js';
import { can, changed, sorted, state } from './store.js';
import { skippedText } from './zone-settings.js';

export function scenesSection() {
  const undo = can.change()
    ? h(
        'button',
        {
          type: 'button',
          class: 'btn btn-secondary btn-small',
          'data-action': 'undo-scene',
          hidden: true,
          on: { click: () => undoScene(undo) },
        },
        icon('refresh'),
        h('span', { text: 'Undo last scene' }),
      )
    : null;
  const save = can.admin()
    ? h(
        'button',
        { type: 'button', class: 'btn btn-secondary btn-small', 'data-action': 'new-scene', on: { click: saveScene } },
        icon('plus'),
        h('span', { text: 'Save scene' }),
      )
    : null;
  const list = h('ul', { class: 'scene-list', 'aria-labelledby': 'h-scenes' });
  const empty = h('p', { class: 'muted small', hidden: true });
  const el = h(
    'section',
    { class: 'scenes' },
    h(
      'div',
      { class: 'scenes-head' },
      h('h2', { class: 'section-title', id: 'h-scenes', text: 'Scenes' }),
      h('div', { class: 'button-row' }, undo, save),
    ),
    list,
    empty,
  );
  el.update = () => {
    const scenes = sorted.scenes();
    reconcile(list, scenes, (s) => s.id, sceneItem);
    empty.hidden = scenes.length > 0;
    text(
      empty,
      can.admin()
        ? 'No scenes yet. Set the zones up as you like them, then save the setup as a scene.'
        : 'No scenes for your zones yet.',
    );
    if (undo) undo.hidden = !state.undoReady;
  };
  return el;
}

function sceneItem(_scene) {
  const name = h('span', { class: 'scene-name' });
  const meta = h('span', { class: 'scene-meta' });
  const apply = can.change()
    ? h('button', {
        type: 'button',
        class: 'btn btn-primary btn-small',
        'data-action': 'apply-scene',
        on: { click: () => applyScene(item.scene, apply) },
      })
    : null;
  const rename = can.admin()
    ? h(
        'button',
        {
          type: 'button',
          class: 'btn btn-icon btn-quiet',
          'data-action': 'rename-scene',
          on: { click: () => renameScene(item.scene) },
        },
        icon('pencil'),
      )
    : null;
  const remove = can.admin()
    ? h(
        'button',
        {
          type: 'button',
          class: 'btn btn-icon btn-quiet',
          'data-action': 'delete-scene',
          on: { click: () => deleteScene(item.scene) },
        },
        icon('trash'),
      )
    : null;
  const item = h('li', { class: 'scene' }, h('div', { class: 'scene-text' }, name, meta), apply, rename, remove);
  item.update = (s) => {
    item.scene = s;
    text(name, s.name);
    text(meta, zoneSummary(s));
    if (apply) {
      text(apply, 'Apply');
      apply.setAttribute('aria-label', `Apply scene ${s.name}`);
    }
    for (const [button, verb] of [
      [rename, 'Rename'],
      [remove, 'Delete'],
    ]) {
      button?.setAttribute('aria-label', `${verb} scene ${s.name}`);
      if (button) button.title = `${verb} scene ${s.name}`;
    }
  };
  return item;
}

/** "Kitchen 30%, Patio off (unavailable)": what applying the scene does, in one line. */
function zoneSummary(scene) {
  return scene.zones
    .map((z) => {
      const zone = state.zones.get(z.zoneId);
      const setting = z.power ? `${Math.round(z.volume * 100)}%${z.muted ? ' muted' : ''}` : 'off';
      return `${zone?.name ?? 'a zone'} ${setting}${zone && !zone.available ? ' (unavailable)' : ''}`;
    })
    .join(', ');
}

async function applyScene(scene, button) {
  button.disabled = true;
  /** @type {any} */
  let result;
  if (
    await attempt(async () => (result = await post(`/api/scenes/${scene.id}/apply`)), `Scene ${scene.name} applied.`)
  ) {
    if (result.skipped?.length) toast(skippedText(result.skipped), 'error');
    state.undoReady = true;
    changed('scenes');
  }
  button.disabled = false;
}

async function undoScene(button) {
  button.disabled = true;
  /** @type {any} */
  let result;
  if (
    await attempt(
      async () => (result = await post('/api/scenes/undo')),
      'The zones are back as they were before the last scene.',
    )
  ) {
    if (result.skipped?.length) toast(skippedText(result.skipped), 'error');
  }
  button.disabled = false;
}

/** Zone checkboxes, every zone ticked: a scene captures the chosen zones as they are now (those that can answer). */
function zonePicker() {
  return h(
    'fieldset',
    { class: 'check-group' },
    h('legend', { text: 'Zones it captures' }),
    sorted
      .zones()
      .filter((z) => z.available)
      .map((z) => {
        const id = uid('scene-zone');
        return h(
          'div',
          { class: 'check' },
          h('input', { id, type: 'checkbox', name: 'zoneIds', value: z.id, checked: true }),
          h('label', { for: id, text: z.name }),
        );
      }),
  );
}

function saveScene() {
  return openDialog({
    title: 'Save scene',
    description: 'The power, volume, mute and player of each chosen zone, as they are now.',
    content: [
      field({ name: 'name', label: 'Scene name', required: true, maxlength: '64', autocomplete: 'off' }),
      zonePicker(),
    ],
    submitLabel: 'Save scene',
    wide: true,
    onSubmit: async (form) => {
      const zoneIds = checkedValues(form, 'zoneIds');
      if (!zoneIds.length) throw new Error('Choose at least one zone.');
      const scene = await post('/api/scenes', { name: form.elements.name.value.trim(), zoneIds });
      state.scenes.set(scene.id, scene);
      changed('scenes');
      toast(`Scene ${scene.name} saved.`, 'success');
    },
  });
}

function renameScene(scene) {
  return openDialog({
    title: `Rename ${scene.name}`,
    content: [
      field({
        name: 'name',
        label: 'New name of the scene',
        value: scene.name,
        required: true,
        maxlength: '64',
        autocomplete: 'off',
      }),
    ],
    submitLabel: 'Rename',
    onSubmit: async (form) => {
      const updated = await put(`/api/scenes/${scene.id}`, { name: form.elements.name.value.trim() });
      state.scenes.set(updated.id, updated);
      changed('scenes');
    },
  });
}

function deleteScene(scene) {
  return confirmDialog({
    title: `Delete ${scene.name}?`,
    message: 'The scene is removed for everyone. The zones keep their current state.',
    confirmLabel: 'Delete scene',
    danger: true,
    onConfirm: async () => {
      await del(`/api/scenes/${scene.id}`);
      state.scenes.delete(scene.id);
      changed('scenes');
    },
  });
}
