// A cast's cover art on the dashboard's now-playing card, in Debian chromium against a real daemon (the real MPD, its
// own casting runtime with a stand-in AirPlay receiver that sends a PNG: test/helpers/cover-receiver.ts): the card
// shows the image, fetched with the session's token under the page's CSP, and drops it once the cast is gone.
import t from 'tap';
import { coverReceiverOf, solidPng } from '../helpers/cover-receiver.js';
import { startStreamDaemon } from '../helpers/stream-rig.js';
import { chromiumMissing, launch } from './browser.js';
import { signIn } from './session.js';

t.test("a cast's cover on the now-playing card", { skip: chromiumMissing() }, async (t) => {
  const cover = solidPng(8, [200, 40, 40]);
  const rig = await startStreamDaemon(t, {
    castingOptions: { kinds: { airplay: coverReceiverOf(cover, 'image/png') } },
  });
  const { api } = rig;
  const kitchen = await rig.fifoPlayer('Kitchen', 1);
  kitchen.reader();
  const browser = await launch(t);
  const { page, urls } = await signIn(browser, rig.d.base, 'admin', rig.d.adminPassword);
  const img = page.locator(`.player-card[data-key="${kitchen.id}"] img.np-cover`);
  t.ok(await img.isHidden(), 'no cover before a cast');

  t.equal((await api.put(`/api/players/${kitchen.id}/receivers/airplay`, { enabled: true })).status, 200);
  await img.waitFor({ state: 'visible' });
  t.equal(
    await img.evaluate((el) => (el as { naturalWidth: number }).naturalWidth),
    8,
    'the image is drawn: its CSP took it',
  );
  t.match(await img.getAttribute('src'), /^data:image\/png;base64,/, 'given as data, fetched with the token');
  // A sender without titles: the card names the receiver as the receivers API does (its `name`).
  const card = page.locator(`.player-card[data-key="${kitchen.id}"]`);
  await card.locator('.np-title').getByText('AirPlay cast', { exact: true }).waitFor();
  await card.locator('.np-by').getByText('· AirPlay', { exact: true }).waitFor();
  t.pass("the card names the cast's receiver as the API does");
  t.notOk(
    urls.some((url) => /apiKey|token=/.test(url)),
    'no credential in a URL',
  );

  t.equal((await api.put(`/api/players/${kitchen.id}/receivers/airplay`, { enabled: false })).status, 200);
  await img.waitFor({ state: 'hidden' });
});
