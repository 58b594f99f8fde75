// The dashboard in a real browser (Debian chromium via playwright-core) against a real in-process daemon.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { type Client, client } from '../helpers/client.js';
import { chromiumMissing, launch, screenshot, watchConsole } from './browser.js';
import { seededDaemon } from './seed.js';
import { eventually, grabSlider, PHONE, signIn, unlabelled } from './session.js';

// Page globals inside evaluate() callbacks: the project compiles without the DOM lib.
declare const sessionStorage: { getItem(key: string): string | null; length: number };
declare const document: any;

const trackTitles = async (api: Client, id: string): Promise<string[]> =>
  ((await api.get(`/api/playlists/${id}`)).body.tracks as Array<{ title: string }>).map((track) => track.title);

t.test('the dashboard in a real browser', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);

  const signinContext = await browser.context();
  const signinPage = await signinContext.newPage();
  await signinPage.goto(`${d.base}/`);
  await signinPage.getByRole('heading', { name: 'Sign in' }).waitFor();
  await screenshot(signinPage, 'signin-desktop');

  t.test('a wrong password is refused in words and nothing is stored', async (t) => {
    const watch = watchConsole(signinPage);
    watch.allow(/status of 401/);
    await signinPage.getByLabel('Username').fill('admin');
    await signinPage.getByLabel('Password', { exact: true }).fill('not-the-password');
    await signinPage.getByRole('button', { name: 'Sign in' }).click();
    await signinPage.getByRole('alert').getByText('Wrong username or password, or the account is disabled.').waitFor();
    t.equal(await signinPage.evaluate(() => sessionStorage.length), 0);
    t.same(watch.errors, []);
    await signinContext.close();
  });

  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  const page = admin.page;

  t.test('an admin signs in with username and password and sees who is signed in', async (t) => {
    await page.getByRole('slider', { name: 'Main streamer group volume' }).waitFor();
    t.equal(await page.locator('#account-name').textContent(), 'admin');
    t.equal(await page.locator('#account-role').textContent(), 'Admin');
    const stored = JSON.parse((await page.evaluate(() => sessionStorage.getItem('azc.session'))) ?? '{}') as {
      token?: string;
    };
    t.match(stored.token, /^sst_/, 'the session token is kept in sessionStorage');
    t.notOk(
      admin.urls.some((url) => url.includes('sst_') || /apikey=/i.test(url)),
      'no URL carries a token or key',
    );
    const streamRequest = admin.urls.find((url) => url.includes('/api/stream/events'));
    t.equal(streamRequest, `${d.base}/api/stream/events`, 'the event stream is opened without a query string');
    await screenshot(page, 'players-desktop');
    t.same(await unlabelled(page), [], 'every control on the Players view has an accessible name');
    t.same(admin.console.errors, [], 'no console errors (CSP included)');
  });

  t.test('dragging the group volume reaches the API with one request in flight at a time', async (t) => {
    const playerId = s.players['Main streamer']!;
    const slider = page.getByRole('slider', { name: 'Main streamer group volume' });
    let inFlight = 0;
    let maxInFlight = 0;
    let requests = 0;
    const isVolume = (url: string, method: string) =>
      method === 'PUT' && url.endsWith(`/api/players/${playerId}/volume`);
    page.on('request', (r) => {
      if (!isVolume(r.url(), r.method())) return;
      requests++;
      maxInFlight = Math.max(maxInFlight, ++inFlight);
    });
    const done = (r: { url(): string; method(): string }) => {
      if (isVolume(r.url(), r.method())) inFlight--;
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);

    const started = Date.now();
    const drag = await grabSlider(page, slider, 0.3);
    // Not so far that a zone would reach 100 %: then its clamp would pull the derived group value below the slider.
    await drag.to(0.65, 30);
    await drag.release();
    const elapsed = Date.now() - started;
    const final = Number(await slider.inputValue()) / 100;
    t.ok(final > 0.5, `the slider moved (now ${final})`);
    await eventually(
      async () => Math.abs((await api.get(`/api/players/${playerId}`)).body.volume - final) < 0.005,
      `the player volume is ${final}`,
    );
    await eventually(async () => inFlight === 0, 'the last request finished');
    t.equal(maxInFlight, 1, 'never more than one volume request in flight');
    // The slider starts a request at most every MIN_GAP_MS; read from the module the page runs, not copied here.
    const minGapMs = await page.evaluate(
      async () => (await import('/js/latest-sender.js' as string)).MIN_GAP_MS as number,
    );
    const ceiling = Math.floor(elapsed / minGapMs) + 2;
    t.ok(
      requests >= 1 && requests <= ceiling,
      `drag steps were throttled: ${requests} requests for 30 moves in ${elapsed} ms (at most ${ceiling})`,
    );
    const zone = (await api.get(`/api/zones/${s.zones.Kitchen}`)).body;
    const living = (await api.get(`/api/zones/${s.zones['Living room']}`)).body;
    t.ok(
      Math.abs(zone.volume / living.volume - 0.45 / 0.3) < 0.01,
      'the attached zones followed the group volume and kept their balance',
    );
    await page
      .locator(`input[aria-label="Kitchen volume"][aria-valuetext="${Math.round(zone.volume * 100)}%"]`)
      .waitFor();
    t.same(admin.console.errors, []);
  });

  t.test('changes made by another client appear live', async (t) => {
    await api.put(`/api/zones/${s.zones.Patio}/mute`, { muted: true });
    await page.getByRole('button', { name: 'Mute Patio', pressed: true }).waitFor();
    await api.put(`/api/players/${s.players.AirPlay}/volume`, { volume: 0.42 });
    await page.locator('input[aria-label="AirPlay group volume"][aria-valuetext="42%"]').waitFor();
    await api.post(`/api/players/${s.players.Turntable}/attach-zones`, { zoneIds: [s.zones.Office] });
    await page.getByRole('button', { name: 'Remove Office from Turntable' }).waitFor();
    await api.put(`/api/zones/${s.zones.Patio}/mute`, { muted: false });
    await t.resolves(
      page.getByRole('button', { name: 'Mute Patio', pressed: false }).waitFor(),
      'mute, volume and routing changes from the API showed up without a reload',
    );
    t.same(admin.console.errors, []);
  });

  t.test('a live event does not yank a slider the user is dragging', async (t) => {
    const slider = page.getByRole('slider', { name: 'Living room volume' });
    const drag = await grabSlider(page, slider, 0.5);
    await drag.to(0.2, 5);
    const held = await slider.inputValue();
    await api.put(`/api/zones/${s.zones['Living room']}/volume`, { volume: 0.95 });
    // Events arrive in order: once this later one shows, the volume event has been handled too.
    await api.put(`/api/zones/${s.zones.Patio}/power`, { power: false });
    await page.getByRole('button', { name: 'Power Patio', pressed: false }).waitFor();
    t.equal(await slider.inputValue(), held, 'the slider stays under the pointer');
    await drag.release();
    await eventually(
      async () => (await api.get(`/api/zones/${s.zones['Living room']}`)).body.volume === Number(held) / 100,
      'the released value wins',
    );
    await page.locator(`input[aria-label="Living room volume"][aria-valuetext="${held}%"]`).waitFor();
    t.same(admin.console.errors, []);
  });

  t.test('a change seen while the dragged value is on its way does not outlast the hand that lets go', async (t) => {
    const zoneId = s.zones['Living room']!;
    const volume = async () => (await api.get(`/api/zones/${zoneId}`)).body.volume as number;
    const slider = page.getByRole('slider', { name: 'Living room volume' });
    // Grabbed where the thumb is, so that pressing sends nothing and the one move is the one request.
    await api.put(`/api/zones/${zoneId}/volume`, { volume: 0.5 });
    await page.locator('input[aria-label="Living room volume"][aria-valuetext="50%"]').waitFor();
    // The value reaches the daemon at once, but its answer comes back only after another client's change has been
    // seen: the order a busy machine can give.
    const sent: unknown[] = [];
    let answer!: () => void;
    const changeSeen = new Promise<void>((resolve) => (answer = resolve));
    const address = `**/api/zones/${zoneId}/volume`;
    await page.route(address, async (route) => {
      sent.push(route.request().postDataJSON());
      const response = await route.fetch();
      await changeSeen;
      await route.fulfill({ response });
    });
    const finished = page.waitForEvent('requestfinished', {
      predicate: (r) => r.url().endsWith(`/api/zones/${zoneId}/volume`),
      timeout: 0,
    });
    const drag = await grabSlider(page, slider, 0.5);
    await drag.to(0.3, 1);
    const held = await slider.inputValue();
    await eventually(async () => (await volume()) === Number(held) / 100, 'the dragged value reached the daemon');
    t.equal(sent.length, 1, 'one request for the one move');
    await api.put(`/api/zones/${zoneId}/volume`, { volume: 0.9 });
    await api.put(`/api/zones/${s.zones.Patio}/power`, { power: true });
    await page.getByRole('button', { name: 'Power Patio', pressed: true }).waitFor();
    answer();
    await finished;
    await drag.release();
    await eventually(async () => (await volume()) === Number(held) / 100, 'the released value wins');
    await page.locator(`input[aria-label="Living room volume"][aria-valuetext="${held}%"]`).waitFor();
    await page.unroute(address);
    t.same(admin.console.errors, []);
  });

  t.test('mute, power and attach from the page reach the API', async (t) => {
    await page.getByRole('button', { name: 'Mute Kitchen' }).click();
    await eventually(
      async () => (await api.get(`/api/zones/${s.zones.Kitchen}`)).body.muted === true,
      'Kitchen is muted',
    );
    await page.getByLabel('Zone to add to AirPlay').selectOption({ label: 'Bedroom' });
    await page.getByRole('button', { name: 'Add the chosen zone to AirPlay' }).click();
    await eventually(
      async () => (await api.get(`/api/players/${s.players.AirPlay}`)).body.zoneIds.includes(s.zones.Bedroom),
      'Bedroom plays AirPlay',
    );
    await page.getByRole('slider', { name: 'Bedroom volume' }).fill('25');
    await eventually(
      async () => (await api.get(`/api/zones/${s.zones.Bedroom}`)).body.volume === 0.25,
      'Bedroom is at 25%',
    );
    t.same(admin.console.errors, []);
  });

  t.test('an admin creates and deletes players, zones and playlists', async (t) => {
    await page.getByRole('button', { name: 'New player' }).click();
    const dialog = page.getByRole('dialog', { name: 'New player' });
    await dialog.getByLabel('Name').fill('Kitchen radio');
    await dialog.getByLabel('Amplifier input').selectOption({ label: 'Input 3 · TV' });
    await dialog.getByRole('button', { name: 'Create player' }).click();
    await page.getByRole('heading', { name: 'Kitchen radio', exact: true }).waitFor();
    const players = (await api.get('/api/players')).body as Array<{
      id: string;
      name: string;
      input: { channel: number };
    }>;
    const radio = players.find((p) => p.name === 'Kitchen radio');
    t.equal(radio?.input.channel, 3, 'the player feeds input 3');
    await page.getByRole('button', { name: 'Rename player Kitchen radio' }).click();
    await page.getByRole('dialog', { name: 'Rename Kitchen radio' }).getByLabel('New name of the player').fill('Radio');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByRole('heading', { name: 'Radio', exact: true }).waitFor();
    t.equal((await api.get(`/api/players/${radio!.id}`)).body.name, 'Radio', 'the player is renamed');
    await page.getByRole('button', { name: 'Delete player Radio' }).click();
    await page.getByRole('dialog', { name: 'Delete Radio?' }).getByRole('button', { name: 'Delete player' }).click();
    await page.getByRole('heading', { name: 'Radio', exact: true }).waitFor({ state: 'detached' });
    t.equal((await api.get(`/api/players/${radio!.id}`)).status, 404, 'the player is gone');

    await page.getByRole('button', { name: 'Remove Office from Turntable' }).click();
    await page.getByRole('button', { name: 'Delete zone Office' }).click();
    await page.getByRole('dialog', { name: 'Delete Office?' }).getByRole('button', { name: 'Delete zone' }).click();
    await eventually(async () => (await api.get(`/api/zones/${s.zones.Office}`)).status === 404, 'the zone is gone');
    await page.getByRole('button', { name: 'New zone' }).click();
    const zoneDialog = page.getByRole('dialog', { name: 'New zone' });
    await zoneDialog.getByLabel('Name').fill('Study');
    await zoneDialog.getByLabel('Amplifier output').selectOption({ label: 'Output 5' });
    await zoneDialog.getByRole('button', { name: 'Create zone' }).click();
    await page.getByRole('slider', { name: 'Study volume' }).waitFor();
    const zones = (await api.get('/api/zones')).body as Array<{ name: string; output: { channel: number } }>;
    t.equal(zones.find((z) => z.name === 'Study')?.output.channel, 5, 'the zone uses output 5');
    await page.getByRole('button', { name: 'Edit zone Bedroom' }).click();
    await page.getByLabel('Name of the zone').fill('Guest room');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('slider', { name: 'Guest room volume' }).waitFor();
    t.equal((await api.get(`/api/zones/${s.zones.Bedroom}`)).body.name, 'Guest room', 'the zone is renamed');

    await page.getByRole('link', { name: 'Playlists' }).click();
    await page.getByRole('button', { name: 'New playlist' }).click();
    await page.getByRole('dialog', { name: 'New playlist' }).getByLabel('Name').fill('Road trip');
    await page.getByRole('button', { name: 'Create playlist' }).click();
    await page.getByRole('heading', { name: 'Road trip', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete playlist Road trip' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Road trip?' })
      .getByRole('button', { name: 'Delete playlist' })
      .click();
    await page.getByRole('heading', { name: 'Road trip', exact: true }).waitFor({ state: 'detached' });
    const names = ((await api.get('/api/playlists')).body as Array<{ name: string }>).map((p) => p.name);
    t.notOk(names.includes('Road trip'), 'the playlist is gone');
    await page.getByRole('link', { name: 'Players' }).click();
    t.same(admin.console.errors, []);
  });

  t.test('playlist tracks are reordered by drag and drop and by keyboard', async (t) => {
    const id = s.playlists['Sunday morning']!;
    await page.getByRole('link', { name: 'Playlists' }).click();
    await page.getByRole('button', { name: /^Sunday morning/ }).click();
    await page.getByRole('heading', { name: 'Sunday morning' }).waitFor();
    const rows = page.locator('.tracks > li');
    await rows.nth(2).dragTo(rows.nth(0), { targetPosition: { x: 60, y: 3 } });
    await eventually(async () => (await trackTitles(api, id))[0] === 'Pink Moon', 'Pink Moon is first');
    t.same(
      await trackTitles(api, id),
      ['Pink Moon', 'Harvest Moon', 'River Man', 'Cherry Wine', 'Holocene'],
      'drag and drop moved one track',
    );

    const down = page.getByRole('button', { name: 'Move Harvest Moon down' });
    await down.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    t.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? null),
      'Move Harvest Moon down',
      'focus follows the moved track',
    );
    const expected = ['Pink Moon', 'River Man', 'Cherry Wine', 'Harvest Moon', 'Holocene'];
    await eventually(
      async () => JSON.stringify(await trackTitles(api, id)) === JSON.stringify(expected),
      'two keyboard moves applied in order',
    );
    await page.locator('.tracks > li').nth(3).getByText('Harvest Moon').waitFor();

    await page.getByRole('button', { name: 'Remove Holocene' }).click();
    await eventually(async () => !(await trackTitles(api, id)).includes('Holocene'), 'Holocene is removed');
    await page.getByLabel('Title').fill('Northern Sky');
    await page.getByLabel('Location (URI)').fill('file:///music/11.flac');
    await page.getByLabel('Length').fill('3:45');
    await page.getByRole('button', { name: 'Add track' }).click();
    await eventually(async () => (await trackTitles(api, id)).at(-1) === 'Northern Sky', 'the new track is last');

    await page.getByRole('button', { name: 'Favorite', exact: true }).click();
    await eventually(
      async () => (await api.get(`/api/playlists/${id}`)).body.isFavorite === true,
      'the playlist is a favorite',
    );
    // A refused request shows the server's problem detail in the status region.
    admin.console.allow(/status of 400 \(Bad Request\).*\/export/);
    await page.getByText('Save a copy on the appliance').click();
    await page.getByLabel('File name').fill('../outside.m3u8');
    await page.getByRole('button', { name: 'Save on appliance' }).click();
    await page.getByRole('status').getByText('File name: must not contain a ".." segment').waitFor();
    // Other messages (the confirmations of what the earlier steps created) may still show: dismiss this one.
    await page
      .getByRole('status')
      .locator('.toast', { hasText: 'File name: must not contain' })
      .getByRole('button', { name: 'Dismiss message' })
      .click();
    await page.getByLabel('File name').fill('rooms/sunday.m3u8');
    await page.getByRole('button', { name: 'Save on appliance' }).click();
    await page.getByRole('status').getByText('Saved Sunday morning on the appliance as rooms/sunday.m3u8').waitFor();
    const exported = path.join(d.stateDir, 'exports', 'rooms', 'sunday.m3u8');
    t.ok(existsSync(exported), 'the export file exists');
    t.match(
      readFileSync(exported, 'utf8'),
      /^#EXTM3U\n(#PLAYLIST:Sunday morning\n)?#EXTINF:124,Pink Moon\nfile:\/\/\/music\/3\.flac\n/,
      'the file is extended M3U in the new order',
    );
    await page
      .getByRole('status')
      .locator('.toast', { hasText: 'Saved Sunday morning' })
      .getByRole('button', { name: 'Dismiss message' })
      .click();
    await screenshot(page, 'playlists-desktop');
    t.same(await unlabelled(page), [], 'every control on the Playlists view has an accessible name');
    t.same(admin.console.errors, []);
  });

  t.test('inputs are listed and can be marked favorite', async (t) => {
    await page.getByRole('link', { name: 'Inputs' }).click();
    await page.getByRole('button', { name: 'Favorite Turntable', pressed: false }).click();
    await eventually(
      async () => (await api.get(`/api/input-devices/${s.inputs.Turntable}`)).body.isFavorite === true,
      'Turntable is a favorite',
    );
    await page.getByRole('button', { name: 'Favorite Turntable', pressed: true }).waitFor();
    await screenshot(page, 'inputs-desktop');
    t.same(await unlabelled(page), [], 'every control on the Inputs view has an accessible name');
    t.same(admin.console.errors, []);
  });

  t.test('the Users tab regenerates a key: the old key gets 401, the new one works', async (t) => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'home-hub' }).waitFor();
    await screenshot(page, 'users-desktop');
    t.same(await unlabelled(page), [], 'every control on the Users view has an accessible name');
    const oldKey = s.users.hub.apiKey;
    t.equal((await client(d.base, oldKey).get('/api/players')).status, 200, 'the old key works before');

    await page.getByRole('button', { name: 'Regenerate API key of home-hub' }).click();
    const confirm = page.getByRole('dialog', { name: 'Regenerate the API key of home-hub?' });
    await confirm.getByText(/old key stops working at once/).waitFor();
    await screenshot(page, 'users-regenerate-dialog', false);
    await confirm.getByRole('button', { name: 'Regenerate key' }).click();
    const shown = page.getByRole('dialog', { name: 'New API key of home-hub' });
    const newKey = await shown.getByLabel('API key').inputValue();
    t.match(newKey, /^svc_[0-9a-f]{48}$/);
    t.not(newKey, oldKey);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard').waitFor();
    await shown.getByRole('button', { name: 'Done' }).click();

    t.equal((await client(d.base, oldKey).get('/api/players')).status, 401, 'the old key is rejected at once');
    t.equal((await client(d.base, newKey).get('/api/players')).status, 200, 'the new key works');
    await page.getByRole('button', { name: 'Show API key of home-hub' }).click();
    t.equal(await page.getByRole('dialog', { name: 'API key of home-hub' }).getByLabel('API key').inputValue(), newKey);
    await page.getByRole('button', { name: 'Done' }).click();
    t.same(admin.console.errors, []);
  });

  t.test('an admin creates a user, edits its access, role, password and key, then deletes it', async (t) => {
    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('dialog', { name: 'New user' });
    await form.getByLabel('Username').fill('kiosk');
    await form.getByLabel('Password', { exact: true }).fill('kiosk-password-1');
    await form.getByLabel('Role').selectOption('Viewer');
    await form.getByRole('button', { name: 'Create user' }).click();
    const key = await page.getByRole('dialog', { name: 'API key of kiosk' }).getByLabel('API key').inputValue();
    t.match(key, /^svc_[0-9a-f]{48}$/, 'the new key is shown once in full');
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Edit access of kiosk' }).click();
    const access = page.getByRole('dialog', { name: 'Access of kiosk' });
    await access.getByRole('checkbox', { name: 'AirPlay', exact: true }).check();
    await access.getByRole('checkbox', { name: /^Patio/ }).check();
    await access.getByRole('button', { name: 'Save access' }).click();
    await access.waitFor({ state: 'detached' });
    const kiosk = (
      (await api.get('/api/users')).body as Array<{ username: string; id: string; assignments: unknown }>
    ).find((u) => u.username === 'kiosk')!;
    t.same(kiosk.assignments, { playerIds: [s.players.AirPlay], zoneIds: [s.zones.Patio] });

    await page.getByLabel('Role of kiosk').selectOption('Operator');
    await eventually(
      async () => (await api.get(`/api/users/${kiosk.id}`)).body.role === 'Operator',
      'kiosk is an Operator',
    );
    await page.getByRole('switch', { name: 'Enabled of kiosk' }).uncheck();
    await eventually(
      async () => (await api.get(`/api/users/${kiosk.id}`)).body.isEnabled === false,
      'kiosk is disabled',
    );

    await page.getByRole('button', { name: 'Set password of kiosk' }).click();
    const password = page.getByRole('dialog', { name: 'Set the password of kiosk' });
    await password.getByLabel('New password').fill('another-password-2');
    await password.getByLabel('Repeat the password').fill('another-password-2');
    await password.getByRole('button', { name: 'Set password' }).click();
    await password.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Revoke API key of kiosk' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke the API key of kiosk?' })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    t.equal((await client(d.base, key).get('/api/players')).status, 401, 'the revoked key stops working');
    await page
      .getByRole('heading', { name: 'kiosk', exact: true })
      .locator('xpath=ancestor::li')
      .getByText('No key (revoked)')
      .waitFor();
    await page.getByRole('button', { name: 'Delete kiosk' }).click();
    await page.getByRole('dialog', { name: 'Delete kiosk?' }).getByRole('button', { name: 'Delete user' }).click();
    await page.getByRole('heading', { name: 'kiosk', exact: true }).waitFor({ state: 'detached' });
    t.equal((await api.get(`/api/users/${kiosk.id}`)).status, 404, 'the user is deleted');
    t.same(admin.console.errors, []);
  });

  t.test('a Viewer sees values but no control that changes state', async (t) => {
    const viewer = await signIn(browser, d.base, s.users.viewer.username, s.users.viewer.password);
    const v = viewer.page;
    await v.getByRole('meter', { name: 'Main streamer group volume' }).waitFor();
    t.equal(await v.locator('#account-role').textContent(), 'Viewer');
    t.equal(await v.locator('input[type=range]').count(), 0, 'no sliders');
    const controls =
      '[data-action=power], [data-action=mute], [data-action=attach], [data-action=attach-select], [data-action=detach], [data-action^=delete], [data-action^=new]';
    t.equal(
      await v.locator(`#main :is(${controls})`).count(),
      0,
      'no volume, mute, power, attach, create or delete controls',
    );
    t.equal(await v.getByRole('link', { name: 'Users' }).count(), 0, 'no Users tab');
    t.match(
      await v.getByRole('meter', { name: 'Kitchen volume' }).getAttribute('aria-valuetext'),
      /^\d+%$/,
      'values are shown read-only',
    );
    await screenshot(v, 'players-viewer-desktop');
    t.same(await unlabelled(v), [], 'read-only values have accessible names too');

    await v.getByRole('link', { name: 'Playlists' }).click();
    await v.getByRole('heading', { name: 'Dinner party' }).first().waitFor();
    const editing =
      '[draggable=true], [data-action^=move], [data-action=remove-track], [data-action^=new], [data-action^=delete], [data-action=favorite], form';
    t.equal(await v.locator(`#main :is(${editing})`).count(), 0, 'playlists are read-only');
    await v.getByRole('link', { name: 'Inputs' }).click();
    await v.getByText('Turntable').first().waitFor();
    t.equal(await v.locator('#view-inputs button').count(), 0, 'inputs are read-only: no buttons at all');
    t.same(viewer.console.errors, []);
    await v.context().close();
  });

  t.test('a 401 (here: the user was disabled) sends the page back to sign-in', async (t) => {
    const operator = await signIn(browser, d.base, s.users.operator.username, s.users.operator.password);
    const o = operator.page;
    await o.getByRole('slider', { name: 'AirPlay group volume' }).waitFor();
    t.equal(
      await o.locator('#view-players :is([data-action^=new], [data-action^=delete])').count(),
      0,
      'an Operator cannot create or delete players and zones',
    );
    t.equal(await o.getByRole('link', { name: 'Users' }).count(), 0, 'no Users tab for an Operator');
    // The reconnect after the server closed the stream gets the 401 that signs the page out.
    operator.console.allow(/status of 401/);
    operator.console.allow(/ERR_INVALID_CHUNKED_ENCODING/); // asserted separately below
    await api.put(`/api/users/${s.users.operator.id}`, { isEnabled: false });
    await o.getByText('Your session has ended. Please sign in again.').waitFor();
    t.equal(await o.evaluate(() => sessionStorage.getItem('azc.session')), null, 'the token is forgotten');
    t.same(operator.console.errors, []);
    // Was broken by res.end('', true) in daemon/http/sse.ts (uWS then writes a header into the chunked body).
    t.same(
      operator.console.tolerated.filter((e) => /CHUNKED/.test(e)),
      [],
      'the server ends the revoked stream with valid chunked framing',
    );
    await o.context().close();
  });

  t.test('the dashboard works on a phone', async (t) => {
    const phone = await signIn(browser, d.base, 'admin', d.adminPassword, PHONE);
    const p = phone.page;
    await p.getByRole('slider', { name: 'Main streamer group volume' }).waitFor();
    await screenshot(p, 'players-phone', false);
    for (const tab of ['Playlists', 'Inputs', 'Users']) {
      await p.getByRole('link', { name: tab }).tap();
      await p.getByRole('heading', { name: tab, level: 1 }).waitFor();
      await screenshot(p, `${tab.toLowerCase()}-phone`, false);
    }
    t.same(phone.console.errors, []);
    await p.context().close();
  });

  t.test('signing out returns to the sign-in form and forgets the token', async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    t.equal(await page.evaluate(() => sessionStorage.length), 0);
    t.same(admin.console.errors, []);
    await page.context().close();
  });
});
