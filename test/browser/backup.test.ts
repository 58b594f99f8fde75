// Backup download and restore from the dashboard's Settings tab, in a real browser against a real daemon.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { seededDaemon } from './seed.js';
import { signIn, unlabelled } from './session.js';

// A page global used inside evaluate(): the project compiles without the DOM lib.
declare const sessionStorage: { getItem(key: string): string | null };

t.test('backups in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);
  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  const page = admin.page;
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  let plainFile = '';
  let sealedFile = '';

  t.test('an admin downloads a backup without secrets', async (t) => {
    const saved = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download backup' }).click();
    const download = await saved;
    t.match(download.suggestedFilename(), /^azcd-backup-.*\.json$/);
    plainFile = (await download.path())!;
    const doc = JSON.parse(readFileSync(plainFile, 'utf8'));
    t.equal(doc.format, 'azcd-backup');
    t.equal(doc.secrets, undefined, 'no secrets without a passphrase');
    t.ok(
      doc.zones.some((z: { name: string }) => z.name === 'Kitchen'),
      'the zones are in it',
    );
    await screenshot(page, 'settings-desktop');
    t.same(await unlabelled(page), [], 'every control on the Settings tab has an accessible name');
    t.same(admin.console.errors, []);
  });

  t.test('a sealed backup needs the passphrase typed twice the same', async (t) => {
    await page.getByRole('button', { name: 'Download with passwords…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Download with passwords' });
    await dialog.getByLabel('Passphrase', { exact: true }).fill('correct horse battery');
    await dialog.getByLabel('Repeat the passphrase').fill('correct horse battle');
    await dialog.getByRole('button', { name: 'Download' }).click();
    await dialog.getByRole('alert').getByText('The two passphrases differ.').waitFor();
    await dialog.getByLabel('Repeat the passphrase').fill('correct horse battery');
    const saved = page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Download' }).click();
    sealedFile = (await (await saved).path())!;
    await dialog.waitFor({ state: 'detached' });
    const doc = JSON.parse(readFileSync(sealedFile, 'utf8'));
    t.equal(doc.format, 'azcd-backup');
    t.ok(doc.secrets, 'the secrets are in it, sealed');
    t.notMatch(JSON.stringify(doc), /correct horse/, 'the passphrase itself is not');
    t.same(admin.console.errors, []);
  });

  t.test('a file that is not a backup is refused before anything is sent', async (t) => {
    const requests: string[] = [];
    const watch = (r: { url(): string }) => requests.push(r.url());
    page.on('request', watch);
    await page
      .getByLabel('Backup file')
      .setInputFiles({ name: 'notes.json', mimeType: 'application/json', buffer: Buffer.from('{"hello": 1}') });
    await page.getByRole('button', { name: 'Restore…' }).click();
    await page
      .getByRole('alert')
      .getByText('notes.json is not an azcd backup. Choose a file downloaded from this page.')
      .waitFor();
    page.off('request', watch);
    t.same(
      requests.filter((url) => url.includes('/api/restore')),
      [],
      'no restore request',
    );
  });

  t.test('a sealed backup with the wrong passphrase is refused and the admin stays signed in', async (t) => {
    admin.console.allow(/status of 400/);
    await page.getByLabel('Backup file').setInputFiles(sealedFile);
    await page.getByLabel('Passphrase (only for a backup with passwords)').fill('wrong passphrase');
    await page.getByRole('button', { name: 'Restore…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the configuration?' });
    await confirm.getByRole('button', { name: 'Replace and restore' }).click();
    await confirm.getByRole('alert').waitFor();
    t.match(await confirm.getByRole('alert').textContent(), /passphrase/i, 'the problem names the passphrase');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    t.equal(await page.locator('#app').isVisible(), true, 'still signed in');
    t.same(admin.console.errors, []);
  });

  t.test('an admin restores a backup after a change and lands on the sign-in screen', async (t) => {
    await api.put(`/api/zones/${s.zones.Kitchen}`, { name: 'Scullery' });
    await page.getByLabel('Passphrase (only for a backup with passwords)').fill('');
    await page.getByLabel('Backup file').setInputFiles(plainFile);
    await page.getByRole('button', { name: 'Restore…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the configuration?' });
    const words = await confirm.locator('.dialog-desc').textContent();
    t.match(
      words,
      /4 users, 3 players, 6 zones, 6 input devices, 3 playlists, 0 scenes/,
      'the confirmation names what is replaced',
    );
    t.match(words, /Everyone is signed out/);
    await confirm.getByRole('button', { name: 'Replace and restore' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const said = await page.locator('#signin-error').textContent();
    t.match(said, /^The backup was restored.*The backup's accounts replaced the ones on this appliance/);
    t.match(said, /Sign in again as "admin": your password is unchanged/, 'it says which password signs in now');
    t.equal(await page.evaluate(() => sessionStorage.getItem('azc.session')), null, 'the old session is forgotten');
    t.equal(
      (await api.get(`/api/zones/${s.zones.Kitchen}`)).body.name,
      'Kitchen',
      'the zone has its name from the backup again',
    );
    await screenshot(page, 'restored-signin-desktop');

    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(d.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Players' }).click();
    await t.resolves(
      page.getByRole('slider', { name: 'Kitchen volume' }).waitFor(),
      'the admin signs in again with the same password',
    );
    t.same(admin.console.errors, []);
  });
});
