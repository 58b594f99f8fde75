// @ts-check
// The Settings tab (Admins only): download a backup of the whole configuration, restore one from a file, and the
// Home Assistant bridge (bridge-settings.js).

import { download, post, session } from './api.js';
import { bridgeCard } from './bridge-settings.js';
import { confirmDialog, field, openDialog } from './dialogs.js';
import { attempt, count, h, saveFile, uid } from './dom.js';
import { icon } from './icons.js';

const PASSPHRASE = { min: '8', max: '1024' };
/** What a backup holds, as the confirmation names it: document key → the word for one of them. */
const PARTS = [
  ['users', 'user'],
  ['players', 'player'],
  ['zones', 'zone'],
  ['inputDevices', 'input device'],
  ['playlists', 'playlist'],
  ['scenes', 'scene'],
];

const today = () => new Date().toISOString().slice(0, 10);

/** @param {{ renew(work: () => Promise<any>): Promise<any>, endSession(message: string, kind?: string): void }} app */
export function settingsView(section, app) {
  const plain = h(
    'button',
    {
      type: 'button',
      class: 'btn btn-primary',
      'data-action': 'download-backup',
      on: { click: () => downloadBackup() },
    },
    icon('export'),
    h('span', { text: 'Download backup' }),
  );
  const sealed = h(
    'button',
    { type: 'button', class: 'btn btn-secondary', 'data-action': 'download-sealed', on: { click: downloadSealed } },
    icon('lock'),
    h('span', { text: 'Download with passwords…' }),
  );
  const fileId = uid('restore-file');
  const file = h('input', { id: fileId, type: 'file', name: 'file', accept: '.json,application/json', required: true });
  const passphrase = field({
    name: 'passphrase',
    label: 'Passphrase (only for a backup with passwords)',
    type: 'password',
    autocomplete: 'off',
    minlength: PASSPHRASE.min,
    maxlength: PASSPHRASE.max,
  });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const restore = h(
    'button',
    { type: 'submit', class: 'btn btn-danger', 'data-action': 'restore' },
    icon('refresh'),
    h('span', { text: 'Restore…' }),
  );
  const form = h(
    'form',
    { class: 'restore-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: fileId, text: 'Backup file' }), file),
    passphrase,
    error,
    h('div', { class: 'button-row' }, restore),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.hidden = true;
    restore.disabled = true;
    try {
      await restoreFrom(file.files[0], form.elements.passphrase.value, app);
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
    } finally {
      restore.disabled = false;
    }
  });
  const bridge = bridgeCard();
  section.append(
    h(
      'div',
      { class: 'view-head' },
      h(
        'div',
        {},
        h('h1', { class: 'view-title', id: 'h-settings', text: 'Settings' }),
        h('p', {
          class: 'view-sub',
          text: 'Backups of the whole configuration of this appliance, and its Home Assistant bridge.',
        }),
      ),
    ),
    h(
      'div',
      { class: 'card-grid settings-grid' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'h-backup' },
        h('h2', { class: 'card-title', id: 'h-backup', text: 'Download a backup' }),
        h('p', {
          class: 'card-text',
          text: 'One file with users, roles and access, players, zones with their names and limits, input devices, playlists, scenes and settings.',
        }),
        h('p', {
          class: 'hint',
          text: 'Passwords and API keys are left out unless you seal them under a passphrase; without them, restored users need new passwords.',
        }),
        h('div', { class: 'button-row' }, plain, sealed),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'h-restore' },
        h('h2', { class: 'card-title', id: 'h-restore', text: 'Restore a backup' }),
        h('p', {
          class: 'card-text',
          text: 'Replaces the whole configuration with the one in the file and signs everyone out. A copy of the current configuration is kept on the appliance first.',
        }),
        form,
      ),
      bridge,
    ),
  );
  return { render: () => bridge.render() };
}

function downloadBackup() {
  return attempt(async () => {
    const { blob, filename } = await download('/api/backup', `azcd-backup-plain-${today()}.json`);
    saveFile(blob, filename);
  }, 'Backup downloaded.');
}

function downloadSealed() {
  const input = (name, label, hint) =>
    field({
      name,
      label,
      type: 'password',
      required: true,
      minlength: PASSPHRASE.min,
      maxlength: PASSPHRASE.max,
      autocomplete: 'new-password',
      hint,
    });
  return openDialog({
    title: 'Download with passwords',
    description:
      'Passwords and API keys are sealed under this passphrase. Keep it apart from the file: the backup cannot restore them without it.',
    content: [input('passphrase', 'Passphrase', 'At least 8 characters.'), input('confirm', 'Repeat the passphrase')],
    submitLabel: 'Download',
    onSubmit: async (form) => {
      const { passphrase, confirm } = form.elements;
      if (passphrase.value !== confirm.value) throw new Error('The two passphrases differ.');
      const { blob, filename } = await download('/api/backup', `azcd-backup-sealed-${today()}.json`, {
        passphrase: passphrase.value,
      });
      saveFile(blob, filename);
    },
  });
}

/** Reads the file, asks for confirmation naming what it replaces, restores, then ends this session. */
async function restoreFrom(file, passphrase, app) {
  if (!file) throw new Error('Choose a backup file first.');
  let backup;
  try {
    backup = JSON.parse(await file.text());
  } catch {
    throw new Error(
      `${file.name} is not a backup: it is not a JSON document. Choose a file downloaded from this page.`,
    );
  }
  if (backup?.format !== 'azcd-backup')
    throw new Error(`${file.name} is not an azcd backup. Choose a file downloaded from this page.`);
  const counts = PARTS.filter(([key]) => Array.isArray(backup[key])).map(([key, one]) =>
    count(backup[key].length, one),
  );
  const sealedNote =
    backup.secrets && !passphrase
      ? ' The file has sealed passwords and API keys, but no passphrase was given: they are not restored.'
      : '';
  /** @type {any} the restore's answer */
  let result = null;
  const confirmed = await confirmDialog({
    title: 'Replace the configuration?',
    message:
      `Everything here is replaced by the backup${backup.createdAt ? ` of ${new Date(backup.createdAt).toLocaleString()}` : ''}: ` +
      `${counts.join(', ')} and the settings. Everyone is signed out, you too.${sealedNote}`,
    confirmLabel: 'Replace and restore',
    danger: true,
    onConfirm: () =>
      // The restore ends every session: pause the stream and treat the coming 401s as expected.
      app.renew(async () => {
        result = await post('/api/restore', passphrase ? { backup, passphrase } : { backup });
        session.clear();
      }),
  });
  // The accounts are the backup's now: say which password signs in (the one just used may not).
  if (confirmed)
    app.endSession(
      `The backup was restored${summary(result)}. ${result?.accounts?.message ?? 'Sign in again.'}`,
      'info',
    );
}

/** " (3 users, 6 zones, …)" from whatever counts the restore answered, or ''. */
function summary(result) {
  const source = result?.restored ?? result?.counts ?? result ?? {};
  const words = { ...Object.fromEntries(PARTS), tracks: 'track' };
  const parts = Object.entries(source)
    .filter(([, n]) => Number.isInteger(n))
    .map(([key, n]) => (words[key] ? count(n, words[key]) : `${n} ${key}`));
  return parts.length ? ` (${parts.join(', ')})` : '';
}
