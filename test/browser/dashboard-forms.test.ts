// The dashboard's forms and feedback in a real browser: refusals said in the dashboard's words, the announcement
// dialog's sound picker, what a player with no zones or at 0% shows, the New player and New zone dialogs, the zone
// dialog's turn-on volume and renaming an input. Desktop and phone sizes where the layout differs.

import { randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { musicFolder, TRACKS } from '../helpers/mpd-rig.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { WAIT_MS } from '../helpers/wait-for.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { seededDaemon } from './seed.js';
import { eventually, PHONE, settle, share, signIn } from './session.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
/** Messages stay until dismissed, so a check never races their timer. */
const STAY = { path: '/?toastMs=600000' };
/** The dialog's own message (a picker inside it has one of its own). */
const dialogError = (dialog: Locator) => dialog.locator('form.dialog-form > .form-error');
const card = (page: Page, playerId: string) => page.locator(`.player-card[data-key="${playerId}"]`);
const toastText = (page: Page, text: string | RegExp) => page.locator('#toasts .toast-text', { hasText: text });

t.test('forms and feedback on a simulated appliance', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);
  const desktop = await signIn(browser, d.base, 'admin', d.adminPassword, {}, STAY);
  const phone = await signIn(browser, d.base, 'admin', d.adminPassword, PHONE, STAY);
  const refusals = /status of (400|409)/;
  desktop.console.allow(refusals);
  phone.console.allow(refusals);
  const step = (name: string, fn: (t: Test) => Promise<void>) =>
    t.test(name, async (t) => {
      t.teardown(() => Promise.all([settle(desktop.page), settle(phone.page)]));
      await fn(t);
    });

  step(
    'a player without zones shows no group volume and says no rooms are attached, on a desktop and a phone',
    async (t) => {
      for (const [size, { page }] of [
        ['desktop', desktop],
        ['phone', phone],
      ] as const) {
        const turntable = card(page, s.players.Turntable!);
        await turntable.getByText('No rooms attached').waitFor();
        t.ok(
          await turntable.getByRole('slider', { name: 'Turntable group volume' }).isHidden(),
          `${size}: no group slider`,
        );
        t.ok(
          await card(page, s.players.AirPlay!).getByRole('slider', { name: 'AirPlay group volume' }).isVisible(),
          `${size}: a player with a zone has one`,
        );
      }
      await card(phone.page, s.players.Turntable!).scrollIntoViewIfNeeded();
      await screenshot(phone.page, 'forms-no-zones-phone', false);
    },
  );

  step('a player whose zones are on at 0% reads Silent, not Playing', async (t) => {
    const badge = card(desktop.page, s.players.AirPlay!).locator('.badge');
    await badge.getByText('Playing', { exact: true }).waitFor();
    await api.put(`/api/zones/${s.zones.Patio}/volume`, { volume: 0 });
    await badge.getByText('Silent', { exact: true }).waitFor();
    t.match(await badge.getAttribute('title'), /volume 0%/, 'the badge says why');
    t.ok(await desktop.page.getByText('Output 4 · silent at 0%').isVisible(), 'so does the zone');
    await api.put(`/api/zones/${s.zones.Patio}/volume`, { volume: 0.6 });
    await t.resolves(badge.getByText('Playing', { exact: true }).waitFor(), 'and Playing once it can be heard');
  });

  step(
    'the New player dialog names a default-named input once, asks for a device only for a stream player, and confirms',
    async (t) => {
      const page = desktop.page;
      await api.del(`/api/input-devices/${s.inputs['Front aux']}`);
      await api.post('/api/input-devices', { name: 'Input 5', kind: 'line-in', input: { channel: 5 } });
      await page.getByRole('button', { name: 'New player' }).click();
      const dialog = page.getByRole('dialog', { name: 'New player' });
      await dialog.getByLabel('Amplifier input').waitFor();
      const inputs = await dialog.getByLabel('Amplifier input').locator('option').allTextContents();
      t.ok(inputs.includes('Input 5'), `the input named after its number reads "Input 5" (${inputs.join(', ')})`);
      t.notOk(
        inputs.some((label) => /Input 5 · Input 5/.test(label)),
        'not twice',
      );
      t.ok(inputs.includes('Input 3 · TV'), 'a named input keeps its name');
      const device = dialog.getByLabel('ALSA device or FIFO path');
      t.ok(await device.isHidden(), 'a device wired to the input has no device field');
      await dialog
        .getByLabel('What plays into it')
        .selectOption({ label: 'This appliance, through a sound card (ALSA)' });
      await device.waitFor();
      await dialog.getByLabel('What plays into it').selectOption({ label: 'A device wired to the input' });
      await device.waitFor({ state: 'hidden' });
      await dialog.getByLabel('Name').fill('Radio');
      await dialog.getByLabel('Amplifier input').selectOption({ label: 'Input 5' });
      await dialog.getByRole('button', { name: 'Create player' }).click();
      await toastText(page, 'Player Radio created on input 5').waitFor();
      await dialog.waitFor({ state: 'detached' });
      const radio = (
        (await api.get('/api/players')).body as Array<{ name: string; input: { channel: number }; output: unknown }>
      ).find((p) => p.name === 'Radio');
      t.match(radio, { input: { channel: 5 }, output: null }, 'a player wired to input 5');
      t.same(desktop.console.errors, []);
    },
  );

  step('refusals of the New player dialog are said in the dashboard words: no ids, no JSON', async (t) => {
    const page = desktop.page;
    const before = (await api.get('/api/players')).body.length as number;
    await page.getByRole('button', { name: 'New player' }).click();
    const dialog = page.getByRole('dialog', { name: 'New player' });
    await dialog.getByLabel('Name').fill('Den');
    await dialog.getByLabel('Amplifier input').selectOption({ label: 'Input 3 · TV' });
    // Someone else takes input 3 while the dialog is open: the daemon's 409 names that player by name and id.
    t.equal((await api.post('/api/players', { name: 'Projector', input: { channel: 3 } })).status, 201);
    await dialog.getByRole('button', { name: 'Create player' }).click();
    const error = dialogError(dialog);
    await error.waitFor();
    const taken = (await error.textContent())!;
    t.match(taken, /already feeds player "Projector"/, `the conflict names the player: ${taken}`);
    t.notMatch(taken, UUID, 'and shows no id');

    await dialog.getByLabel('Amplifier input').selectOption({ label: 'Input 6 · Bluetooth' });
    await dialog
      .getByLabel('What plays into it')
      .selectOption({ label: 'This appliance, into a FIFO (for another program)' });
    await dialog.getByRole('button', { name: 'Create player' }).click();
    await error.getByText('What plays into it: a FIFO needs its absolute path').waitFor();
    t.notMatch((await error.textContent())!, /[{}|]|device \| path/, 'no API shape in it');
    t.equal((await api.get('/api/players')).body.length, before + 1, 'only the other client made a player');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    t.same(desktop.console.errors, []);
  });

  step(
    'a turn-on volume above the limit is refused in the zone dialog, naming the limit, and nothing is stored',
    async (t) => {
      const page = desktop.page;
      await page.getByRole('button', { name: 'Edit zone Kitchen' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit Kitchen' });
      await dialog.getByLabel('Volume limit (%)').fill('40');
      await dialog.getByLabel('Turn-on volume (%)').fill('80');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialogError(dialog).getByText('Turn-on volume: must be at most the volume limit, 40%').waitFor();
      t.match(
        (await api.get(`/api/zones/${s.zones.Kitchen}`)).body,
        { maxVolume: 1, turnOnVolume: null },
        'the zone is as it was',
      );
      await dialog.getByLabel('Turn-on volume (%)').fill('30');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      t.match(
        (await api.get(`/api/zones/${s.zones.Kitchen}`)).body,
        { maxVolume: 0.4, turnOnVolume: 0.3 },
        'within the limit it is saved',
      );
    },
  );

  step(
    'New zone offers the outputs that have no zone, and says so when there is none, on a desktop and a phone',
    async (t) => {
      for (const [size, { page }] of [
        ['desktop', desktop],
        ['phone', phone],
      ] as const) {
        await page.getByRole('button', { name: 'New zone' }).click();
        const none = page.getByRole('dialog', { name: 'New zone' });
        await none.getByText('Every amplifier output already has a zone').waitFor();
        t.equal(await none.getByLabel('Amplifier output').count(), 0, `${size}: nothing to choose from`);
        await none.getByRole('button', { name: 'Close' }).click();
        await none.waitFor({ state: 'detached' });
      }
      await api.del(`/api/zones/${s.zones.Office}`);
      for (const [size, { page }, name] of [
        ['desktop', desktop, 'Study'],
        ['phone', phone, 'Nursery'],
      ] as const) {
        await page.getByRole('button', { name: 'New zone' }).click();
        const dialog = page.getByRole('dialog', { name: 'New zone' });
        // The dialog opens once the free outputs are read.
        await dialog.getByLabel('Amplifier output').waitFor();
        t.same(
          await dialog.getByLabel('Amplifier output').locator('option').allTextContents(),
          ['Output 5'],
          `${size}: the free output is offered`,
        );
        if (size === 'phone') await screenshot(page, 'forms-new-zone-phone', false);
        await dialog.getByLabel('Name').fill(name);
        await dialog.getByRole('button', { name: 'Create zone' }).click();
        await toastText(page, `Zone ${name} created on output 5`).waitFor();
        const zone = (
          (await api.get('/api/zones')).body as Array<{ id: string; name: string; output: { channel: number } }>
        ).find((z) => z.name === name);
        t.equal(zone?.output.channel, 5, `${size}: the zone uses output 5`);
        await api.del(`/api/zones/${zone!.id}`);
      }
    },
  );

  step('an admin renames an input from the Inputs view, and every page shows the new name', async (t) => {
    const page = desktop.page;
    await page.getByRole('link', { name: 'Inputs' }).click();
    await page.getByRole('button', { name: 'Rename input TV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rename TV' });
    await dialog.getByLabel('Name of the input').fill('Television');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Television', exact: true }).waitFor();
    t.match(
      (await api.get(`/api/input-devices/${s.inputs.TV}`)).body,
      { name: 'Television', kind: 'optical', isFavorite: true },
      'stored; kind and favorite kept',
    );
    await phone.page.getByRole('link', { name: 'Inputs' }).click();
    await phone.page.getByRole('heading', { name: 'Television', exact: true }).waitFor();
    t.ok(
      await phone.page.getByRole('button', { name: 'Rename input Television' }).isVisible(),
      'the phone offers renaming too',
    );
    await page.getByRole('link', { name: 'Players' }).click();
    await phone.page.getByRole('link', { name: 'Players' }).click();
    t.same(desktop.console.errors, []);
  });

  step('the announcement library says in the dashboard words that a stream player is needed', async (t) => {
    const page = desktop.page;
    await page.getByRole('button', { name: 'Announce' }).click();
    const dialog = page.getByRole('dialog', { name: 'Announce' });
    await dialog.getByText('Choose from the music library').click();
    const error = dialog.locator('.sound-picker .form-error');
    await error.getByText('create one first').waitFor();
    const words = (await error.textContent())!;
    t.match(words, /New player/, `it names the dashboard's place: ${words}`);
    t.notMatch(words, /\/api\/|POST/, 'not an API address');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    t.same(desktop.console.errors, []);
    t.same(phone.console.errors, []);
  });

  step('refusals carrying API words, ids or addresses read as sentences for people', async (t) => {
    // Three real refusals, as the API words them. A backup whose only admin exists on no appliance here, restored without secrets: nobody could sign in after it.
    const doc = (await api.get('/api/backup')).body as { users: Array<{ id: string; username: string; role: string }> };
    for (const user of doc.users.filter((u) => u.role === 'Admin'))
      Object.assign(user, { id: randomUUID(), username: `${user.username}-elsewhere` });
    const restore = await api.post('/api/restore', { backup: doc });
    t.equal(restore.status, 409, 'a restore no admin could sign in after is refused');
    t.match(restore.body.detail, /POST \/api\/backup/, 'the API names its address');
    const play = await api.post(`/api/players/${s.players.AirPlay}/play`, { playlistId: 'Sunday morning' });
    t.equal(play.status, 400);
    const zone = await api.post('/api/zones', { name: 'Twice', output: { channel: 1 } });
    t.match(zone.body.detail, UUID, 'the API names the zone by id');
    const words = await desktop.page.evaluate(
      async (problems) => {
        const { problemText } = await import('/js/problem-text.js' as string);
        return problems.map((problem: unknown) => problemText(problem) as string);
      },
      [restore.body, play.body, zone.body],
    );
    t.match(
      words[0],
      /make the backup with a passphrase \(Settings, Backup\) and restore it with that passphrase/,
      words[0],
    );
    t.equal(
      words[1],
      'Playlist: that item is no longer on the appliance. Reload the page and choose again',
      'a field that takes an id',
    );
    t.equal(words[2], 'Output 1 already belongs to zone "Living room"', 'a conflict names the zone, not its id');
    for (const said of words) t.notMatch(said, /\/api\/|[{}`]|[0-9a-f]{8}-[0-9a-f]{4}/, `no API words in: ${said}`);
  });
});

t.test('the announcement dialog and the play button of a stream player', { skip: chromiumMissing() }, async (t) => {
  const music = musicFolder(t);
  const rig = await startStreamDaemon(t, { music });
  const { api } = rig;
  const lounge = await rig.fifoPlayer('Lounge stream', 1);
  lounge.reader();
  const zones = (await api.get('/api/zones')).body as Array<{ id: string; name: string }>;
  await api.post(`/api/players/${lounge.id}/attach-zones`, { zoneIds: [zones[0]!.id] });
  const browser = await launch(t);
  // The desktop tests below share one signed-in admin page and leave it as they found it; the phone has its own.
  const desktop = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, {}, STAY);

  t.test('Play on a player that never played says its queue is empty and what to do', async (t) => {
    const { page, console } = share(t, desktop);
    await page.getByRole('button', { name: 'Play Lounge stream' }).click();
    await toastText(
      page,
      'Nothing to play on Lounge stream: its queue is empty. Open Playlists and play a playlist on it first.',
    ).waitFor();
    t.equal((await api.get(`/api/players/${lounge.id}/playback`)).body.state, 'stopped', 'nothing started');
    t.same(console.errors, []);
  });

  for (const size of ['desktop', 'phone'] as const) {
    t.test(
      `a mistyped sound is refused and the dialog keeps its choices and offers the library (${size})`,
      async (t) => {
        const { page, console } =
          size === 'desktop'
            ? share(t, desktop)
            : await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword, PHONE, STAY);
        console.allow(/status of 400/);
        await page.getByRole('button', { name: 'Announce' }).click();
        const dialog = page.getByRole('dialog', { name: 'Announce' });
        const sound = dialog.getByLabel('Sound (URI)');
        await sound.fill('file:tones/aa.flac');
        await dialog.getByLabel(zones[0]!.name, { exact: true }).check();
        await dialog.getByLabel('Volume (%)').fill('25');
        const answer = page.waitForResponse(
          (res) => res.url().endsWith('/api/announcements') && res.request().method() === 'POST',
        );
        await dialog.getByRole('button', { name: 'Announce' }).click();
        t.equal((await answer).status(), 400, 'the daemon refuses a file that is not there');
        const error = dialogError(dialog);
        await error.waitFor();
        const words = (await error.textContent())!;
        t.match(
          words,
          /^The sound is not a file in the music folder: check its name, or pick one from the library/,
          `the reason is shown: ${words}`,
        );
        t.notMatch(words, /\/api\//, 'in the dashboard words');
        t.equal(await sound.getAttribute('aria-invalid'), 'true', 'the sound field is marked');
        t.equal(await sound.inputValue(), 'file:tones/aa.flac', 'the sound typed is kept');
        t.ok(await dialog.getByLabel(zones[0]!.name, { exact: true }).isChecked(), 'the zone stays chosen');
        t.equal(await dialog.getByLabel('Volume (%)').inputValue(), '25', 'the volume stays');

        const picker = dialog.getByRole('list', { name: 'Sounds in the music folder' });
        await picker.getByRole('button', { name: 'tones' }).click();
        await picker.getByRole('button', { name: 'a.flac' }).waitFor();
        await dialog.getByRole('button', { name: 'Up one folder' }).click();
        await picker.getByRole('button', { name: 'long' }).waitFor();
        await picker.getByRole('button', { name: 'tones' }).click();
        await picker.getByRole('button', { name: 'a.flac' }).click();
        t.equal(await sound.inputValue(), `file:${TRACKS.a}`, 'the file picked fills the field');
        if (size === 'phone') await screenshot(page, 'forms-announce-phone', false);
        const queued = page.waitForResponse(
          (res) => res.url().endsWith('/api/announcements') && res.request().method() === 'POST',
        );
        await dialog.getByRole('button', { name: 'Announce' }).click();
        t.equal((await queued).status(), 202, 'and is played');
        await dialog.waitFor({ state: 'detached' });
        await page.locator('.announce-status[data-status="done"]').waitFor({ timeout: WAIT_MS });
        await eventually(
          async () => (await api.get('/api/announcements')).body.length === 0,
          'the announcement to be over',
        );
        t.same(console.errors, []);
      },
    );
  }
});
