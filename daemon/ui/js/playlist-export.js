// @ts-check
// A playlist as a file: download the M3U to this device, or save a copy in the appliance's export folder.

import { download, post } from './api.js';
import { field } from './dialogs.js';
import { attempt, h, iconButton, saveFile, toast } from './dom.js';
import { icon } from './icons.js';

/** "Sunday morning" → "sunday-morning": a file name every system accepts. */
export function slug(name) {
  return (
    name
      .normalize('NFKD')
      .replace(/[^\w\s-]/g, '')
      .trim()
      .toLowerCase()
      .replace(/[\s_]+/g, '-')
      .slice(0, 80) || 'playlist'
  );
}

/** `canSave`: the appliance copy is a change (Operator and Admin); downloading is reading, open to everyone. */
export function exportPanel(getPlaylist, canSave) {
  const get = iconButton({
    icon: icon('export'),
    visibleLabel: 'Download M3U',
    className: 'btn btn-secondary',
    action: 'download',
    onClick: () => fetchFile(getPlaylist(), get),
  });
  const path = field({
    name: 'filePath',
    label: 'File name',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const save = h('button', {
    class: 'btn btn-ghost',
    type: 'submit',
    'data-action': 'export',
    text: 'Save on appliance',
  });
  const form = h('form', { class: 'form-row save-remote', 'aria-label': 'Save a copy on the appliance' }, path, save);
  const panel = h(
    'section',
    { class: 'inline-form export', 'aria-label': 'Export' },
    h('h3', { class: 'subhead', text: 'Export' }),
    h(
      'div',
      { class: 'button-row' },
      get,
      h('span', { class: 'hint', text: 'Saves an extended M3U file on this device.' }),
    ),
    canSave
      ? h(
          'details',
          { class: 'save-remote-box' },
          h('summary', { text: 'Save a copy on the appliance' }),
          form,
          h('p', {
            class: 'hint form-hint',
            text: 'Written to the appliance’s export folder (.m3u8 or .m3u), where players on the appliance read it. Nothing is saved on this device.',
          }),
        )
      : null,
  );
  const input = form.querySelector('input');
  let forId = null;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const p = getPlaylist();
    const filePath = input.value.trim();
    if (!filePath) return toast('Enter a file name such as living-room.m3u8.', 'error');
    save.disabled = true;
    await attempt(
      () => post(`/api/playlists/${p.id}/export`, { filePath }),
      `Saved ${p.name} on the appliance as ${filePath}`,
    );
    save.disabled = false;
  });
  panel.update = (p) => {
    if (forId === p.id) return;
    forId = p.id;
    input.value = `${slug(p.name)}.m3u8`;
  };
  return panel;
}

async function fetchFile(p, button) {
  button.disabled = true;
  await attempt(async () => {
    const { blob, filename } = await download(`/api/playlists/${p.id}/m3u`, `${slug(p.name)}.m3u8`);
    saveFile(blob, filename);
  });
  button.disabled = false;
}
