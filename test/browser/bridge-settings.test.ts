// The Home Assistant bridge card of the Settings tab, in Debian chromium against a real daemon and a real mosquitto:
// an admin connects the bridge without a restart, mistakes are named, start-up settings cannot be edited.
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { client, createUser } from '../helpers/client.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startBroker, Watcher } from '../helpers/mosquitto.js';
import { chromiumMissing, launch, screenshot } from './browser.js';
import { signIn, unlabelled } from './session.js';

const BASE = 'azc/dashboard';

/** A browser signed in as the admin, on the Settings tab, and the bridge card there. */
async function bridgeCardOf(t: { teardown(fn: () => unknown): void }, d: TestDaemon) {
  const browser = await launch(t);
  const admin = await signIn(browser, d.base, 'admin', d.adminPassword);
  await admin.page.getByRole('link', { name: 'Settings' }).click();
  return { admin, page: admin.page, card: admin.page.getByRole('region', { name: 'Home Assistant (MQTT)' }) };
}

t.test('the bridge settings in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const broker = await startBroker(t);
  const hub = await Watcher.connect(t, broker.url);
  const d = await startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, baseTopic: BASE, reconnectMinMs: 100, reconnectMaxMs: 400 } },
  });
  const api = client(d.base, d.adminKey);
  await createUser(api, 'hub-bridge', 'Operator', {
    playerIds: [],
    zoneIds: [(await api.get('/api/zones')).body[0].id],
  });
  const { admin, page, card } = await bridgeCardOf(t, d);
  await card.getByText('Off: no broker is set.').waitFor();

  t.test('a mistake is named in words and nothing is saved', async (t) => {
    admin.console.allow(/status of 400 \(Bad Request\)/);
    await card.getByLabel('Broker URL').fill('http://broker:1883');
    await card.getByRole('button', { name: 'Save and connect' }).click();
    await card
      .getByRole('alert')
      .getByText(/^Broker URL: must look like mqtt:\/\/host:1883/)
      .waitFor();
    await card.getByLabel('Broker URL').fill(broker.url);
    await card.getByLabel('Broker password', { exact: true }).fill('lonely-password');
    await card.getByRole('button', { name: 'Save and connect' }).click();
    await card.getByRole('alert').getByText('Username: a broker password needs a broker username').waitFor();
    t.same((await api.get('/api/settings/mqtt')).body.url, null, 'nothing was saved');
    t.same(admin.console.errors, []);
  });

  t.test('an admin connects the bridge as an account it picks, and Home Assistant gets its entities', async (t) => {
    await card.getByLabel('Broker password', { exact: true }).fill('');
    await card.getByLabel('Broker URL').fill(broker.url);
    await card.getByLabel('Bridge account').selectOption('hub-bridge');
    await card.getByRole('button', { name: 'Save and connect' }).click();
    await page.getByRole('status').getByText('Bridge settings saved.').waitFor();
    await card.getByText(/^Connected$/).waitFor();
    await hub.value(`${BASE}/status`, 'online');
    await hub.until((w) => [...w.latest.keys()].some((topic) => topic.endsWith('/config')), 'a discovery config');
    t.match((await api.get('/api/settings/mqtt')).body, {
      url: broker.url,
      account: 'hub-bridge',
      status: { state: 'connected' },
    });
    t.match(await card.textContent(), new RegExp(`Topics under ${BASE}/`), 'the card says where the topics are');
    await screenshot(page, 'settings-bridge-desktop');
    t.same(await unlabelled(page), [], 'every control of the card has an accessible name');
    t.same(admin.console.errors, []);
  });
});

t.test('a broker URL given at start cannot be edited in the dashboard', { skip: chromiumMissing() }, async (t) => {
  const d = await startTestDaemon(t, {
    config: { mqtt: { ...defaultConfig().mqtt, url: 'mqtt://127.0.0.1:1', baseTopic: BASE } },
  });
  const { admin, card } = await bridgeCardOf(t, d);
  await card.getByText(/^Needs a fix: no bridge account/).waitFor();
  t.equal(await card.getByLabel('Broker URL').inputValue(), 'mqtt://127.0.0.1:1');
  t.ok(await card.getByLabel('Broker URL').isDisabled(), 'the start-up URL is shown, not editable');
  t.match(await card.getByLabel('Broker URL').getAttribute('title'), /--mqtt-url/);
  t.notOk(await card.getByLabel('Bridge account').isDisabled(), 'the account is still the dashboard’s to set');
  t.same(admin.console.errors, []);
});
