// The dashboard's speaker safety, group volume, all off, sleep timers and scenes, in a real browser.

import type { Page } from 'playwright-core';
import t from 'tap';
import type { Client } from '../helpers/client.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { seededDaemon } from './seed.js';
import { eventually, grabSlider, signIn, unlabelled } from './session.js';

interface ZoneState {
  volume: number;
  power: boolean;
  muted: boolean;
  maxVolume: number;
  turnOnVolume: number | null;
  sleepUntil: string | null;
  name: string;
}

const zone = async (api: Client, id: string): Promise<ZoneState> => (await api.get(`/api/zones/${id}`)).body;
const near = (a: number, b: number) => Math.abs(a - b) < 0.005;

/** The list item of one zone (found by its slider or meter), to read its sub line and controls. */
const zoneRow = (page: Page, name: string) =>
  page.locator('li.zone-row').filter({ has: page.locator(`[aria-label="${name} volume"]`) });

t.test('speaker safety and scenes in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const { d, api, s } = await seededDaemon(t);
  const browser = await launch(t);
  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  const page = admin.page;
  await page.getByRole('slider', { name: 'Kitchen volume' }).waitFor();

  t.test("a zone's limit is shown and a slider dragged above it ends at the limit", async (t) => {
    await api.put(`/api/zones/${s.zones.Kitchen}/volume`, { volume: 0.2 });
    t.equal((await api.put(`/api/zones/${s.zones.Kitchen}`, { maxVolume: 0.5 })).status, 200);
    await zoneRow(page, 'Kitchen').locator('.zone-sub', { hasText: 'limit 50%' }).waitFor();
    await page
      .locator('[data-limit="50"]')
      .filter({ has: page.getByRole('slider', { name: 'Kitchen volume' }) })
      .waitFor();

    const slider = page.getByRole('slider', { name: 'Kitchen volume' });
    const drag = await grabSlider(page, slider, 0.2);
    await drag.to(0.95, 12);
    await drag.release();
    t.equal(await slider.inputValue(), '50', 'the thumb stops at the limit');
    await eventually(async () => (await zone(api, s.zones.Kitchen!)).volume === 0.5, 'Kitchen is at its limit');
    await page.locator('input[aria-label="Kitchen volume"][aria-valuetext="50%"]').waitFor();
    await screenshot(page, 'zone-limit-desktop');
    t.same(admin.console.errors, []);
  });

  t.test('an admin edits the name, the limit and the turn-on volume of a zone in one dialog', async (t) => {
    await page.getByRole('button', { name: 'Edit zone Bedroom' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Bedroom' });
    await dialog.getByLabel('Name of the zone').fill('Guest room');
    await dialog.getByLabel('Volume limit (%)').fill('70');
    await dialog.getByLabel('Turn-on volume (%)').fill('20');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const bedroom = await zone(api, s.zones.Bedroom!);
    t.same([bedroom.name, bedroom.maxVolume, bedroom.turnOnVolume], ['Guest room', 0.7, 0.2]);
    await zoneRow(page, 'Guest room').locator('.zone-sub', { hasText: 'limit 70%' }).waitFor();

    await page.getByRole('button', { name: 'Edit zone Guest room' }).click();
    const again = page.getByRole('dialog', { name: 'Edit Guest room' });
    await again.getByLabel('Volume limit (%)').fill('140');
    await again.getByRole('button', { name: 'Save' }).click();
    await again.getByRole('alert').waitFor();
    t.match(await again.getByRole('alert').textContent(), /100/, 'a limit above 100% is refused in words');
    await again.getByRole('button', { name: 'Cancel' }).click();
    t.equal((await zone(api, s.zones.Bedroom!)).maxVolume, 0.7, 'the refused change changed nothing');
    t.same(admin.console.errors, []);
  });

  t.test("the group slider shows the zones' average and +/- step it on the daemon", async (t) => {
    await api.put(`/api/zones/${s.zones.Patio}/volume`, { volume: 0.6 });
    const card = page
      .locator('article.player-card')
      .filter({ has: page.getByRole('heading', { name: 'AirPlay', exact: true }) });
    await card.locator('.group-parts', { hasText: 'Average of Patio 60%' }).waitFor();
    await page.locator('input[aria-label="AirPlay group volume"][aria-valuetext="60%"]').waitFor();
    await page.getByRole('button', { name: 'Raise AirPlay group volume' }).click();
    await eventually(async () => near((await zone(api, s.zones.Patio!)).volume, 0.65), 'Patio went up by one step');
    await page.locator('input[aria-label="AirPlay group volume"][aria-valuetext="65%"]').waitFor();
    await page.getByRole('button', { name: 'Lower AirPlay group volume' }).click();
    await page.getByRole('button', { name: 'Lower AirPlay group volume' }).click();
    await eventually(async () => near((await zone(api, s.zones.Patio!)).volume, 0.55), 'Patio went down by two steps');
    await page.locator('input[aria-label="AirPlay group volume"][aria-valuetext="55%"]').waitFor();

    // Another client changes one zone: the derived group value follows live.
    await api.put(`/api/zones/${s.zones['Living room']}/volume`, { volume: 0.1 });
    await api.put(`/api/zones/${s.zones['Dining room']}/volume`, { volume: 0.1 });
    await t.resolves(
      page.locator('input[aria-label="Main streamer group volume"][aria-valuetext="23%"]').waitFor(),
      'the Main streamer shows (0.1 + 0.5 + 0.1) / 3',
    );
    t.same(admin.console.errors, []);
  });

  t.test('a sleep timer is set, shown counting down and cancelled', async (t) => {
    await api.put(`/api/zones/${s.zones['Living room']}/power`, { power: true });
    const row = zoneRow(page, 'Living room');
    const button = page.getByRole('button', { name: 'Sleep timer of Living room' });
    await page.getByRole('button', { name: 'Power Living room', pressed: true }).waitFor();
    await button.click();
    const dialog = page.getByRole('dialog', { name: 'Sleep timer of Living room' });
    await dialog.getByRole('radio', { name: 'In 30 min' }).check();
    await dialog.getByRole('button', { name: 'Set timer' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row.locator('.zone-sub', { hasText: 'sleeps in 30 min' }).waitFor();
    await page.getByRole('button', { name: 'Sleep timer of Living room', pressed: true }).waitFor();
    const until = Date.parse((await zone(api, s.zones['Living room']!)).sleepUntil ?? '');
    t.ok(
      until > Date.now() + 25 * 60_000 && until <= Date.now() + 30 * 60_000,
      'the daemon keeps a timer about 30 minutes out',
    );
    await screenshot(page, 'sleep-timer-desktop');

    await button.click();
    await dialog.getByRole('radio', { name: 'Cancel the timer' }).check();
    await dialog.getByRole('button', { name: 'Set timer' }).click();
    await dialog.waitFor({ state: 'detached' });
    await eventually(
      async () => (await zone(api, s.zones['Living room']!)).sleepUntil === null,
      'the timer is cancelled',
    );
    await row.locator('.zone-sub', { hasText: 'sleeps in' }).waitFor({ state: 'detached' });

    // A timer set elsewhere shows up live, and a zone that is off offers none.
    await api.put(`/api/zones/${s.zones['Living room']}/sleep`, { minutes: 90 });
    await row.locator('.zone-sub', { hasText: 'sleeps in 1 h 30 min' }).waitFor();
    await api.put(`/api/zones/${s.zones['Living room']}/power`, { power: false });
    await row.locator('.zone-sub', { hasText: 'sleeps in' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Power Living room', pressed: false }).waitFor();
    t.ok(await button.isDisabled(), 'no timer for a zone that is off');
    t.same(admin.console.errors, []);
  });

  t.test('All off switches off every zone that is on and says how many', async (t) => {
    for (const name of ['Living room', 'Kitchen', 'Patio'])
      await api.put(`/api/zones/${s.zones[name]}/power`, { power: true });
    const on = ((await api.get('/api/zones')).body as ZoneState[]).filter((z) => z.power).length;
    t.ok(on >= 3, `${on} zones are on`);
    await zoneRow(page, 'Patio').getByRole('button', { name: 'Power Patio', pressed: true }).waitFor();
    await page.getByRole('button', { name: 'All off' }).click();
    await page.getByRole('status').getByText(`Switched off ${on} zones.`).waitFor();
    const zones = (await api.get('/api/zones')).body as ZoneState[];
    t.same(
      zones.filter((z) => z.power),
      [],
      'every zone is off',
    );
    await page.getByRole('button', { name: 'Power Patio', pressed: false }).waitFor();
    t.same(admin.console.errors, []);
  });

  t.test('an admin saves a scene, a zone changes, the scene is applied and then undone', async (t) => {
    await api.put(`/api/zones/${s.zones.Kitchen}/power`, { power: true });
    await api.put(`/api/zones/${s.zones.Kitchen}/volume`, { volume: 0.35 });
    await api.put(`/api/zones/${s.zones.Patio}/power`, { power: true });
    await api.put(`/api/zones/${s.zones.Patio}/volume`, { volume: 0.4 });
    await page.locator('input[aria-label="Kitchen volume"][aria-valuetext="35%"]').waitFor();

    await page.getByRole('button', { name: 'Save scene' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save scene' });
    await dialog.getByLabel('Scene name').fill('Dinner');
    for (const box of await dialog.getByRole('checkbox').all()) await box.uncheck();
    await dialog.getByRole('checkbox', { name: 'Kitchen', exact: true }).check();
    await dialog.getByRole('checkbox', { name: 'Patio', exact: true }).check();
    await dialog.getByRole('button', { name: 'Save scene' }).click();
    await dialog.waitFor({ state: 'detached' });
    const scenes = (await api.get('/api/scenes')).body as Array<{
      id: string;
      name: string;
      zones: Array<{ zoneId: string }>;
    }>;
    const dinner = scenes.find((x) => x.name === 'Dinner');
    t.same(
      dinner?.zones.map((z) => z.zoneId).sort(),
      [s.zones.Kitchen, s.zones.Patio].sort(),
      'the scene captured the two chosen zones',
    );
    await page.locator('.scene-meta', { hasText: 'Kitchen 35%' }).filter({ hasText: 'Patio 40%' }).waitFor();

    await api.put(`/api/zones/${s.zones.Kitchen}/volume`, { volume: 0.1 });
    await api.put(`/api/zones/${s.zones.Patio}/power`, { power: false });
    await page.getByRole('button', { name: 'Power Patio', pressed: false }).waitFor();
    await page.getByRole('button', { name: 'Apply scene Dinner' }).click();
    await page.getByRole('status').getByText('Scene Dinner applied.').waitFor();
    let kitchen = await zone(api, s.zones.Kitchen!);
    let patio = await zone(api, s.zones.Patio!);
    t.same([kitchen.volume, patio.power, patio.volume], [0.35, true, 0.4], 'the zones are back as captured');
    await page.getByRole('button', { name: 'Power Patio', pressed: true }).waitFor();
    await page.locator('input[aria-label="Kitchen volume"][aria-valuetext="35%"]').waitFor();
    await screenshot(page, 'scenes-desktop');

    await page.getByRole('button', { name: 'Undo last scene' }).click();
    await page.getByRole('status').getByText('The zones are back as they were before the last scene.').waitFor();
    kitchen = await zone(api, s.zones.Kitchen!);
    patio = await zone(api, s.zones.Patio!);
    t.same([kitchen.volume, patio.power], [0.1, false], 'undo put back the state from before the apply');
    await page.getByRole('button', { name: 'Power Patio', pressed: false }).waitFor();
    t.same(admin.console.errors, []);
  });

  t.test('scenes are renamed and deleted, and scenes made elsewhere appear live', async (t) => {
    await page.getByRole('button', { name: 'Rename scene Dinner' }).click();
    await page.getByRole('dialog', { name: 'Rename Dinner' }).getByLabel('New name of the scene').fill('Supper');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByRole('button', { name: 'Apply scene Supper' }).waitFor();
    const created = await api.post('/api/scenes', { name: 'Patio party', zoneIds: [s.zones.Patio] });
    t.equal(created.status, 201);
    await page.getByRole('button', { name: 'Apply scene Patio party' }).waitFor();
    await page.getByRole('button', { name: 'Delete scene Supper' }).click();
    await page.getByRole('dialog', { name: 'Delete Supper?' }).getByRole('button', { name: 'Delete scene' }).click();
    await page.getByRole('button', { name: 'Apply scene Supper' }).waitFor({ state: 'detached' });
    const names = ((await api.get('/api/scenes')).body as Array<{ name: string }>).map((x) => x.name);
    t.same(names, ['Patio party'], 'Supper is gone for good');
    t.same(await unlabelled(page), [], 'every new control has an accessible name');
    t.same(admin.console.errors, []);
  });

  t.test('a viewer sees limits, timers and scenes but no control that changes them', async (t) => {
    await api.post('/api/scenes', { name: 'Kitchen only', zoneIds: [s.zones.Kitchen] });
    await api.put(`/api/zones/${s.zones.Kitchen}/power`, { power: true });
    await api.put(`/api/zones/${s.zones.Kitchen}/sleep`, { minutes: 60 });
    const viewer = await signIn(browser, d.base, s.users.viewer.username, s.users.viewer.password);
    const v = viewer.page;
    await v.getByRole('meter', { name: 'Kitchen volume' }).waitFor();
    await zoneRow(v, 'Kitchen')
      .locator('.zone-sub', { hasText: /limit 50%.*sleeps in 1 h$/ })
      .waitFor();
    await v.getByText('Kitchen only').waitFor();
    t.equal(await v.getByText('Patio party').count(), 0, 'a scene with a zone the viewer cannot see is not listed');
    const writes =
      '[data-action=all-off], [data-action=sleep], [data-action=raise], [data-action=lower], [data-action=apply-scene], [data-action=undo-scene], [data-action$=-scene], [data-action=edit-zone]';
    t.equal(await v.locator(`#main :is(${writes})`).count(), 0, 'no all off, sleep, step, scene or zone-edit controls');
    t.equal(await v.getByRole('link', { name: 'Settings' }).count(), 0, 'no Settings tab');
    t.same(await unlabelled(v), [], 'read-only values have accessible names');
    t.same(viewer.console.errors, []);
    await v.context().close();
  });

  t.test('an operator turns off only its own zones with All off', async (t) => {
    await api.put(`/api/zones/${s.zones.Patio}/power`, { power: true });
    const operator = await signIn(browser, d.base, s.users.operator.username, s.users.operator.password);
    const o = operator.page;
    await o.getByRole('button', { name: 'Power Patio', pressed: true }).waitFor();
    await o.getByRole('button', { name: 'All off' }).click();
    await o.getByRole('status').getByText('Switched off 1 zone.').waitFor();
    t.equal((await zone(api, s.zones.Patio!)).power, false, 'Patio is off');
    t.equal((await zone(api, s.zones.Kitchen!)).power, true, 'Kitchen, not assigned to the operator, stays on');
    t.same(operator.console.errors, []);
    await o.context().close();
  });
});
