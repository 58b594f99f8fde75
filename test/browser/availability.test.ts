// The dashboard with zones that cannot answer: a missing unit greys its zones with the reason and disables their
// controls until it answers again; an amplifier taken out of the configuration leaves greyed zones, players and
// inputs that the Users tab still names and an admin deletes.

import { rmSync } from 'node:fs';
import type { Page } from 'playwright-core';
import t from 'tap';
import { type AmplifierConfig, amplifierKey } from '../../daemon/config.js';
import type { SimulatedDriver } from '../../drivers/simulated/index.js';
import { client, createUser } from '../helpers/client.js';
import { startDaemon, tempDir } from '../helpers/daemon.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { eventually, signIn, unlabelled } from './session.js';

const amplifier = (name: string): AmplifierConfig => ({
  name,
  key: amplifierKey(name),
  driver: 'simulated',
  port: undefined,
  options: {},
});
const GONE = 'amplifier "garage" (driver simulated) is not configured';

/** The list item of one zone, found by its volume control's name. */
const zoneRow = (page: Page, name: string) =>
  page.locator('li.zone-row').filter({ has: page.locator(`[aria-label="${name} volume"]`) });

t.test('zones that cannot answer in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const stateDir = tempDir();
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const start = (names: string[]) =>
    startDaemon({ stateDir, configuredAmplifiers: true, config: { amplifiers: names.map(amplifier) } });

  // Two amplifiers: the garage one has a radio playing in the workshop, a shed zone and its inputs.
  const first = await start(['House', 'Garage']);
  const setup = client(first.base, first.adminKey);
  const zones = (await setup.get('/api/zones')).body as Array<{
    id: string;
    output: { amplifier: string; channel: number };
  }>;
  const zoneOf = (amp: string, channel: number) =>
    zones.find((z) => z.output.amplifier === amp && z.output.channel === channel)!.id;
  const names: Array<[string, number, string]> = [
    ['House', 1, 'Kitchen'],
    ['House', 5, 'Garden'],
    ['Garage', 1, 'Workshop'],
    ['Garage', 2, 'Shed'],
  ];
  for (const [amp, channel, name] of names) await setup.put(`/api/zones/${zoneOf(amp, channel)}`, { name });
  const radio = (await setup.post('/api/players', { name: 'Garage radio', input: { amplifier: 'Garage', channel: 1 } }))
    .body;
  await setup.post(`/api/players/${radio.id}/attach-zones`, { zoneIds: [zoneOf('Garage', 1)] });
  const inputs = (await setup.get('/api/input-devices')).body as Array<{
    id: string;
    input: { amplifier: string; channel: number };
  }>;
  await setup.del(
    `/api/input-devices/${inputs.find((i) => i.input.amplifier === 'Garage' && i.input.channel === 3)!.id}`,
  );
  const garageInput = (
    await setup.post('/api/input-devices', { name: 'Garage aux', input: { amplifier: 'Garage', channel: 3 } })
  ).body;
  await createUser(setup, 'olga', 'Operator', {
    playerIds: [radio.id],
    zoneIds: [zoneOf('House', 1), zoneOf('Garage', 1)],
  });
  await setup.put(`/api/zones/${zoneOf('House', 5)}/power`, { power: true });
  await first.stop();

  // The garage amplifier is taken out of the config file.
  const d = await start(['House']);
  t.teardown(() => d.stop());
  const api = client(d.base, first.adminKey);
  const house = d.daemon.services.amplifiers.list[0]!.driver as SimulatedDriver;
  const browser = await launch(t);
  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  const page = admin.page;
  await page.getByRole('slider', { name: 'Kitchen volume' }).waitFor();

  t.test(
    'a zone whose unit stops answering is greyed with the reason, its controls disabled, and comes back by itself',
    async (t) => {
      const garden = zoneRow(page, 'Garden');
      await page.getByRole('button', { name: 'Power Garden' }).waitFor();
      t.equal(await page.getByRole('button', { name: 'Power Garden' }).isDisabled(), false);
      house.simulateUnit([5], false, 'unit 2 does not answer');
      await page
        .locator('li.zone-row.is-unavailable')
        .filter({ has: page.locator('[aria-label="Garden volume"]') })
        .waitFor();
      const reason = await garden.locator('.unavailable-reason').textContent();
      t.equal(reason, 'Unavailable: amplifier "House" (driver simulated): unit 2 does not answer');
      for (const control of ['Power Garden', 'Mute Garden', 'Sleep timer of Garden']) {
        t.equal(await page.getByRole('button', { name: control }).isDisabled(), true, `${control} is disabled`);
      }
      t.equal(await page.getByRole('slider', { name: 'Garden volume' }).isDisabled(), true, 'the slider is disabled');
      t.equal(
        await page.getByRole('button', { name: 'Delete zone Garden' }).isVisible(),
        true,
        'an admin is offered to delete it',
      );
      await screenshot(page, 'zone-unavailable-desktop');
      await page.getByRole('button', { name: 'All off' }).click();
      // The workshop (on, of the garage amplifier) is named too; the garden with its unit.
      await page
        .getByText(/^Not reached: .*Garden \(amplifier "House" \(driver simulated\): unit 2 does not answer\)/)
        .waitFor();
      t.equal(
        (await api.get(`/api/zones/${zoneOf('House', 5)}`)).body.power,
        true,
        'All off left the zone it could not reach as it was',
      );

      house.simulateUnit([5], true);
      await page
        .locator('li.zone-row:not(.is-unavailable)')
        .filter({ has: page.locator('[aria-label="Garden volume"]') })
        .waitFor();
      t.equal(await garden.locator('.unavailable-reason').isHidden(), true, 'the reason is gone');
      t.equal(await page.getByRole('button', { name: 'Power Garden' }).isDisabled(), false, 'the controls work again');
      t.same(admin.console.errors, []);
    },
  );

  t.test('zones and the player of an amplifier that is gone are greyed with the reason', async (t) => {
    const card = page
      .locator('article.player-card')
      .filter({ has: page.getByRole('heading', { name: 'Garage radio' }) });
    await card.locator('.badge', { hasText: 'Unavailable' }).waitFor();
    t.equal(await card.locator('.unavailable-reason').first().textContent(), `Unavailable: ${GONE}`);
    t.equal(
      await page.getByRole('slider', { name: 'Garage radio group volume' }).isDisabled(),
      true,
      'no group volume',
    );
    t.equal(await card.locator('form.attach').isHidden(), true, 'nothing to attach');
    t.match(await zoneRow(page, 'Workshop').getAttribute('class'), /is-unavailable/);
    t.match(await zoneRow(page, 'Shed').getAttribute('class'), /is-unavailable/);
    t.equal(await zoneRow(page, 'Shed').locator('.unavailable-reason').textContent(), `Unavailable: ${GONE}`);
    const options = await page.locator('[data-action="attach-select"] option').allTextContents();
    t.notOk(options.includes('Shed'), 'a zone that cannot answer is not offered for attaching');
    t.same(await unlabelled(page), [], 'every control still has an accessible name');
    await screenshot(page, 'unconfigured-amplifier-desktop');
    t.same(admin.console.errors, []);
  });

  t.test('the Users tab names assignments of such players and zones, marked unavailable', async (t) => {
    await page.getByRole('link', { name: 'Users' }).click();
    const olga = page.locator('li.user-card').filter({ has: page.getByRole('heading', { name: 'olga' }) });
    await olga.locator('.access-summary', { hasText: 'Garage radio (unavailable)' }).waitFor();
    const summary = (await olga.locator('.access-summary').textContent()) ?? '';
    t.match(summary, /^1 player \(Garage radio \(unavailable\)\); 2 zones \(/);
    const zoneNames = /2 zones \((.*)\)$/.exec(summary)?.[1]?.split(', ').sort();
    t.same(zoneNames, ['Kitchen', 'Workshop (unavailable)'], 'a zone that answers is named plainly');
    await page.getByRole('link', { name: 'Players' }).click();
    t.same(admin.console.errors, []);
  });

  t.test('an admin deletes a zone, the player and an input of the amplifier that is gone', async (t) => {
    await page.getByRole('button', { name: 'Delete zone Workshop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Workshop?' });
    await dialog.getByText(GONE).waitFor();
    await dialog.getByRole('button', { name: 'Delete zone' }).click();
    await zoneRow(page, 'Workshop').waitFor({ state: 'detached' });
    t.equal((await api.get(`/api/zones/${zoneOf('Garage', 1)}`)).status, 404);

    await page.getByRole('button', { name: 'Delete player Garage radio' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Garage radio?' })
      .getByRole('button', { name: 'Delete player' })
      .click();
    await page
      .locator('article.player-card')
      .filter({ has: page.getByRole('heading', { name: 'Garage radio' }) })
      .waitFor({ state: 'detached' });
    t.equal((await api.get(`/api/players/${radio.id}`)).status, 404);

    await page.getByRole('link', { name: 'Inputs' }).click();
    const card = page
      .locator('li.input-card.is-unavailable')
      .filter({ has: page.getByRole('heading', { name: 'Garage aux' }) });
    await card.locator('.unavailable-reason', { hasText: GONE }).waitFor();
    t.equal(
      await page.locator('li.input-card:not(.is-unavailable) [data-action="delete-input"]:visible').count(),
      0,
      'inputs that answer offer no delete',
    );
    await screenshot(page, 'inputs-unconfigured-desktop');
    await page.getByRole('button', { name: 'Delete input Garage aux' }).click();
    await page
      .getByRole('dialog', { name: 'Delete Garage aux?' })
      .getByRole('button', { name: 'Delete input' })
      .click();
    await card.waitFor({ state: 'detached' });
    await eventually(
      async () => (await api.get(`/api/input-devices/${garageInput.id}`)).status === 404,
      'the input is deleted',
    );
    t.same(admin.console.errors, []);
  });
});
