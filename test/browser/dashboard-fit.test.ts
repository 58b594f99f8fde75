// The dashboard's rough edges real users hit, in Debian chromium against a real daemon: who is signed in at
// 1280 px, a phone's header and messages, an operator's group volume, and counts in words.

import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { seededDaemon } from './seed.js';
import { PHONE, signIn, unlabelled } from './session.js';

// A page global used inside evaluate() callbacks: the project compiles without the DOM lib.
declare const document: any;

/** Whether an element shows all of its text: nothing cut off or ellipsised, and not squeezed to nothing. */
const whole = (page: Page, selector: string) =>
  page
    .locator(selector)
    .evaluate(
      (el: any) => el.clientWidth > 0 && el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight,
    );

t.test('the dashboard fits the screens people use', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);

  t.test('the signed-in username stays readable on a 1280 px desktop, whatever the role', async (t) => {
    for (const [username, password] of [
      ['admin', d.adminPassword],
      [s.users.operator.username, s.users.operator.password],
    ] as const) {
      const session = await signIn(browser, d.base, username, password, { viewport: { width: 1280, height: 800 } });
      const page = session.page;
      t.equal(await page.locator('#account-name').textContent(), username);
      t.ok(await whole(page, '#account-name'), `${username} is shown in full`);
      t.ok(await whole(page, '.topbar .brand-name'), 'and so is the appliance name');
      t.same(await unlabelled(page, 'header'), [], 'the header buttons keep their names when they show only icons');
      await screenshot(page, `header-1280-${username}`, false);
      t.same(session.console.errors, []);
      await page.context().close();
    }
  });

  t.test(
    'on a phone the appliance name is whole and three messages cover one strip, the newest in front',
    async (t) => {
      const phone = await signIn(browser, d.base, 'admin', d.adminPassword, PHONE, { path: '/?toastMs=600000' });
      const page = phone.page;
      phone.console.allow(/status of 400 \(Bad Request\)/);
      t.ok(await whole(page, '.topbar .brand-name'), 'the brand is not cut');
      t.equal(await page.locator('.topbar .brand-name').textContent(), 'Audio Zone Controller');
      t.ok(await whole(page, '#account-name'), 'nor is the username beside it');

      await page.getByRole('link', { name: 'Playlists' }).tap();
      await page.getByRole('button', { name: /^Sunday morning/ }).tap();
      await page.getByText('Save a copy on the appliance').tap();
      const names = ['notes.txt', '/etc/evil.m3u8', '../outside.m3u8'];
      for (const [i, name] of names.entries()) {
        await page.getByLabel('File name').fill(name);
        await page.getByLabel('File name').press('Enter');
        // The form takes no new submit while one is on its way (its button is disabled): each answer comes first.
        await page.locator('#toasts .toast').nth(i).waitFor();
      }
      const newest = page.getByRole('status').getByText('File name: must not contain a ".." segment');
      await newest.waitFor();
      t.equal(await page.locator('#toasts .toast').count(), 3, 'three messages are kept');
      t.ok(await newest.isVisible(), 'the newest one is in front, readable');
      const viewport = page.viewportSize()!;
      const covered = await page.locator('#toasts .toast').evaluateAll((els: any[]) => {
        const rects = els.map((el) => el.getBoundingClientRect());
        return Math.max(...rects.map((r) => r.bottom)) - Math.min(...rects.map((r) => r.top));
      });
      t.ok(
        covered <= viewport.height * 0.12,
        `the messages cover ${Math.round(covered)} px of ${viewport.height} (at most 12%)`,
      );
      await screenshot(page, 'toasts-phone', false);
      await page.locator('#toasts .toast').last().getByRole('button', { name: 'Dismiss message' }).tap();
      const next = page.getByRole('status').getByText('File name: must be a path relative to the export directory');
      t.ok(await next.isVisible(), 'closing the front message brings the one behind it forward');
      t.same(phone.console.errors, []);
      await page.context().close();
    },
  );

  t.test("an operator's group volume and its average count only the zones it can see", async (t) => {
    const kitchen = await createUser(api, 'kitchen-op', 'Operator', {
      playerIds: [s.players['Main streamer']!],
      zoneIds: [s.zones.Kitchen!],
    });
    const session = await signIn(browser, d.base, 'kitchen-op', kitchen.password);
    const page = session.page;
    const slider = page.getByRole('slider', { name: 'Main streamer group volume' });
    const parts = page.locator('.player-card .group-parts');
    await parts.getByText('Average of Kitchen 45%').waitFor();
    t.equal(
      await slider.getAttribute('aria-valuetext'),
      '45%',
      'the group volume is the one zone it sees, not the 35% of all three',
    );
    // Another room of the player moves: the operator's numbers stay those of its own zone.
    t.equal((await api.put(`/api/zones/${s.zones['Living room']}/volume`, { volume: 0.9 })).status, 204);
    t.equal((await api.put(`/api/zones/${s.zones.Kitchen}/volume`, { volume: 0.5 })).status, 204);
    await parts.getByText('Average of Kitchen 50%').waitFor();
    t.equal(await slider.getAttribute('aria-valuetext'), '50%');
    t.same(session.console.errors, []);
    await page.context().close();
  });
});

t.test('counts read as words: one user, one player, one track', { skip: chromiumMissing() }, async (t) => {
  const d = await startTestDaemon(t);
  const api = client(d.base, d.adminKey);
  const zones = (await api.get('/api/zones')).body as Array<{ id: string }>;
  await api.post('/api/players', { name: 'Streamer', input: { channel: 1 } });
  await api.post('/api/playlists', {
    name: 'Solo',
    tracks: [{ title: 'Only one', uri: 'file:///music/1.flac', durationMs: 60_000 }],
  });
  await api.post('/api/scenes', { name: 'Evening', zoneIds: [zones[0]!.id] });
  const dir = tempDir('azc-plural-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'backup.json');
  writeFileSync(file, (await api.get('/api/backup')).text);
  const browser = await launch(t);
  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  const page = admin.page;

  await page.getByRole('link', { name: 'Playlists' }).click();
  await page.getByRole('button', { name: /^Solo/ }).click();
  t.match(await page.getByRole('button', { name: /^Solo/ }).textContent(), /1 track\b/);
  await page.getByRole('button', { name: 'Delete playlist Solo' }).click();
  const remove = page.getByRole('dialog', { name: 'Delete Solo?' });
  t.match(await remove.locator('.dialog-desc').textContent(), /the playlist and its 1 track\./);
  await remove.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Backup file').setInputFiles(file);
  await page.getByRole('button', { name: 'Restore…' }).click();
  const confirm = page.getByRole('dialog', { name: 'Replace the configuration?' });
  t.match(
    await confirm.locator('.dialog-desc').textContent(),
    /: 1 user, 1 player, 6 zones, 6 input devices, 1 playlist, 1 scene and the settings\./,
  );
  await confirm.getByRole('button', { name: 'Replace and restore' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.match(
    await page.locator('#signin-error').textContent(),
    /\(1 user, 1 player, 6 zones, 6 input devices, 1 playlist, 1 track, 1 scene\)/,
  );
  t.same(admin.console.errors, []);
});
