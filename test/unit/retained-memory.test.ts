// The bridge's record of the retained topics it left on a broker, kept in a real store while a restore holds that
// store: nothing is published that could not be recorded, and clears acknowledged meanwhile are recorded after.

import { rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultConfig } from '../../daemon/config.js';
import { resolveBridgeOptions } from '../../daemon/mqtt/options.js';
import { StatePublisher } from '../../daemon/mqtt/publisher.js';
import { Topics } from '../../daemon/mqtt/topics.js';
import { type BridgeView, EMPTY_VIEW } from '../../daemon/mqtt/view.js';
import { BridgeRepo } from '../../daemon/store/bridge-repo.js';
import { Store, StoreBusyError } from '../../daemon/store/db.js';
import { MetaRepo } from '../../daemon/store/meta-repo.js';
import { tempDir } from '../helpers/daemon.js';

const BROKER = 'mqtt://127.0.0.1:1883';
const UDN = 'uuid:0f0e0d0c-0b0a-4908-8706-050403020100';

interface Sent {
  topic: string;
  payload: string;
  done?: (delivered: boolean) => void;
}

function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = tempDir('azc-retained-');
  const store = new Store(path.join(dir, 'azc.db'));
  t.teardown(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const repo = new BridgeRepo(new MetaRepo(store.db));
  const options = resolveBridgeOptions(
    { ...defaultConfig().mqtt, url: BROKER, account: 'hub' },
    { udn: UDN, friendlyName: 'Test', version: '0', dashboardUrl: 'http://127.0.0.1/' },
  );
  const topics = new Topics(options.baseTopic, options.discoveryPrefix);
  const sent: Sent[] = [];
  // The memory as the daemon wires it (app.ts): one row per broker, written in a transaction.
  const memory = {
    load: () => repo.retained(BROKER),
    save: (held: ReadonlySet<string>) => store.transaction(() => repo.setRetained(BROKER, held)),
  };
  const publisher = new StatePublisher(
    topics,
    options,
    (topic, payload, _qos, done) => sent.push({ topic, payload, done }),
    memory,
  );
  return { store, repo, topics, sent, publisher };
}

/** A view with one amplifier and nothing else: its link sensor, its status and the all-off button. */
const withAmplifier: BridgeView = {
  ...EMPTY_VIEW,
  account: true,
  amplifiers: [{ key: 'den', name: 'Den', driver: 'simulated', online: true }],
};
const withoutAmplifier: BridgeView = { ...EMPTY_VIEW, account: true };

t.test(
  'while a restore holds the store, new topics are neither published nor recorded, and the next sync does both',
  async (t) => {
    const { store, repo, topics, sent, publisher } = setup(t);
    store.beginLong();
    t.throws(
      () => publisher.sync(withAmplifier),
      { message: new StoreBusyError().message },
      'the sync fails as the store refuses the record',
    );
    t.same(sent, [], 'nothing went to the broker unrecorded');
    await store.rollbackLong();
    t.same(repo.retained(BROKER), [], 'and nothing was recorded');

    t.ok(publisher.sync(withAmplifier) > 0, 'once the store is free the sync publishes');
    t.ok(repo.retained(BROKER).includes(topics.amplifier('den')), 'what it publishes is recorded');
    // The bridge's own status is published by the bridge (on connect, and as its last will), and recorded here too.
    t.same(
      new Set(repo.retained(BROKER)),
      new Set([topics.availability, ...sent.map((m) => m.topic)]),
      'every topic sent, and only those',
    );
  },
);

t.test('a clear acknowledged while a restore holds the store is recorded once the store is free', async (t) => {
  const { store, repo, topics, sent, publisher } = setup(t);
  publisher.sync(withAmplifier);
  const gone = topics.amplifier('den');
  sent.length = 0;
  publisher.sync(withoutAmplifier);
  const clears = sent.filter((m) => m.payload === '');
  t.ok(
    clears.some((m) => m.topic === gone),
    "the amplifier's topics are cleared",
  );

  store.beginLong();
  for (const clear of clears) clear.done?.(true);
  await new Promise((resolve) => setImmediate(resolve));
  await store.rollbackLong();
  t.ok(
    repo.retained(BROKER).includes(gone),
    'the store could not take the change: the cleared topic is still recorded',
  );

  sent.length = 0;
  publisher.sync(withoutAmplifier);
  t.notOk(repo.retained(BROKER).includes(gone), 'the next sync records that it is gone');
  t.notOk(
    sent.some((m) => m.topic === gone),
    'without clearing it again',
  );
});
