// The write path's coalescing steps are switched off only by the benchmark's variable, one by one; without the group
// commit each device-state write is its own transaction, committed before commitSoon returns.

import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { ALL_COALESCING, BENCH_SWITCH, coalescingFrom } from '../../daemon/coalescing.js';
import { Store } from '../../daemon/store/db.js';
import { tempDir } from '../helpers/daemon.js';

t.test('every step is on unless the benchmark switch names it', async (t) => {
  t.same(coalescingFrom({}), ALL_COALESCING);
  t.same(coalescingFrom({ [BENCH_SWITCH]: 'commit, mqtt-state' }), {
    turn: true,
    commit: false,
    'mqtt-commands': true,
    'mqtt-state': false,
  });
});

t.test('an unknown step in the switch stops the start and names the steps there are', async (t) => {
  t.throws(
    () => coalescingFrom({ [BENCH_SWITCH]: 'turn,comit' }),
    /AZCD_BENCH_UNCOALESCED names comit; the steps are turn, commit, mqtt-commands, mqtt-state/,
  );
});

t.test('without the group commit each write is committed on its own, before commitSoon returns', async (t) => {
  const dir = tempDir('azc-coalescing-');
  const store = new Store(path.join(dir, 'azc.db'), { exclusive: false, groupCommit: false });
  store.db.exec('CREATE TABLE probe (k TEXT PRIMARY KEY, v INTEGER)');
  const observer = new Database(path.join(dir, 'azc.db'), { readonly: true });
  t.teardown(() => {
    observer.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = store.db.prepare('INSERT OR REPLACE INTO probe (k, v) VALUES (?, ?)');
  const seen = (k: string) =>
    (observer.prepare('SELECT v FROM probe WHERE k = ?').get(k) as { v: number } | undefined)?.v;
  const runs: number[] = [];
  const write = (v: number) =>
    store.commitSoon(() =>
      store.deferWrite('row', () => {
        runs.push(v);
        put.run('row', v);
      }),
    );
  const first = write(1);
  t.equal(seen('row'), 1, 'visible to another connection at once');
  const second = write(2);
  t.not(first, second, 'two commits');
  await Promise.all([first, second]);
  t.same(runs, [1, 2], 'each write ran: nothing was folded into a later one');
  t.equal(seen('row'), 2);
});
